// Channel tests, balances and the health checker, over real HTTP against the
// OpenAI emulator, on SQLite, PostgreSQL and MySQL.
import type { FastifyInstance } from 'fastify';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL_TYPES } from '../../common/channelTypes';
import { DEFAULT_CHANNEL_TYPE_TEST_THRESHOLDS } from '../../common/options';
import { BALANCE_SOURCE_KINDS } from '../../server/channels/channelBalance';
import { runHealthPass } from '../../server/channels/channelHealth';
import { channelJobsSettled } from '../../server/channels/channelJobs';
import { channelJobDepsOf } from '../../server/plugins/backgroundJobs';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { SLOW_KEY_DELAY_MS, startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { startSmtp, type LocalSmtp } from '../support/smtp';

const ROOT_EMAIL = 'root@example.com';
const targets = await databaseTargets('channel_health', { besideSqlite: 'mysql' });

const localDate = (date: Date) =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;

for (const target of targets) {
  describe.runIf(target.available)(`channel tests, balances and health on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    let emulator: OpenAIEmulator;
    let smtp: LocalSmtp;
    /** An upstream whose balance endpoint always says 0. */
    let emptyAccount: Server;
    let emptyAccountUrl: string;

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      smtp = await startSmtp();
      emptyAccount = createServer((_request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ object: 'credit_summary', total_granted: 5, total_used: 5, total_available: 0 }));
      });
      await new Promise<void>((resolveListen) => emptyAccount.listen(0, '127.0.0.1', () => resolveListen()));
      emptyAccountUrl = `http://127.0.0.1:${(emptyAccount.address() as AddressInfo).port}`;
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
      await app.ctx.db.updateTable('users').set({ email: ROOT_EMAIL }).where('username', '=', 'root').execute();
      await app.ctx.options.set('SMTPServer', '127.0.0.1');
      await app.ctx.options.set('SMTPPort', String(smtp.port));
      await app.ctx.options.set('SMTPFrom', 'gateway@switchboard.test');
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
      await emulator?.close();
      await smtp?.close();
      await new Promise((resolveClose) => emptyAccount?.close(resolveClose));
    });
    beforeEach(async () => {
      await app.ctx.db.deleteFrom('abilities').execute();
      await app.ctx.db.deleteFrom('channels').execute();
      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
      await app.ctx.options.set('ChannelDisableThreshold', '5');
    });

    const get = (url: string) => asBrowser(app, root, { method: 'GET', url }).then((response) => response.json());
    const addChannel = async (fields: {
      key: string;
      type?: number;
      models?: string;
      model_mapping?: string;
      base_url?: string;
      name?: string;
      test_model?: string;
    }) => {
      const created = await asBrowser(app, root, {
        method: 'POST',
        url: '/api/channel/',
        payload: {
          name: fields.name ?? fields.key,
          type: fields.type ?? 1,
          key: fields.key,
          models: fields.models ?? 'gpt-3.5-turbo',
          base_url: fields.base_url ?? emulator.baseUrl,
          model_mapping: fields.model_mapping ?? '',
          test_model: fields.test_model ?? '',
        },
      });
      expect(created.json().success).toBe(true);
      return created.json().data.ids[0] as number;
    };
    const channelRow = (id: number) => app.ctx.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const stateOf = async (id: number) => {
      const row = await channelRow(id);
      return { status: Number(row.status), autoDisabled: Number(row.auto_disabled) };
    };

    it('tests one channel with its first model as mapped; time is top-level; response_time and test_time are saved', async () => {
      const id = await addChannel({ key: 'sk-good', models: 'gpt-4,gpt-3.5-turbo', model_mapping: '{"gpt-4":"gpt-4-0613"}' });
      const before = Math.floor(Date.now() / 1000);
      const body = await get(`/api/channel/test/${id}`);
      expect(Object.keys(body).sort()).toEqual([
        'auto_disable',
        'key',
        'message',
        'model',
        'reply',
        'slow',
        'success',
        'threshold',
        'time',
      ]);
      // the answer's first words, the key used (masked: 'sk-good' is too short to show more than its last 2), and the toggle off
      expect(body).toMatchObject({
        success: true,
        message: '',
        model: 'gpt-4',
        threshold: 5,
        slow: false,
        reply: 'word0 word1 word2 word3 word4',
        key: '****od',
        auto_disable: false,
      });
      expect(body.time).toBeGreaterThan(0);
      expect(body.time).toBeLessThan(5);
      const sent = emulator.requests.at(-1)!;
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe('Bearer sk-good');
      expect(sent.body).toEqual({ model: 'gpt-4-0613', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
      const row = await channelRow(id);
      expect(Number(row.response_time)).toBe(Math.round(body.time * 1000));
      expect(Number(row.test_time)).toBeGreaterThanOrEqual(before);
      expect(Number(row.test_time)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    });

    it('tests the model named by ?model= (as mapped), else the channel test model, and refuses a model the channel lacks', async () => {
      const id = await addChannel({
        key: 'sk-good',
        models: 'gpt-4,gpt-3.5-turbo,gpt-4o',
        model_mapping: '{"gpt-4":"gpt-4-0613"}',
        test_model: 'gpt-3.5-turbo',
      });
      expect((await get(`/api/channel/${id}`)).data.test_model).toBe('gpt-3.5-turbo');
      expect(await get(`/api/channel/test/${id}`)).toMatchObject({ success: true, model: 'gpt-3.5-turbo' });
      expect(emulator.requests.at(-1)!.body).toMatchObject({ model: 'gpt-3.5-turbo' });
      expect(await get(`/api/channel/test/${id}?model=gpt-4`)).toMatchObject({ success: true, model: 'gpt-4' });
      expect(emulator.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4-0613' });

      const sentBefore = emulator.requests.length;
      const refused = await asBrowser(app, root, { method: 'GET', url: `/api/channel/test/${id}?model=claude-3-opus` });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        success: false,
        message: "model claude-3-opus is not one of this channel's models",
        code: 'model_not_in_channel',
      });
      expect(emulator.requests.length).toBe(sentBefore);
    });

    it('keeps the test model one of the channel models: refused when named otherwise, cleared when an edit drops it', async () => {
      const refused = await asBrowser(app, root, {
        method: 'POST',
        url: '/api/channel/',
        payload: { name: 'x', type: 1, key: 'sk-good', models: 'gpt-4', base_url: emulator.baseUrl, test_model: 'gpt-4o' },
      });
      expect(refused.json()).toMatchObject({ success: false, message: 'the test model must be one of the channel models' });
      const id = await addChannel({ key: 'sk-good', models: 'gpt-4,gpt-4o', test_model: 'gpt-4o' });
      const { test_model: _kept, ...record } = (await get(`/api/channel/${id}`)).data as Record<string, unknown>;
      const edited = await asBrowser(app, root, { method: 'PUT', url: '/api/channel/', payload: { ...record, models: 'gpt-4' } });
      expect(edited.json().data).toMatchObject({ models: 'gpt-4', test_model: '' });
      expect(await get(`/api/channel/test/${id}`)).toMatchObject({ success: true, model: 'gpt-4' });
    });

    it("a test slower than its type's threshold fails; ChannelTypeTestThresholds gives a type its own", async () => {
      await app.ctx.options.set('ChannelDisableThreshold', '0.5');
      await app.ctx.options.set('ChannelTypeTestThresholds', '{"1": 3}');
      const patient = await addChannel({ key: 'sk-slow', type: 1 });
      const strict = await addChannel({ key: 'sk-slow', type: 8 });
      expect(await get(`/api/channel/test/${patient}`)).toMatchObject({ success: true, threshold: 3, slow: false });
      const slow = await get(`/api/channel/test/${strict}`);
      expect(slow).toMatchObject({ success: false, threshold: 0.5, slow: true });
      expect(slow.message).toMatch(/^response time 1\.\d\d s exceeds the threshold 0\.50 s$/);
      expect((await channelRow(strict)).test_error).toBe(slow.message);
      // 0 turns every limit off, the per-type ones too
      await app.ctx.options.set('ChannelDisableThreshold', '0');
      expect(await get(`/api/channel/test/${strict}`)).toMatchObject({ success: true, threshold: 0, slow: false });
      await app.ctx.options.set('ChannelTypeTestThresholds', JSON.stringify(DEFAULT_CHANNEL_TYPE_TEST_THRESHOLDS));
    });

    it('a failing single test reports the upstream error and never disables, even with auto-disable on', async () => {
      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      const id = await addChannel({ key: 'sk-dead' });
      const body = await get(`/api/channel/test/${id}`);
      expect(body.success).toBe(false);
      expect(body.message).toBe('Incorrect API key provided. (type invalid_request_error, code invalid_api_key)');
      expect(typeof body.time).toBe('number');
      // a refusal has no words to show; the answer says the toggle is on, and names the key tried, masked
      expect(body).toMatchObject({ reply: '', key: '****ad', auto_disable: true });
      expect(await stateOf(id)).toEqual({ status: 1, autoDisabled: 0 });
      expect(Number((await channelRow(id)).test_time)).toBeGreaterThan(0);
    });

    it('reports a 500 and an unreachable upstream as failures', async () => {
      const down = await addChannel({ key: 'sk-down' });
      expect((await get(`/api/channel/test/${down}`)).message).toBe('The server had an error. (type server_error)');
      const unreachable = await addChannel({ key: 'sk-good', base_url: 'http://127.0.0.1:9' });
      const body = await get(`/api/channel/test/${unreachable}`);
      expect(body.success).toBe(false);
      expect(body.message).toMatch(/^could not reach upstream: /);
    });

    it('tests every type in its own protocol (a Claude channel with a Messages call), and refuses unknown channels', async () => {
      // pointed at the OpenAI emulator, the Claude channel's test goes out the Anthropic way and is refused
      const claude = await addChannel({ key: 'sk-ant', type: 14, models: 'claude-2' });
      const body = await get(`/api/channel/test/${claude}`);
      expect(body.success).toBe(false);
      const sent = emulator.requests.at(-1)!;
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe('sk-ant');
      expect(sent.body).toMatchObject({ model: 'claude-2', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
      expect(Number((await channelRow(claude)).test_time)).toBeGreaterThan(0);
      expect(await get('/api/channel/test/999999')).toEqual({
        success: false,
        message: 'channel not found',
        code: 'channel_not_found',
        time: 0,
      });
    });

    it('test-all disables a dead-key channel only when AutomaticDisableChannelEnabled is on, and e-mails root', async () => {
      const dead = await addChannel({ key: 'sk-dead', name: 'dead-one' });
      const good = await addChannel({ key: 'sk-good', name: 'good-one' });
      let since = smtp.mails.length;
      expect(await get('/api/channel/test')).toMatchObject({ success: true, message: '', data: { kind: 'test', state: 'running' } });
      await channelJobsSettled(app.ctx);
      expect(await stateOf(dead)).toEqual({ status: 1, autoDisabled: 0 });
      expect(Number((await channelRow(dead)).test_time)).toBeGreaterThan(0);
      expect(Number((await channelRow(good)).test_time)).toBeGreaterThan(0);
      const finished = await smtp.waitForMail(ROOT_EMAIL, since);
      expect(finished.raw).toContain('channel test finished');
      expect(finished.raw).toContain('2 enabled channel(s) tested. No channel was disabled.');

      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      since = smtp.mails.length;
      expect(await get('/api/channel/test')).toMatchObject({ success: true, message: '', data: { kind: 'test', state: 'running' } });
      await channelJobsSettled(app.ctx);
      expect(await stateOf(dead)).toEqual({ status: 2, autoDisabled: 1 });
      expect(await stateOf(good)).toEqual({ status: 1, autoDisabled: 0 });
      const abilities = await app.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', '=', dead).execute();
      expect(abilities.map((row) => Number(row.enabled))).toEqual([0]);
      expect((await get(`/api/channel/${dead}`)).data.auto_disabled).toBe(true);
      const deadline = Date.now() + 10_000;
      while (smtp.mails.length < since + 2 && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 25));
      const mails = smtp.mails.slice(since).map((mail) => mail.raw);
      expect(mails).toHaveLength(2);
      const disabledMail = mails.find((raw) => raw.includes('was disabled automatically'));
      expect(disabledMail).toContain(`(#${dead}) was disabled automatically`);
      expect(disabledMail).toContain('Reason: Incorrect API key provided. (type invalid_request_error, code invalid_api_key)');
      expect(mails.find((raw) => raw.includes('channel test finished'))).toContain(`2 enabled channel(s) tested. Disabled: #${dead}.`);
    });

    it('test-all disables a channel slower than ChannelDisableThreshold, only with auto-disable on', async () => {
      await app.ctx.options.set('ChannelDisableThreshold', '0.5');
      const slow = await addChannel({ key: 'sk-slow' });
      const fast = await addChannel({ key: 'sk-good' });
      expect((await get('/api/channel/test')).success).toBe(true);
      await channelJobsSettled(app.ctx);
      expect(await stateOf(slow)).toEqual({ status: 1, autoDisabled: 0 });
      expect(Number((await channelRow(slow)).response_time)).toBeGreaterThanOrEqual(SLOW_KEY_DELAY_MS);

      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      const since = smtp.mails.length;
      expect((await get('/api/channel/test')).success).toBe(true);
      await channelJobsSettled(app.ctx);
      expect(await stateOf(slow)).toEqual({ status: 2, autoDisabled: 1 });
      expect(await stateOf(fast)).toEqual({ status: 1, autoDisabled: 0 });
      const mail = await smtp.waitForMail(ROOT_EMAIL, since);
      const disabledMail = mail.raw.includes('was disabled automatically') ? mail : await smtp.waitForMail(ROOT_EMAIL, since + 1);
      expect(disabledMail.raw).toMatch(/Reason: response time 1\.\d\d s exceeds the threshold 0\.50 s/);
    });

    it('a second test-all or balance-all while one runs is refused, and the guard clears when it ends', async () => {
      await addChannel({ key: 'sk-slow' });
      expect(await get('/api/channel/test')).toMatchObject({ success: true, message: '', data: { kind: 'test', state: 'running' } });
      expect(await get('/api/channel/test')).toMatchObject({
        success: false,
        message: 'test already running',
        data: { kind: 'test', state: 'running' },
      });
      expect(await get('/api/channel/update_balance')).toMatchObject({
        success: true,
        message: '',
        data: { kind: 'balance', state: 'running' },
      });
      expect(await get('/api/channel/update_balance')).toMatchObject({
        success: false,
        message: 'balance update already running',
        data: { kind: 'balance', state: 'running' },
      });
      await channelJobsSettled(app.ctx);
      expect(await get('/api/channel/test')).toMatchObject({ success: true, message: '', data: { kind: 'test', state: 'running' } });
      expect(await get('/api/channel/update_balance')).toMatchObject({
        success: true,
        message: '',
        data: { kind: 'balance', state: 'running' },
      });
      await channelJobsSettled(app.ctx);
    });

    it('answers a test-all and a balance-all already counted: 0 of the enabled channels, before any result', async () => {
      await addChannel({ key: 'sk-slow', name: 'slow-1' });
      await addChannel({ key: 'sk-slow', name: 'slow-2' });
      const off = await addChannel({ key: 'sk-good', name: 'off' });
      await app.ctx.db.updateTable('channels').set({ status: 2 }).where('id', '=', off).execute();
      const test = await get('/api/channel/test');
      expect(test.data).toMatchObject({ kind: 'test', state: 'running', done: 0, total: 2, failures: [] });
      expect((await get(`/api/channel/jobs/${test.data.id}`)).data).toMatchObject({ state: 'running', done: 0, total: 2 });
      const balance = await get('/api/channel/update_balance');
      expect(balance.data).toMatchObject({ kind: 'balance', state: 'running', done: 0, total: 2 });
      await channelJobsSettled(app.ctx);
      expect((await get(`/api/channel/jobs/${test.data.id}`)).data).toMatchObject({ state: 'done', done: 2, total: 2 });
    });

    it('reads an OpenAI (1) and a Custom (8) balance through /v1/dashboard/billing, balance top-level and saved', async () => {
      for (const type of [1, 8]) {
        const id = await addChannel({ key: 'sk-good', type });
        const since = emulator.requests.length;
        const body = await get(`/api/channel/update_balance/${id}`);
        expect(body).toEqual({ success: true, message: '', balance: 99.5 });
        const [subscription, usage] = emulator.requests.slice(since);
        expect(subscription).toMatchObject({ method: 'GET', path: '/v1/dashboard/billing/subscription' });
        expect(subscription.headers.authorization).toBe('Bearer sk-good');
        expect(usage.path).toBe('/v1/dashboard/billing/usage');
        const today = new Date();
        expect(Object.fromEntries(new URLSearchParams(usage.query))).toEqual({
          start_date: localDate(new Date(today.getFullYear(), today.getMonth(), 1)),
          end_date: localDate(today),
        });
        const row = await channelRow(id);
        expect(Number(row.balance)).toBe(99.5);
        expect(Math.abs(Number(row.balance_updated_time) - Date.now() / 1000)).toBeLessThan(10);
      }
    });

    it('reads credit_grants (4, 12, 13), OpenAI-SB (5) and AI Proxy (10) balances from their own fields', async () => {
      const expected: Array<[number, number, string]> = [
        [4, 12.5, '/dashboard/billing/credit_grants'],
        [12, 11.25, '/dashboard/billing/credit_grants'],
        [13, 12.5, '/dashboard/billing/credit_grants'],
        [5, 35000, '/sb-api/user/status'],
        [10, 42.5, '/api/report/getUserOverview'],
      ];
      for (const [type, balance, path] of expected) {
        const id = await addChannel({ key: 'sk-good', type });
        expect(await get(`/api/channel/update_balance/${id}`)).toEqual({ success: true, message: '', balance });
        expect(emulator.requests.at(-1)!.path).toBe(path);
        expect(Number((await channelRow(id)).balance)).toBe(balance);
      }
      expect(emulator.requests.at(-1)!.headers['api-key']).toBe('sk-good');
      const sb = emulator.requests.findLast((request) => request.path === '/sb-api/user/status')!;
      expect(new URLSearchParams(sb.query).get('api_key')).toBe('sk-good');
    });

    it('says which balances it cannot read: unsupported types, upstream errors, unknown channels', async () => {
      const api2d = await addChannel({ key: 'sk-good', type: 2 });
      expect(await get(`/api/channel/update_balance/${api2d}`)).toEqual({
        success: false,
        message: 'balance query is not supported for this channel type',
      });
      const dead = await addChannel({ key: 'sk-dead', type: 1 });
      expect(await get(`/api/channel/update_balance/${dead}`)).toEqual({
        success: false,
        message: 'Incorrect API key provided. (type invalid_request_error, code invalid_api_key)',
      });
      expect(Number((await channelRow(dead)).balance_updated_time)).toBe(0);
      expect(await get('/api/channel/update_balance/999999')).toEqual({
        success: false,
        message: 'channel not found',
        code: 'channel_not_found',
      });
    });

    it('balance-all refreshes enabled channels of supported types and disables an empty one only with auto-disable on', async () => {
      const openai = await addChannel({ key: 'sk-good', type: 1 });
      const manuallyOff = await addChannel({ key: 'sk-good', type: 1 });
      expect(
        (await asBrowser(app, root, { method: 'PUT', url: '/api/channel/', payload: { id: manuallyOff, status: 2 } })).json().success,
      ).toBe(true);
      const empty = await addChannel({ key: 'sk-empty', type: 4, base_url: emptyAccountUrl });
      expect(await get('/api/channel/update_balance')).toMatchObject({
        success: true,
        message: '',
        data: { kind: 'balance', state: 'running' },
      });
      await channelJobsSettled(app.ctx);
      expect(Number((await channelRow(openai)).balance)).toBe(99.5);
      expect(Number((await channelRow(manuallyOff)).balance_updated_time)).toBe(0);
      expect(Number((await channelRow(empty)).balance_updated_time)).toBeGreaterThan(0);
      expect(await stateOf(empty)).toEqual({ status: 1, autoDisabled: 0 });

      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      expect(await get('/api/channel/update_balance')).toMatchObject({
        success: true,
        message: '',
        data: { kind: 'balance', state: 'running' },
      });
      await channelJobsSettled(app.ctx);
      expect(await stateOf(empty)).toEqual({ status: 2, autoDisabled: 1 });
      expect(await stateOf(openai)).toEqual({ status: 1, autoDisabled: 0 });
      expect(await stateOf(manuallyOff)).toEqual({ status: 2, autoDisabled: 0 });
    });

    it('a health pass re-enables a system-disabled channel that passes, and leaves manual, dead and slow ones alone', async () => {
      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      await app.ctx.options.set('ChannelDisableThreshold', '0.5');
      const recovered = await addChannel({ key: 'sk-dead', name: 'recovered' });
      const stillDead = await addChannel({ key: 'sk-dead', name: 'still-dead' });
      const slow = await addChannel({ key: 'sk-slow', name: 'slow' });
      expect((await get('/api/channel/test')).success).toBe(true);
      await channelJobsSettled(app.ctx);
      for (const id of [recovered, stillDead, slow]) expect(await stateOf(id)).toEqual({ status: 2, autoDisabled: 1 });
      // the admin fixes the key; editing keeps the channel disabled by the system
      const edited = await asBrowser(app, root, {
        method: 'PUT',
        url: '/api/channel/',
        payload: { ...(await get(`/api/channel/${recovered}`)).data, key: 'sk-good' },
      });
      expect(edited.json().data).toMatchObject({ status: 2, auto_disabled: true });
      const manual = await addChannel({ key: 'sk-good', name: 'manual' });
      expect(
        (await asBrowser(app, root, { method: 'PUT', url: '/api/channel/', payload: { id: manual, status: 2 } })).json().data.status,
      ).toBe(2);

      const result = await runHealthPass(channelJobDepsOf(app));
      expect(result).toEqual({ tested: [slow, stillDead, recovered], reenabled: [recovered], keysTested: [], keysReenabled: [] });
      expect(await stateOf(recovered)).toEqual({ status: 1, autoDisabled: 0 });
      const abilities = await app.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', '=', recovered).execute();
      expect(abilities.map((row) => Number(row.enabled))).toEqual([1]);
      expect(await stateOf(stillDead)).toEqual({ status: 2, autoDisabled: 1 });
      expect(await stateOf(slow)).toEqual({ status: 2, autoDisabled: 1 });
      expect(await stateOf(manual)).toEqual({ status: 2, autoDisabled: 0 });
      expect(Number((await channelRow(manual)).test_time)).toBe(0);
    });
  });
}

describe('balance sources', () => {
  it('exist for exactly the kinds of endpoint the channel-type table names', () => {
    const named = new Set(CHANNEL_TYPES.flatMap((type) => (type.balance ? [type.balance.source] : [])));
    expect([...BALANCE_SOURCE_KINDS].sort()).toEqual([...named].sort());
  });
});

describe('the periodic health checker', () => {
  it('re-enables a healthy system-disabled channel on its timer and stops cleanly on close', async () => {
    const emulator = await startOpenAIEmulator();
    const app = await buildTestApp({ channelRetestIntervalSeconds: 1 });
    try {
      const root = await login(app, 'root', ROOT_PASSWORD);
      const created = await asBrowser(app, root, {
        method: 'POST',
        url: '/api/channel/',
        payload: { name: 'flaky', type: 1, key: 'sk-good', models: 'gpt-3.5-turbo', base_url: emulator.baseUrl },
      });
      const id = created.json().data.ids[0] as number;
      await app.ctx.db.updateTable('channels').set({ status: 2, auto_disabled: 1 }).where('id', '=', id).execute();
      const deadline = Date.now() + 5_000;
      let status = 2;
      while (status !== 1 && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 100));
        status = Number((await app.ctx.db.selectFrom('channels').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status);
      }
      expect(status).toBe(1);
      expect(emulator.requests.some((request) => request.path === '/v1/chat/completions')).toBe(true);
    } finally {
      const closing = Date.now();
      await app.close();
      expect(Date.now() - closing).toBeLessThan(2_000);
      await emulator.close();
    }
  });
});
