// Every relayed request that was refused or failed once its key was known
// leaves one error log (type 5) of its own: no channel, every channel failed,
// an upstream 4xx, a timeout, the client gone, a limit, no quota. Each costs
// nothing, carries the client's X-Request-Id, the status returned and the
// channels tried, is found by /api/log?type=5&request_id=, and is one error in
// the dashboard's figures. A consume log spells its charge out. On every database.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { LogDetails } from '../../common/records';
import { pruneLogs } from '../../server/billing/logRetention';
import {
  cachedPromptRatioFor,
  computeQuota,
  imageQuota,
  imageQuotaFormula,
  quotaFormula,
  type ChargeInput,
} from '../../server/billing/prices';
import { insertLog } from '../../server/repositories/logs';
import { asBrowser, login, register } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { ANTHROPIC_CHANNELS, startAnthropicEmulator, type AnthropicEmulator } from '../support/emulators/anthropic';
import { resetRelay, startRelayHarness, type Balances, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('failure logs', { besideSqlite: 'postgres' });

/** How long the gateway waits for an upstream's first byte here: `sk-hang` never sends one. */
const FIRST_BYTE_TIMEOUT_MS = 400;
const HOUR = 3600;
const [CLAUDE] = ANTHROPIC_CHANNELS;
const DAY = 86_400;

const chat = (model = 'gpt-4', extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 20,
  messages: [{ role: 'user', content: 'hello there' }],
  ...extra,
});

