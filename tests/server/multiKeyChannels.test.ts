// Multi-key channels: one channel holding many keys, calls spread over the
// live ones, a dead key set aside alone (the channel only with its last), the
// health pass bringing keys back, and keys never whole in any answer; on
// SQLite, PostgreSQL and MySQL. The upstream is a small OpenAI-shaped server
// whose dead keys the tests choose, and which quotes a refused key back (as
// OpenAI does), so the scrubbing is tested too.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runHealthPass } from '../../server/channels/channelHealth';
import { channelJobsSettled } from '../../server/channels/channelJobs';
import { channelJobDepsOf } from '../../server/plugins/backgroundJobs';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('multi_key_channels', { besideSqlite: 'mysql' });

/** Keys long enough to be masked to their ends: `sk-` and a word, padded. */
const keyOf = (word: string) => `sk-${word}-${'x'.repeat(24)}-${word}`;

interface KeyedUpstream {
  url: string;
  /** The key of each chat call, in order. */
  seen: string[];
  /** Keys answered with 401 invalid_api_key. */
  dead: Set<string>;
  /** What a live key's answer says. */
  reply: { text: string };
  close(): Promise<void>;
}

async function startKeyedUpstream(): Promise<KeyedUpstream> {
  const seen: string[] = [];
  const dead = new Set<string>();
  const reply = { text: 'hello' };
  const server: Server = createServer((request, response) => {
    const key = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    request.resume();
    request.on('end', () => {
      seen.push(key);
      response.setHeader('content-type', 'application/json');
      if (dead.has(key)) {
        response.statusCode = 401;
        response.end(
          JSON.stringify({
            error: { message: `Incorrect API key provided: ${key}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
          }),
        );
        return;
      }
      response.end(
        JSON.stringify({
          id: 'chatcmpl-keyed',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'gpt-4',
          choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    dead,
    reply,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

for (const target of targets) {
  describe.runIf(target.available)(`multi-key channels on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let upstream: KeyedUpstream;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      upstream = await startKeyedUpstream();
    });
    afterAll(async () => {
      await harness?.close();
      await upstream?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      await resetRelay(harness);
      await harness.app.ctx.db.deleteFrom('channel_keys').execute();
      await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      await harness.app.ctx.options.set('ChannelDisableThreshold', '0');
      upstream.seen.length = 0;
      upstream.dead.clear();
      upstream.reply.text = 'hello';
    });

    const createPool = async (keys: string[], fields: Record<string, unknown> = {}) => {
      const created = await harness.admin('POST', '/api/channel/', {
        name: 'pool',
        type: 8,
        base_url: upstream.url,
        models: 'gpt-4',
        group: 'default',
        key: keys.join('\n'),
        multi_key: true,
        ...fields,
      });
      expect(created).toMatchObject({ success: true });
      expect(created.data.ids).toHaveLength(1);
      return created.data.ids[0] as number;
    };
    const chat = () => harness.post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] });
    const keysOf = async (channelId: number) => {
      const answer = await harness.admin('GET', `/api/channel/${channelId}/keys`);
      expect(answer.success).toBe(true);
      return answer.data as Array<{
        id: number;
        key: string;
        status: number;
        last_error: string;
        used_count: number;
        failed_count: number;
        last_used_at: number;
      }>;
    };
    const channelState = async (channelId: number) => {
      const row = await harness.app.ctx.db
        .selectFrom('channels')
        .select(['status', 'auto_disabled'])
        .where('id', '=', channelId)
        .executeTakeFirstOrThrow();
      return { status: Number(row.status), autoDisabled: Number(row.auto_disabled) };
    };

    it('creates one channel holding N keys with multi_key, and one channel per key without it', async () => {
      const keys = [keyOf('one'), keyOf('two'), keyOf('three')];
      const id = await createPool(keys, { key: ` ${keys[0]}\n\n${keys[1]}\n${keys[2]}\n${keys[0]}\n` });
      const channel = await harness.admin('GET', `/api/channel/${id}`);
      expect(channel.data).toMatchObject({ name: 'pool', key: '', multi_key: true, key_strategy: 'random', status: 1 });
      const listed = await keysOf(id);
      expect(listed.map((key) => [key.key, key.status])).toEqual([
        ['sk-****-one', 1],
        ['sk-****-two', 1],
        ['sk-****hree', 1],
      ]);
      const stored = await harness.app.ctx.db.selectFrom('channel_keys').select('key').where('channel_id', '=', id).orderBy('id').execute();
      expect(stored.map((row) => row.key)).toEqual(keys);

      // one-api's wire: the same body without multi_key is one channel per key
      const batch = await harness.admin('POST', '/api/channel/', {
        name: 'batch',
        type: 8,
        base_url: upstream.url,
        models: 'gpt-4',
        key: keys.join('\n'),
      });
      expect(batch.data.ids).toHaveLength(3);
      const batchRow = await harness.app.ctx.db
        .selectFrom('channels')
        .select(['key', 'multi_key'])
        .where('id', '=', batch.data.ids[1])
        .executeTakeFirstOrThrow();
      expect({ key: batchRow.key, multi_key: Number(batchRow.multi_key) }).toEqual({ key: keys[1], multi_key: 0 });
    });

    it('spreads calls over the keys: in turn with round_robin, both at random', async () => {
      const [first, second] = [keyOf('alpha'), keyOf('beta')];
      const turns = await createPool([first, second], { key_strategy: 'round_robin' });
      for (let call = 0; call < 4; call += 1) expect((await chat()).status).toBe(200);
      const [a, b] = upstream.seen;
      expect(new Set([a, b])).toEqual(new Set([first, second]));
      expect(upstream.seen).toEqual([a, b, a, b]);
      expect((await keysOf(turns)).map((key) => [key.used_count, key.failed_count])).toEqual([
        [2, 0],
        [2, 0],
      ]);
      expect((await keysOf(turns)).every((key) => key.last_used_at > 0)).toBe(true);

      await harness.admin('PUT', '/api/channel/', { id: turns, status: 2 });
      upstream.seen.length = 0;
      await createPool([first, second]);
      for (let call = 0; call < 24; call += 1) expect((await chat()).status).toBe(200);
      expect(upstream.seen.filter((key) => key === first).length).toBeGreaterThan(0);
      expect(upstream.seen.filter((key) => key === second).length).toBeGreaterThan(0);
    });

    it('a 401 on one key sets that key aside alone, and the next call succeeds on the other', async () => {
      const [good, bad] = [keyOf('good'), keyOf('bad')];
      upstream.dead.add(bad);
      const id = await createPool([bad, good], { key_strategy: 'round_robin' });
      // in turn from the first key: whichever comes first, within two calls the dead one is hit
      const statuses = [(await chat()).status, (await chat()).status];
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      const keys = await keysOf(id);
      expect(keys.map((key) => key.status)).toEqual([3, 1]);
      expect(keys[0].last_error).toContain('Incorrect API key provided');
      expect(keys[0].last_error).not.toContain(bad);
      expect(keys[0].failed_count).toBe(1);
      expect(await channelState(id)).toEqual({ status: 1, autoDisabled: 0 });
      upstream.seen.length = 0;
      for (let call = 0; call < 3; call += 1) expect((await chat()).status).toBe(200);
      expect(upstream.seen).toEqual([good, good, good]);
    });

    it('with retries, a request whose key dies is answered by another key of the same channel', async () => {
      await harness.app.ctx.options.set('RetryTimes', '1');
      const [good, bad] = [keyOf('retry-good'), keyOf('retry-bad')];
      upstream.dead.add(bad);
      const id = await createPool([bad, good], { key_strategy: 'round_robin' });
      for (let call = 0; call < 3; call += 1) expect((await chat()).status).toBe(200);
      expect(upstream.seen.filter((key) => key === bad)).toHaveLength(1);
      expect((await keysOf(id)).map((key) => key.status)).toEqual([3, 1]);
    });

    it('disables the channel when its last key dies, and the health pass brings a key and the channel back', async () => {
      const [one, two] = [keyOf('dead-one'), keyOf('dead-two')];
      upstream.dead.add(one);
      upstream.dead.add(two);
      const id = await createPool([one, two]);
      expect((await chat()).status).not.toBe(200);
      expect(await channelState(id)).toEqual({ status: 1, autoDisabled: 0 });
      expect((await chat()).status).not.toBe(200);
      expect((await keysOf(id)).map((key) => key.status)).toEqual([3, 3]);
      expect(await channelState(id)).toEqual({ status: 2, autoDisabled: 1 });
      const abilities = await harness.app.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', '=', id).execute();
      expect(abilities.map((row) => Number(row.enabled))).toEqual([0]);
      // a key an admin disabled is never brought back by the system
      const admins = await harness.admin('POST', `/api/channel/${id}/keys`, { keys: keyOf('admin-off') });
      expect(admins.data).toEqual({ added: 1, skipped: 0 });
      const adminKey = (await keysOf(id))[2];
      expect((await harness.admin('PUT', `/api/channel/${id}/keys/${adminKey.id}`, { status: 2 })).data).toMatchObject({
        id: adminKey.id,
        status: 2,
      });

      upstream.dead.delete(two);
      const keyIds = (await keysOf(id)).map((key) => key.id);
      const pass = await runHealthPass(channelJobDepsOf(harness.app));
      expect(pass).toMatchObject({ keysTested: [keyIds[0], keyIds[1]], keysReenabled: [keyIds[1]], reenabled: [id] });
      expect((await keysOf(id)).map((key) => [key.status, key.last_error === ''])).toEqual([
        [3, false],
        [1, true],
        [2, true],
      ]);
      expect(await channelState(id)).toEqual({ status: 1, autoDisabled: 0 });
      upstream.seen.length = 0;
      expect((await chat()).status).toBe(200);
      expect(upstream.seen).toEqual([two]);
    });

    it('adds, disables, enables, tests and deletes single keys, and never answers with a whole key', async () => {
      const [first, second, third] = [keyOf('first'), keyOf('second'), keyOf('third')];
      const id = await createPool([first]);
      const answers: unknown[] = [];
      const admin = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => {
        const answer = await harness.admin(method, url, payload);
        answers.push(answer);
        return answer;
      };
      // an uploaded file's text: a JSON array, one already held
      expect((await admin('POST', `/api/channel/${id}/keys`, { keys: JSON.stringify([second, first, third]) })).data).toEqual({
        added: 2,
        skipped: 1,
      });
      const keys = await keysOf(id);
      answers.push(keys);
      expect(keys).toHaveLength(3);
      await admin('PUT', `/api/channel/${id}/keys/${keys[0].id}`, { status: 2 });
      await admin('PUT', `/api/channel/${id}/keys/${keys[2].id}`, { status: 2 });
      for (let call = 0; call < 3; call += 1) expect((await chat()).status).toBe(200);
      expect(new Set(upstream.seen)).toEqual(new Set([second]));
      expect((await admin('PUT', `/api/channel/${id}/keys/${keys[0].id}`, { status: 1 })).data.status).toBe(1);

      upstream.dead.add(third);
      const passed = await admin('GET', `/api/channel/${id}/keys/${keys[0].id}/test`);
      expect(passed).toMatchObject({ success: true, message: '' });
      expect(passed.time).toBeGreaterThan(0);
      const failed = await admin('GET', `/api/channel/${id}/keys/${keys[2].id}/test`);
      expect(failed).toMatchObject({ success: false });
      expect(failed.message).toContain('Incorrect API key provided');
      // a test never disables: the key keeps its state, with the error beside it
      const afterTest = (await keysOf(id))[2];
      expect(afterTest).toMatchObject({ status: 2 });
      expect(afterTest.last_error).toContain('Incorrect API key provided');

      expect((await admin('DELETE', `/api/channel/${id}/keys/${keys[1].id}`)).success).toBe(true);
      expect((await admin('DELETE', `/api/channel/${id}/keys/${keys[1].id}`)).success).toBe(false);
      expect((await keysOf(id)).map((key) => key.id)).toEqual([keys[0].id, keys[2].id]);

      // an edit adds the keys it gives; a repoint replaces them all
      const channel = (await admin('GET', `/api/channel/${id}`)).data;
      await admin('PUT', '/api/channel/', { ...channel, key: keyOf('fourth') });
      expect(await keysOf(id)).toHaveLength(3);
      expect((await admin('PUT', '/api/channel/', { ...channel, base_url: `${upstream.url}/moved`, key: '' })).success).toBe(false);
      await admin('PUT', '/api/channel/', { ...channel, base_url: `${upstream.url}/`, type: 1, key: keyOf('fifth') });
      const replaced = await harness.app.ctx.db.selectFrom('channel_keys').select('key').where('channel_id', '=', id).execute();
      expect(replaced.map((row) => row.key)).toEqual([keyOf('fifth')]);

      answers.push(await admin('GET', '/api/channel/?p=0'), await admin('GET', '/api/channel/search?keyword=pool'), await keysOf(id));
      const text = JSON.stringify(answers);
      for (const key of [first, second, third, keyOf('fourth'), keyOf('fifth')]) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice(3, -4));
      }
    });

    it('test-all tests a multi-key channel with its first live key, and a dead one is set aside alone', async () => {
      const [bad, good] = [keyOf('test-all-bad'), keyOf('test-all-good')];
      upstream.dead.add(bad);
      const id = await createPool([bad, good]);
      expect((await harness.admin('GET', '/api/channel/test')).success).toBe(true);
      await channelJobsSettled(harness.app.ctx);
      expect((await keysOf(id)).map((key) => key.status)).toEqual([3, 1]);
      expect(await channelState(id)).toEqual({ status: 1, autoDisabled: 0 });
      upstream.seen.length = 0;
      expect((await harness.admin('GET', '/api/channel/test')).success).toBe(true);
      await channelJobsSettled(harness.app.ctx);
      expect(upstream.seen).toEqual([good]);
      expect((await harness.admin('GET', `/api/channel/${id}`)).data.test_error).toBe('');
    });

    it('turns a single-key channel into a multi-key one, its key the first', async () => {
      const [own, extra] = [keyOf('own'), keyOf('extra')];
      const id = await harness.addChannel({ name: 'grows', key: own, base_url: upstream.url });
      const channel = (await harness.admin('GET', `/api/channel/${id}`)).data;
      expect(channel.multi_key).toBe(false);
      const edited = await harness.admin('PUT', '/api/channel/', { ...channel, key: extra, multi_key: true, key_strategy: 'round_robin' });
      expect(edited.data).toMatchObject({ key: '', multi_key: true, key_strategy: 'round_robin' });
      const stored = await harness.app.ctx.db.selectFrom('channel_keys').select('key').where('channel_id', '=', id).orderBy('id').execute();
      expect(stored.map((row) => row.key)).toEqual([own, extra]);
      for (let call = 0; call < 2; call += 1) expect((await chat()).status).toBe(200);
      expect(new Set(upstream.seen)).toEqual(new Set([own, extra]));
    });

    it("lists a multi-key channel's live keys out of all, with its worst key's last error, and never a key", async () => {
      const [live, off, dead] = [keyOf('glance-live'), keyOf('glance-off'), keyOf('glance-dead')];
      const id = await createPool([live, off, dead], { name: 'glance', key_strategy: 'round_robin' });
      // a single-key channel beside it, serving another model so the calls below all go to the pool
      const single = await harness.addChannel({
        name: 'glance-single',
        key: keyOf('glance-single'),
        base_url: upstream.url,
        models: 'gpt-4o',
      });
      const keys = await keysOf(id);
      // an admin switches one key off; a live key's failed test leaves its error; the relay sets a refused key aside
      await harness.admin('PUT', `/api/channel/${id}/keys/${keys[1].id}`, { status: 2 });
      upstream.dead.add(live);
      expect((await harness.admin('GET', `/api/channel/${id}/keys/${keys[0].id}/test`)).success).toBe(false);
      upstream.dead.clear();
      const recordOf = async (url: string) => {
        const answer = await harness.admin('GET', url);
        expect(answer.success).toBe(true);
        return answer.data as Array<Record<string, unknown>>;
      };
      let listed = (await recordOf('/api/channel/?p=0')).find((record) => record.id === id)!;
      expect(listed).toMatchObject({ multi_key: true, key_count: 3, live_key_count: 2 });
      expect(listed.key_error).toContain('Incorrect API key provided');

      upstream.dead.add(dead);
      for (let call = 0; call < 2; call += 1) await chat();
      expect((await keysOf(id)).map((key) => key.status)).toEqual([1, 2, 3]);
      await harness.app.ctx.db.updateTable('channel_keys').set({ last_error: 'quota gone' }).where('id', '=', keys[2].id).execute();
      const pages = [await recordOf('/api/channel/?p=0'), await recordOf('/api/channel/search?keyword=glance')];
      for (const page of pages) {
        listed = page.find((record) => record.id === id)!;
        // one of three live: the key the system set aside is the worst, before the live one whose test failed
        expect(listed).toMatchObject({ key_count: 3, live_key_count: 1, key_error: 'quota gone' });
        const alone = page.find((record) => record.id === single)!;
        expect(alone).not.toHaveProperty('key_count');
        expect(alone).not.toHaveProperty('key_error');
        const text = JSON.stringify(page);
        for (const key of [live, off, dead, keyOf('glance-single')]) expect(text).not.toContain(key.slice(3, -4));
      }
    });

    it("a channel test says the reply's first words and which key answered, masked, with its place", async () => {
      const [off, good] = [keyOf('answer-off'), keyOf('answer-good')];
      const id = await createPool([off, good]);
      const keys = await keysOf(id);
      await harness.admin('PUT', `/api/channel/${id}/keys/${keys[0].id}`, { status: 2 });
      upstream.reply.text = `Hello!\n  ${'I can help with that. '.repeat(6)}`;
      const tested = await harness.admin('GET', `/api/channel/test/${id}`);
      // the first live key is the second: its place, its masked tail, and the answer's first 80 characters on one line
      expect(tested).toMatchObject({ success: true, model: 'gpt-4', key: 'sk-****good', key_index: 2, auto_disable: true });
      expect(tested.reply).toBe(`${`Hello! ${'I can help with that. '.repeat(4)}`.slice(0, 80)}…`);
      expect([...tested.reply]).toHaveLength(81);
      expect(upstream.seen).toEqual([good]);
      const text = JSON.stringify(tested);
      for (const key of [off, good]) expect(text).not.toContain(key.slice(3, -4));

      // a refusal names the key tried, and has no words to show
      upstream.dead.add(good);
      const refused = await harness.admin('GET', `/api/channel/test/${id}`);
      expect(refused).toMatchObject({ success: false, key: 'sk-****good', key_index: 2, reply: '' });
      // one key's own test shows its words too
      upstream.dead.clear();
      expect(await harness.admin('GET', `/api/channel/${id}/keys/${keys[1].id}/test`)).toMatchObject({
        success: true,
        reply: expect.stringMatching(/^Hello! I can/),
      });
    });

    it('answers the key routes only for multi-key channels', async () => {
      const single = await harness.addChannel({ name: 'single', key: keyOf('single') });
      expect(await harness.admin('GET', `/api/channel/${single}/keys`)).toMatchObject({ success: false, code: 'channel_not_found' });
      expect(await harness.admin('POST', `/api/channel/${single}/keys`, { keys: keyOf('other') })).toMatchObject({ success: false });
      expect(await harness.admin('DELETE', `/api/channel/${single}/keys/1`)).toMatchObject({
        success: false,
        code: 'channel_key_not_found',
      });
    });
  });
}
