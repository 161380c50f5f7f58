// Bad input gets a clear 400 (or 413) and acts on
// nothing, on every database; identities and keys compare exactly on MySQL too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('strict input', { besideSqlite: 'postgres' });

const swapCase = (text: string) =>
  [...text].map((character) => (character === character.toLowerCase() ? character.toUpperCase() : character.toLowerCase())).join('');

for (const target of targets) {
  describe.runIf(target.available)(`strict input on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let root: string;
    let channelId: number;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      await resetRelay(harness);
      root = await login(harness.app, 'root', ROOT_PASSWORD);
      channelId = await harness.addChannel({ name: 'emu', key: 'sk-good' });
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, cookie: string | undefined = root) =>
      asBrowser(harness.app, cookie, { method, url, ...(payload === undefined ? {} : { payload: payload as never }) });

    it('refuses ids that are not plain digits with a 400 naming the field, and acts on no channel', async () => {
      for (const id of ['0x1', '1%0A', '1e3', '%201', '1.0', '-1', '99999999999999999999', '0x1%00']) {
        for (const [method, url] of [
          ['GET', `/api/channel/${id}`],
          ['DELETE', `/api/channel/${id}`],
          ['GET', `/api/channel/test/${id}`],
          ['GET', `/api/channel/update_balance/${id}`],
          ['GET', `/api/token/${id}`],
          ['DELETE', `/api/token/${id}`],
          ['GET', `/api/user/${id}`],
          ['GET', `/api/redemption/${id}`],
        ] as const) {
          const response = await api(method, url);
          expect(response.statusCode, `${method} ${url}`).toBe(400);
          expect(response.json()).toMatchObject({ success: false, message: expect.stringContaining('id in the path must be') });
        }
      }
      const still = await harness.app.ctx.db.selectFrom('channels').select('id').where('id', '=', channelId).executeTakeFirst();
      expect(still).toBeDefined();
    });

    it('refuses page numbers beyond safe integers instead of answering 500', async () => {
      for (const url of [
        '/api/channel/?p=1e19',
        '/api/log/?p=10000000000000000000',
        '/api/user/?p=-1',
        '/api/token/?p=0x10',
        '/api/log/self/stat?start_timestamp=1e19',
      ]) {
        const response = await api('GET', url);
        expect(response.statusCode, url).toBe(400);
        expect(response.json().success).toBe(false);
        expect(response.json().message).toMatch(/^(p|start_timestamp) in the query string must be/);
      }
      const page = await api('GET', '/api/log/?p=999999999999999');
      expect(page.statusCode).toBe(200);
      expect(page.json()).toEqual({ success: true, message: '', data: [] });
    });

    it('refuses NUL bytes in any string, anonymous login included', async () => {
      const login = await api('POST', '/api/user/login', { username: 'ro\u0000ot', password: 'x' }, undefined);
      expect(login.statusCode).toBe(400);
      expect(login.json()).toEqual({
        success: false,
        message: expect.stringMatching(/^username in the request body must be text of at most \d+ characters without NUL/),
      });
      const search = await api('GET', '/api/token/search?keyword=a%00b');
      expect(search.statusCode).toBe(400);
      const token = await api('POST', '/api/token/', { name: 'n\u0000' });
      expect(token.statusCode).toBe(400);
      expect(token.json().message).toContain('name in the request body');
      // webhooks too (they had no body schema, and PostgreSQL answered a NUL with a 500)
      const webhook = await api('POST', '/api/webhook', {
        name: 'ops\u0000',
        url: 'http://127.0.0.1:9/hook',
        events: ['channel.disabled'],
      });
      expect(webhook.statusCode).toBe(400);
      expect(webhook.json().message).toContain('name in the request body');
      const webhookUrl = await api('POST', '/api/webhook', { name: 'ops', url: 'http://127.0.0.1:9/\u0000', events: ['channel.disabled'] });
      expect(webhookUrl.statusCode).toBe(400);
      expect(await harness.app.ctx.db.selectFrom('webhooks').select('id').execute()).toEqual([]);
      const made = await api('POST', '/api/webhook', { name: 'ops', url: 'http://127.0.0.1:9/hook', events: ['channel.disabled'] });
      expect(made.statusCode).toBe(201);
      const renamed = await api('PUT', `/api/webhook/${made.json().id}`, { name: 'o\u0000ps' });
      expect(renamed.statusCode).toBe(400);
      expect((await harness.app.ctx.db.selectFrom('webhooks').select('name').executeTakeFirstOrThrow()).name).toBe('ops');
      await harness.app.ctx.db.deleteFrom('webhooks').execute();
    });

    it('refuses a 100k-character token model list and huge quotas, and changes nothing', async () => {
      const before = await harness.app.ctx.db.selectFrom('tokens').select(['id']).execute();
      const models = await api('POST', '/api/token/', { name: 'long', models: 'm'.repeat(100_000) });
      expect(models.statusCode).toBe(400);
      expect(models.json().message).toContain('models in the request body');
      const quota = await api('POST', '/api/token/', { name: 'rich', remain_quota: 1e19 });
      expect(quota.statusCode).toBe(400);
      expect(quota.json().message).toContain('remain_quota in the request body must be a whole number');
      expect(await harness.app.ctx.db.selectFrom('tokens').select(['id']).execute()).toEqual(before);
      const user = await api('PUT', '/api/user/', { id: 1, quota: 2 ** 53 });
      expect(user.statusCode).toBe(400);
      const priority = await api('PUT', '/api/channel/', { id: channelId, priority: 2 ** 40 });
      expect(priority.statusCode).toBe(400);
      expect(priority.json().message).toContain('priority in the request body');
    });

    it('accepts what the console sends: numeric ids in bodies, string pages, whole records back', async () => {
      const created = await api('POST', '/api/token/', {
        name: 'console',
        remain_quota: 100,
        expired_time: -1,
        unlimited_quota: false,
        models: '',
        allowed_ips: '',
      });
      expect(created.json().success).toBe(true);
      const record = created.json().data;
      const updated = await api('PUT', '/api/token/', { ...record, name: 'renamed', id: record.id });
      expect(updated.json()).toMatchObject({ success: true, data: { name: 'renamed' } });
      const byString = await api('PUT', '/api/token/?status_only=true', { id: String(record.id), status: 2 });
      expect(byString.json()).toMatchObject({ success: true, data: { status: 2 } });
      expect((await api('GET', '/api/token/?p=0')).json().success).toBe(true);
      expect((await api('GET', '/api/token/?p=')).json().success).toBe(true);
      // a console number field left blank or garbled arrives as null (NaN in JSON); the handlers read it as the default
      const channel = await api('PUT', '/api/channel/', { id: channelId, priority: null, weight: null });
      expect(channel.json()).toMatchObject({ success: true, data: { priority: 0, weight: 1 } });
      const codes = await api('POST', '/api/redemption/', { name: 'blank', quota: 5, count: null });
      expect(codes.json()).toMatchObject({ success: true, data: [expect.any(String)] });
      expect((await api('PUT', '/api/channel/', { id: String(channelId), status: 1 })).json().success).toBe(true);
    });

    it('answers 413 for /api bodies over the API limit, while the relay takes more', async () => {
      const big = await api('PUT', '/api/option/', { key: 'Notice', value: 'x'.repeat(1024 * 1024 + 10) });
      expect(big.statusCode).toBe(413);
      expect(big.json()).toEqual({ success: false, message: `the request body is larger than the limit of ${1024 * 1024} bytes` });
      const before = await harness.balances();
      const relayed = await harness.post('/v1/chat/completions', {
        model: 'gpt-4',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
        padding: 'x'.repeat(2 * 1024 * 1024),
      });
      expect(relayed.status).toBe(200);
      await relayed.arrayBuffer();
      expect((await harness.balances()).user.quota).toBeLessThan(before.user.quota);
    });

    it('range-checks the relay fields the gateway reads, in OpenAI shape, before reserving anything', async () => {
      const before = await harness.balances();
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['/v1/chat/completions', { model: 'gpt-4', max_tokens: 1e19, messages: [] }, 'max_tokens'],
        ['/v1/chat/completions', { model: 'gpt-4', max_tokens: -1, messages: [] }, 'max_tokens'],
        ['/v1/chat/completions', { model: 'gpt-4', max_completion_tokens: '100', messages: [] }, 'max_completion_tokens'],
        ['/v1/chat/completions', { model: 'gpt-4', n: 0, messages: [] }, 'n'],
        ['/v1/chat/completions', { model: 'gpt-4', stream: 'true', messages: [] }, 'stream'],
        [
          '/v1/chat/completions',
          { model: 'gpt-4', stream: true, stream_options: { include_usage: 'yes' }, messages: [] },
          'stream_options.include_usage',
        ],
        ['/v1/chat/completions', { model: 42, messages: [] }, 'model'],
        ['/v1/completions', { model: 'gpt-4\u0000', prompt: 'x' }, 'model'],
        ['/v1/embeddings', { model: 'm'.repeat(100_000), input: 'x' }, 'model'],
        ['/v1/images/generations', { model: 'dall-e', prompt: 'x', n: 1e19 }, 'n'],
        ['/v1/audio/speech', { model: ['tts-1'], input: 'x' }, 'model'],
      ];
      for (const [path, body, param] of cases) {
        const response = await harness.post(path, body);
        expect(response.status, `${path} ${param}`).toBe(400);
        expect(await response.json()).toEqual({
          error: { message: expect.stringContaining(param), type: 'invalid_request_error', param, code: 'invalid_value' },
        });
      }
      const models = await fetch(`${harness.baseUrl}/v1/models/gpt-4%00`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
      expect(models.status).toBe(400);
      expect(((await models.json()) as { error: { param: string } }).error.param).toBe('model');
      expect(await harness.balances()).toEqual(before);
    });

    it('compares usernames, token keys and redemption keys exactly', async () => {
      const upper = await api('POST', '/api/user/login', { username: 'ROOT', password: ROOT_PASSWORD }, undefined);
      expect(upper.json()).toEqual({ success: false, message: 'username or password is wrong', code: 'wrong_credentials' });
      await register(harness.app, 'alice');
      const alice = await api('POST', '/api/user/login', { username: 'Alice', password: 'password-123' }, undefined);
      expect(alice.json().success).toBe(false);

      const changedKey = `sk-${swapCase(harness.apiKey.slice(3))}`;
      const refused = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${changedKey}` } });
      expect(refused.status).toBe(401);
      const accepted = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
      expect(accepted.status).toBe(200);

      const [code] = (await api('POST', '/api/redemption/', { name: 'case', quota: 1000, count: 1 })).json().data as string[];
      const aliceCookie = await login(harness.app, 'alice', 'password-123');
      const wrongCase = await api('POST', '/api/user/topup', { key: code.toUpperCase() }, aliceCookie);
      expect(wrongCase.json().success).toBe(false);
      const rightCase = await api('POST', '/api/user/topup', { key: code }, aliceCookie);
      expect(rightCase.json()).toEqual({ success: true, message: '', data: 1000 });
    });
  });
}

describe('body limits', () => {
  it('follow the configuration', async () => {
    const app = await buildTestApp({ apiBodyLimitBytes: 2048, relayBodyLimitBytes: 4096 });
    try {
      const root = await login(app, 'root', ROOT_PASSWORD);
      const api = await asBrowser(app, root, { method: 'PUT', url: '/api/option/', payload: { key: 'Notice', value: 'x'.repeat(3000) } });
      expect(api.statusCode).toBe(413);
      expect(api.json().message).toBe('the request body is larger than the limit of 2048 bytes');
      const relay = await app.inject({
        method: 'POST',
        url: '/v1/images/generations',
        headers: { authorization: 'Bearer sk-none' },
        payload: { prompt: 'x'.repeat(5000) },
      });
      expect(relay.statusCode).toBe(413);
      expect(relay.json().error.type).toBe('invalid_request_error');
    } finally {
      await app.close();
    }
  });
});
