// X-Request-Id, end to end on every database: the client's id goes to the
// upstream (the emulator records it), comes back on the answer, lands on the
// consume log row and in /api/log (list, search, export); an absent or
// hostile id is replaced by one the gateway makes; every answer carries one
// (console API, 404s, probes, the relay's fast path and its Fastify routes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSaneRequestId } from '../../server/plugins/requestId';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startRelayHarness, type RelayHarness } from './relay/harness';

const chat = { model: 'gpt-4', messages: [{ role: 'user', content: 'hello there' }] };
const targets = await databaseTargets('request ids', { besideSqlite: 'mysql' });

for (const target of targets) {
  describe.runIf(target.available)(`request ids on ${target.name}`, () => {
    let database: TestDatabase | undefined;
    let harness: RelayHarness;

    beforeAll(async () => {
      database = target.name === 'sqlite' ? undefined : await target.create();
      harness = await startRelayHarness(database?.config);
      await harness.addChannel({ name: 'emu', key: 'sk-good' });
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    const logRowOf = async (requestId: string) => {
      await harness.settled();
      return harness.app.ctx.db.selectFrom('logs').selectAll().where('request_id', '=', requestId).execute();
    };

    it("takes the client's id: sent upstream, returned, stored on the consume log and shown by /api/log", async () => {
      const id = `client-${target.name}-0b6a1f2e-5d1c-4a8e-9c7f-3e2d1c0b9a87`;
      const response = await harness.post('/v1/chat/completions', chat, undefined, { 'x-request-id': id });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe(id);
      await response.json();
      const upstream = harness.emulator.requests.at(-1)!;
      expect(upstream.headers['x-request-id']).toBe(id);

      const rows = await logRowOf(id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ model_name: 'gpt-4', type: 2 });

      const list = await harness.admin('GET', '/api/log/?type=2&page_size=100');
      expect(list.data.find((log: { request_id: string | null }) => log.request_id === id)).toMatchObject({
        model_name: 'gpt-4',
        request_id: id,
      });
      const own = await harness.admin('GET', '/api/log/self?type=2&page_size=100');
      expect(own.data.some((log: { request_id: string | null }) => log.request_id === id)).toBe(true);
      const search = await harness.admin('GET', '/api/log/search?keyword=model');
      expect(search.data.some((log: { request_id: string | null }) => log.request_id === id)).toBe(true);
      const csv = await harness.app.inject({
        method: 'GET',
        url: '/api/log/export?type=2',
        headers: { cookie: await rootCookie(harness) },
      });
      const header = csv.body.split('\r\n')[0].split(',');
      const column = header.indexOf('request_id');
      expect(column).toBeGreaterThan(0);
      expect(csv.body.split('\r\n').some((line) => line.split(',')[column] === id)).toBe(true);
    });

    it('streams carry it too, and the stream is logged under it', async () => {
      const id = `stream-${target.name}`;
      const response = await harness.post('/v1/chat/completions', { ...chat, stream: true }, undefined, { 'x-request-id': id });
      expect(response.headers.get('x-request-id')).toBe(id);
      expect(await response.text()).toContain('[DONE]');
      expect(harness.emulator.requests.at(-1)!.headers['x-request-id']).toBe(id);
      const rows = await logRowOf(id);
      expect(rows.map((row) => Number(row.is_stream))).toEqual([1]);
    });

    it('makes one when the client sent none, and that one is sent upstream and logged', async () => {
      const response = await harness.post('/v1/chat/completions', chat);
      const made = response.headers.get('x-request-id');
      expect(made).toBeTruthy();
      expect(isSaneRequestId(made)).toBe(true);
      await response.json();
      expect(harness.emulator.requests.at(-1)!.headers['x-request-id']).toBe(made);
      expect(await logRowOf(made!)).toHaveLength(1);
      // two requests never share a made id
      const next = await harness.post('/v1/chat/completions', chat);
      await next.json();
      expect(next.headers.get('x-request-id')).not.toBe(made);
    });

    it('replaces hostile ids (too long, spaces, quotes, line breaks, sent twice) with one of its own', async () => {
      const hostile = ['a'.repeat(129), 'has space', 'quote"d', '<script>', 'semi;colon', 'ünïcode', ''];
      for (const id of hostile) {
        const response = await harness.post('/v1/chat/completions', chat, undefined, { 'x-request-id': id });
        await response.json();
        const answered = response.headers.get('x-request-id')!;
        expect(answered, JSON.stringify(id)).not.toBe(id);
        expect(isSaneRequestId(answered)).toBe(true);
        expect(harness.emulator.requests.at(-1)!.headers['x-request-id']).toBe(answered);
        expect(await logRowOf(answered)).toHaveLength(1);
      }
      // a header sent twice reaches Node joined with a comma: replaced as well
      const twice = await harness.app.inject({ method: 'GET', url: '/api/status', headers: { 'x-request-id': ['one', 'two'] } });
      expect(twice.headers['x-request-id']).not.toMatch(/one|two/);
      // a line break never gets as far as the gateway (Node refuses the header), and an id is never reflected raw
      expect(isSaneRequestId('line\nbreak')).toBe(false);
    });

    it('is on every answer: the console API, a 404, a relay error, the probes, an upstream failure message', async () => {
      const status = await fetch(`${harness.baseUrl}/api/status`, { headers: { 'x-request-id': 'api-call-1' } });
      expect(status.headers.get('x-request-id')).toBe('api-call-1');
      const missing = await fetch(`${harness.baseUrl}/api/nothing-here`);
      expect(missing.status).toBe(404);
      expect(isSaneRequestId(missing.headers.get('x-request-id'))).toBe(true);
      const page = await fetch(`${harness.baseUrl}/some/console/page`, { headers: { 'x-request-id': 'page-1' } });
      expect(page.headers.get('x-request-id')).toBe('page-1');
      const refused = await harness.post('/v1/chat/completions', chat, 'sk-not-a-key', { 'x-request-id': 'refused-1' });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-request-id')).toBe('refused-1');
      const health = await fetch(`${harness.baseUrl}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
      expect(health.headers.get('x-request-id')).toBe('probe-1');
      // a Fastify relay route (multipart, off the fast path) as well
      const form = new FormData();
      form.set('model', 'whisper-1');
      form.set('file', new Blob([Buffer.from('RIFF....WAVE')], { type: 'audio/wav' }), 'clip.wav');
      const upload = await fetch(`${harness.baseUrl}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${harness.apiKey}`, 'x-request-id': 'upload-1' },
        body: form,
      });
      expect(upload.headers.get('x-request-id')).toBe('upload-1');

      // the id the client sent is the one an upstream failure names, so support can find the log line
      await harness.app.ctx.db.deleteFrom('abilities').execute();
      await harness.app.ctx.db.deleteFrom('channels').execute();
      await harness.addChannel({ name: 'broken', key: 'sk-down' });
      const failed = await harness.post('/v1/chat/completions', chat, undefined, { 'x-request-id': 'failing-1' });
      const error = ((await failed.json()) as { error: { message: string } }).error;
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(error.message).toContain('(request id failing-1)');
    });
  });
}

async function rootCookie(harness: RelayHarness): Promise<string> {
  const { login, ROOT_PASSWORD } = await import('../support/app');
  return login(harness.app, 'root', ROOT_PASSWORD);
}