for (const target of targets) {
  describe.runIf(target.available)(`failure logs on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let anthropic: AnthropicEmulator;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config, { upstream: { firstByteTimeoutMs: FIRST_BYTE_TIMEOUT_MS } });
      anthropic = await startAnthropicEmulator();
    });
    afterAll(async () => {
      await anthropic?.close();
      await harness?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      await resetRelay(harness);
    });

    /** The rows of one request id, once everything queued is written. */
    const rowsOf = async (requestId: string) => {
      await harness.settled();
      return harness.app.ctx.db.selectFrom('logs').selectAll().where('request_id', '=', requestId).execute();
    };

    /** Sends one chat with a fresh X-Request-Id; the answer's status and body, and the id. */
    const send = async (body: unknown, key?: string) => {
      const requestId = `test-${randomUUID()}`;
      const response = await harness.post('/v1/chat/completions', body, key, { 'x-request-id': requestId });
      return { requestId, status: response.status, body: await response.text() };
    };

    /**
     * Exactly one row for the request: an error log that cost nothing, with the
     * status the client got, and the balances as they were; /api/log finds it
     * by type and request id, with its details parsed.
     */
    const expectOneFailure = async (
      requestId: string,
      status: number,
      before: Balances,
      tokenId = harness.tokenId,
      protocol = 'openai',
    ) => {
      const rows = await rowsOf(requestId);
      expect(rows).toHaveLength(1);
      const [row] = rows;
      expect(row).toMatchObject({ type: LogType.error, quota: 0, username: 'root', prompt_tokens: 0, completion_tokens: 0 });
      expect(Number(row.token_id)).toBe(tokenId);
      expect(row.content).not.toBe('');
      expect(row.content).not.toMatch(/\n|127\.0\.0\.1|sk-/);
      const after = await harness.balances(tokenId);
      expect(after.user.quota).toBe(before.user.quota);
      expect(after.token.remain_quota).toBe(before.token.remain_quota);
      const held = await harness.app.ctx.db
        .selectFrom('users')
        .select('held_quota')
        .where('username', '=', 'root')
        .executeTakeFirstOrThrow();
      expect(Number(held.held_quota)).toBe(0);
      const listed = await harness.admin('GET', `/api/log/?type=5&request_id=${requestId}`);
      expect(listed.data).toHaveLength(1);
      const record = listed.data[0];
      expect(record).toMatchObject({ id: Number(row.id), type: 5, quota: 0, request_id: requestId });
      expect(typeof record.details).toBe('object');
      expect(record.details.status).toBe(status);
      expect(record.details.protocol).toBe(protocol);
      return record as { channel_id: number; channel_name: string; elapsed_ms: number; content: string; details: LogDetails };
    };

    it('no channel serves the model: one error log, no channel tried', async () => {
      await harness.addChannel({ name: 'other', key: 'sk-good', models: 'gpt-4' });
      const before = await harness.balances();
      const sent = await send(chat('gpt-4o'));
      expect(sent.status).toBe(503);
      const record = await expectOneFailure(sent.requestId, 503, before);
      expect(record).toMatchObject({ model_name: 'gpt-4o', channel_id: 0, channel_name: '' });
      expect(record.details).toMatchObject({ errorCode: 'model_not_available' });
      expect(record.details.attempts).toBeUndefined();
    });

    it('every channel fails: one error log listing each channel tried, with its status and reason', async () => {
      await harness.app.ctx.options.set('RetryTimes', '1');
      const first = await harness.addChannel({ name: 'down one', key: 'sk-down', models: 'gpt-3.5-turbo' });
      const second = await harness.addChannel({ name: 'down two', key: 'sk-down', models: 'gpt-3.5-turbo' });
      const before = await harness.balances();
      const sent = await send(chat('gpt-3.5-turbo'));
      expect(sent.status).toBe(500);
      const record = await expectOneFailure(sent.requestId, 500, before);
      expect(record.details).toMatchObject({ errorCode: 'upstream_error', retries: 1 });
      expect(record.details.attempts!.map((attempt) => [attempt.channelId, attempt.status, attempt.reason])).toEqual(
        expect.arrayContaining([
          [first, 500, 'The server had an error.'],
          [second, 500, 'The server had an error.'],
        ]),
      );
      expect(record.details.attempts!.map((attempt) => attempt.channelName).sort()).toEqual(['down one', 'down two']);
      const last = record.details.attempts!.at(-1)!;
      expect(record.channel_id).toBe(last.channelId);
      expect(record.channel_name).toBe(last.channelName);
      for (const attempt of record.details.attempts!) expect(attempt.ms).toBeGreaterThanOrEqual(0);
    });

    it('an upstream 4xx about the request: one error log with the status the client got', async () => {
      const channel = await harness.addChannel({
        type: CLAUDE.type,
        name: 'claude',
        key: CLAUDE.key,
        base_url: CLAUDE.baseUrl(anthropic),
        models: CLAUDE.chatModel,
      });
      const before = await harness.balances();
      const requestId = `test-${randomUUID()}`;
      // Anthropic refuses a conversation that does not open with the user's turn
      const response = await fetch(`${harness.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': harness.apiKey,
          'anthropic-version': '2023-06-01',
          'x-request-id': requestId,
        },
        body: JSON.stringify({ model: CLAUDE.chatModel, max_tokens: 20, messages: [{ role: 'assistant', content: 'hello' }] }),
      });
      expect(response.status).toBe(400);
      await response.text();
      const record = await expectOneFailure(requestId, 400, before, harness.tokenId, 'anthropic');
      expect(record.details.attempts).toEqual([expect.objectContaining({ channelId: channel, channelName: 'claude', status: 400 })]);
      expect(record).toMatchObject({ model_name: CLAUDE.chatModel, channel_id: channel, channel_name: 'claude' });
    });

    it('an upstream that never answers: one error log after the timeout', async () => {
      const channel = await harness.addChannel({ name: 'hanging', key: 'sk-hang', models: 'gpt-4' });
      const before = await harness.balances();
      const sent = await send(chat());
      expect(sent.status).toBe(504);
      const record = await expectOneFailure(sent.requestId, 504, before);
      expect(record.details.errorCode).toBe('upstream_timeout');
      expect(record.details.attempts).toEqual([expect.objectContaining({ channelId: channel, status: 0 })]);
      expect(record.elapsed_ms).toBeGreaterThanOrEqual(FIRST_BYTE_TIMEOUT_MS - 50);
    });

    /** A chat to a channel that never answers, held open until `leave()`; resolves once the upstream has it. */
    const holdOpen = async (key = harness.apiKey) => {
      const requestId = `test-${randomUUID()}`;
      const leaving = new AbortController();
      const pending = fetch(`${harness.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': requestId },
        body: JSON.stringify(chat()),
        signal: leaving.signal,
      }).catch((error: Error) => error);
      for (
        let wait = 0;
        wait < 100 && !harness.emulator.requests.some((request) => request.headers['x-request-id'] === requestId);
        wait += 1
      )
        await new Promise((resolve) => setTimeout(resolve, 10));
      const leave = async () => {
        leaving.abort();
        expect(await pending).toBeInstanceOf(Error);
        // the gateway writes the row once it sees the client gone
        for (let wait = 0; wait < 100 && (await rowsOf(requestId)).length === 0; wait += 1)
          await new Promise((resolve) => setTimeout(resolve, 20));
      };
      return { requestId, leave };
    };

    it('a client that leaves before the answer: one error log, 499', async () => {
      await harness.app.ctx.options.set('RetryTimes', '0');
      const channel = await harness.addChannel({ name: 'hanging', key: 'sk-hang', models: 'gpt-4' });
      const before = await harness.balances();
      const held = await holdOpen();
      await held.leave();
      const record = await expectOneFailure(held.requestId, 499, before);
      expect(record.details.errorCode).toBe('client_gone');
      expect(record.details.attempts).toEqual([expect.objectContaining({ channelId: channel, status: 0 })]);
    });

    it('refused by the concurrency limit: one error log, 429', async () => {
      await harness.addChannel({ name: 'hanging', key: 'sk-hang', models: 'gpt-4' });
      const limit = harness.app.ctx.options.get('TokenConcurrencyLimit');
      await harness.app.ctx.options.set('TokenConcurrencyLimit', '1');
      try {
        const before = await harness.balances();
        const held = await holdOpen();
        const refused = await send(chat());
        expect(refused.status).toBe(429);
        await held.leave();
        const record = await expectOneFailure(refused.requestId, 429, before);
        expect(record.details.errorCode).toBe('too_many_concurrent_requests');
        expect(record.channel_id).toBe(0);
        expect(await rowsOf(held.requestId)).toHaveLength(1);
      } finally {
        await harness.app.ctx.options.set('TokenConcurrencyLimit', limit);
      }
    });

    it('refused by a rate limit: one error log, 429, the admitted request billed as usual', async () => {
      await harness.addChannel({ name: 'emulator', key: 'sk-good', models: 'gpt-4' });
      const limits = harness.app.ctx.options.get('GroupRateLimits');
      await harness.app.ctx.options.set('GroupRateLimits', JSON.stringify({ default: { rpm: 1, tpm: 0 } }));
      try {
        // a key of its own: its bucket is fresh
        const token = await harness.admin('POST', '/api/token/', { name: 'limited', remain_quota: 1_000_000 });
        const key = `sk-${token.data.key}`;
        const admitted = await send(chat(), key);
        expect(admitted.status).toBe(200);
        const before = await harness.balances(token.data.id);
        const refused = await send(chat(), key);
        expect(refused.status).toBe(429);
        const record = await expectOneFailure(refused.requestId, 429, before, token.data.id);
        expect(record.details.attempts).toBeUndefined();
        expect(record.channel_id).toBe(0);
        expect((await rowsOf(admitted.requestId)).map((row) => row.type)).toEqual([LogType.consume]);
      } finally {
        await harness.app.ctx.options.set('GroupRateLimits', limits);
      }
    });

    it('refused for quota: one error log, nothing taken', async () => {
      await harness.addChannel({ name: 'emulator', key: 'sk-good', models: 'gpt-4' });
      const token = await harness.admin('POST', '/api/token/', { name: 'poor', remain_quota: 1 });
      const before = await harness.balances(token.data.id);
      const sent = await send(chat(), `sk-${token.data.key}`);
      expect(sent.status).toBe(429);
      const record = await expectOneFailure(sent.requestId, 429, before, token.data.id);
      expect(record.details.errorCode).toBe('insufficient_quota');
      expect(record).toMatchObject({ model_name: 'gpt-4', token_name: 'poor' });
    });

    it('a bad key is no one to attribute a row to: nothing is logged; a valid key with a bad body is', async () => {
      const sent = await send(chat(), 'sk-not-a-key-of-this-gateway');
      expect(sent.status).toBe(401);
      expect(await rowsOf(sent.requestId)).toEqual([]);
      const before = await harness.balances();
      const malformed = await send({ ...chat(), n: 'many' });
      expect(malformed.status).toBe(400);
      const record = await expectOneFailure(malformed.requestId, 400, before);
      expect(record.content).toMatch(/\bn\b/);
      // refused as it was read, before any channel: the row still names the model asked for
      const requestId = `test-${randomUUID()}`;
      const unsupported = await harness.post(
        '/v1/responses',
        { model: 'gpt-4', input: 'hello', previous_response_id: 'resp_1' },
        undefined,
        { 'x-request-id': requestId },
      );
      expect(unsupported.status).toBe(400);
      await unsupported.text();
      const refused = await expectOneFailure(requestId, 400, before, harness.tokenId, 'openai-responses');
      expect(refused).toMatchObject({ model_name: 'gpt-4', channel_id: 0 });
      expect(refused.details.errorCode).toBe('unsupported_parameter');
    });

    it('a consume log spells its charge out: ratios, cached tokens, the formula and time to first token', async () => {
      await harness.addChannel({ name: 'emulator', key: 'sk-good', models: 'gpt-4' });
      const sent = await send(chat('gpt-4', { stream: true, stream_options: { include_usage: true }, emulator: { cached_tokens: 1 } }));
      expect(sent.status).toBe(200);
      const [row] = await rowsOf(sent.requestId);
      expect(row.type).toBe(LogType.consume);
      const listed = await harness.admin('GET', `/api/log/?request_id=${sent.requestId}`);
      const { details } = listed.data[0] as { details: LogDetails };
      expect(details).toMatchObject({
        protocol: 'openai',
        status: 200,
        modelRatio: 15,
        groupRatio: 1,
        completionRatio: 2,
        cachedTokens: 1,
        cacheRatio: cachedPromptRatioFor('gpt-4'),
      });
      expect(details.ttftMs).toBeGreaterThanOrEqual(0);
      expect(details.attempts).toBeUndefined();
      const prompt = Number(row.prompt_tokens);
      const completion = Number(row.completion_tokens);
      expect(details.formula).toMatch(new RegExp(`^\\(${prompt - 1} \\+ 1 × [0-9.]+ \\+ ${completion} × 2\\) × 15 × 1 = `));
      expect(details.formula!.endsWith(` ${Number(row.quota)}`)).toBe(true);
      expect(Math.floor(evaluate(details.formula!))).toBe(Number(row.quota));
    });

    it('a consume log after a retry lists both channels', async () => {
      await harness.app.ctx.options.set('RetryTimes', '1');
      const down = await harness.addChannel({ name: 'down', key: 'sk-down', models: 'gpt-4', priority: 10 });
      const good = await harness.addChannel({ name: 'good', key: 'sk-good', models: 'gpt-4', priority: 0 });
      const sent = await send(chat());
      expect(sent.status).toBe(200);
      await harness.settled();
      const listed = await harness.admin('GET', `/api/log/?request_id=${sent.requestId}`);
      expect(listed.data).toHaveLength(1);
      expect(listed.data[0]).toMatchObject({ type: LogType.consume, channel_id: good, channel_name: 'good' });
      const { details } = listed.data[0] as { details: LogDetails };
      expect(details.retries).toBe(1);
      expect(details.attempts!.map((attempt) => [attempt.channelId, attempt.channelName, attempt.status])).toEqual([
        [down, 'down', 500],
        [good, 'good', 200],
      ]);
      expect(details.formula).toMatch(new RegExp(` = ${listed.data[0].quota}$`));
    });

    it("users read their own error logs, without channel names or upstreams' words, and never another user's", async () => {
      const down = await harness.addChannel({ name: 'secret channel name', key: 'sk-down', models: 'gpt-4' });
      const username = `fail${randomUUID().slice(0, 8)}`;
      await register(harness.app, username);
      const cookie = await login(harness.app, username, 'password-123');
      const user = await harness.app.ctx.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow();
      expect((await harness.admin('PUT', '/api/user/', { id: Number(user.id), username, quota: 1_000_000 })).success).toBe(true);
      const token = (
        await asBrowser(harness.app, cookie, { method: 'POST', url: '/api/token/', payload: { name: 'mine', remain_quota: 1_000_000 } })
      ).json();
      const own = await send(chat(), `sk-${token.data.key}`);
      expect(own.status).toBe(500);
      const roots = await send(chat('gpt-4o'));
      await harness.settled();
      const self = (url: string) => asBrowser(harness.app, cookie, { method: 'GET', url }).then((response) => response.json().data);
      const mine = await self(`/api/log/self?type=5&request_id=${own.requestId}`);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ username, channel_id: down });
      expect(mine[0].channel_name).toBeUndefined();
      expect(mine[0].details.attempts).toEqual([expect.objectContaining({ channelId: down, channelName: '', reason: '', status: 500 })]);
      expect(await self(`/api/log/self?type=5&request_id=${roots.requestId}`)).toEqual([]);
      const exported = await asBrowser(harness.app, cookie, { method: 'GET', url: '/api/log/self/export?type=5' });
      expect(exported.body).toContain(own.requestId);
      expect(exported.body).not.toContain('secret channel name');
      expect(exported.body).not.toContain('The server had an error.');
      expect(exported.body).not.toContain(roots.requestId);
    });

    it("the dashboard's errors are the error logs, one each", async () => {
      await harness.settled();
      const now = Math.floor(Date.now() / 1000);
      const errorRows = await harness.app.ctx.db.selectFrom('logs').select('id').where('type', '=', LogType.error).execute();
      expect(errorRows.length).toBeGreaterThanOrEqual(10);
      const dashboard = (await harness.admin('GET', `/api/dashboard/admin?start=${now - HOUR}&end=${now + HOUR}`)).data;
      expect(dashboard.totals.errors).toBe(errorRows.length);
    });

    it('lists by time, then id: a back-dated row falls in place; retention prunes error logs like the rest', async () => {
      const now = Math.floor(Date.now() / 1000);
      const requestId = `test-${randomUUID()}`;
      const root = await harness.app.ctx.db.selectFrom('users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow();
      await insertLog(harness.app.ctx.db, {
        userId: Number(root.id),
        username: 'root',
        type: LogType.error,
        content: 'imported',
        createdAt: now - 40 * DAY,
        requestId,
      });
      const page = (await harness.admin('GET', '/api/log/?page_size=100')).data as Array<{
        id: number;
        created_at: number;
        request_id: string | null;
      }>;
      const times = page.map((row) => row.created_at);
      expect(times).toEqual([...times].sort((left, right) => right - left));
      // the newest id, listed last: it is the oldest by time
      expect(page.at(-1)!.request_id).toBe(requestId);
      expect(Math.max(...page.map((row) => row.id))).toBe(page.at(-1)!.id);
      const searched = (await harness.admin('GET', `/api/log/search?keyword=${requestId}`)).data;
      expect(searched.map((row: { request_id: string }) => row.request_id)).toEqual([requestId]);
      const narrowed = (await harness.admin('GET', `/api/log/search?keyword=imp&type=5&request_id=${requestId}`)).data;
      expect(narrowed.map((row: { content: string }) => row.content)).toEqual(['imported']);
      expect((await harness.admin('GET', `/api/log/search?keyword=imp&type=2&request_id=${requestId}`)).data).toEqual([]);
      const errorsBefore = (await harness.app.ctx.db.selectFrom('logs').select('id').where('type', '=', LogType.error).execute()).length;
      expect(await pruneLogs(harness.app.ctx.db, now - 30 * DAY)).toBe(1);
      expect(await rowsOf(requestId)).toEqual([]);
      expect((await harness.app.ctx.db.selectFrom('logs').select('id').where('type', '=', LogType.error).execute()).length).toBe(
        errorsBefore - 1,
      );
    });
  });
}

describe('the quota formula of a consume log', () => {
  const spelled = (input: ChargeInput, modelRatio: number, groupRatio: number) =>
    quotaFormula(input, modelRatio, groupRatio, computeQuota(input));

  it('spells computeQuota out with its numbers, rounding shown where it moved the result', () => {
    expect(spelled({ promptTokens: 1200, completionTokens: 300, ratio: 1.5, completionRatio: 2 }, 1.5, 1)).toBe(
      '(1200 + 300 × 2) × 1.5 × 1 = 2700',
    );
    expect(spelled({ promptTokens: 10, completionTokens: 7, ratio: 0.75, completionRatio: 4 / 3 }, 0.75, 1)).toBe(
      '(10 + ⌊7 × 1.333333⌋) × 0.75 × 1 = 14.25 → 14',
    );
    expect(
      spelled(
        {
          promptTokens: 100,
          completionTokens: 10,
          cachedPromptTokens: 40,
          cachedPromptRatio: 0.1,
          cacheCreationTokens: 20,
          cacheCreationRatio: 1.25,
          ratio: 3,
          completionRatio: 5,
        },
        1.5,
        2,
      ),
    ).toBe('(40 + 40 × 0.1 + 20 × 1.25 + 10 × 5) × 1.5 × 2 = 357');
    // the least a priced request that used tokens costs
    expect(spelled({ promptTokens: 1, completionTokens: 0, ratio: 0.1, completionRatio: 1 }, 0.1, 1)).toBe('(1) × 0.1 × 1 = 0.1 → 1');
    expect(spelled({ promptTokens: 0, completionTokens: 0, ratio: 15, completionRatio: 2 }, 15, 1)).toBe('0 tokens = 0');
    expect(imageQuotaFormula(20, 1, '1024x1024', 2, imageQuota(20, '1024x1024', 2))).toMatch(/^⌊20 × 1 × [0-9.]+ × 1000⌋ × 2 = \d+$/);
  });
});

/** The left side of a quota formula, worked out ("⌊a × b⌋" rounds down, as computeQuota does). */
function evaluate(formula: string): number {
  const [left] = formula.split(' = ');
  const expression = left.replaceAll('×', '*').replaceAll('⌊', 'Math.floor(').replaceAll('⌋', ')');
  expect(expression).toMatch(/^[-0-9.+*() Mathflor]+$/);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the formula is checked above to hold only digits, operators and Math.floor
  return Function(`return ${expression}`)() as number;
}
