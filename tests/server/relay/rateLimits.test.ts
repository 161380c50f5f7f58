// Relay rate limits through the real gateway, on every database (with Redis
// when it answers, each suite under its own key prefix; else in memory):
// where a limit comes from (the group's default, the user's override, a key's
// own lower limit), who may set which, the x-ratelimit-* headers on answers,
// the 429 in each client protocol's own shape with Retry-After, refused before
// anything is held or charged and before any upstream call, and tokens per
// minute charged on the prompt's bound and corrected by the answer's usage.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { asBrowser, login } from '../../support/app';
import { redisTool, startPrivateRedis, waitUntil } from '../faults/support';
import { databaseTargets, REDIS_URL, redisAvailable, type TestDatabase } from '../../support/databases';
import { resetRelay, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('relay rate limits');
const redisUp = await redisAvailable('relay rate limits');

const PASSWORD = 'rate-limits-password';
/** The channel serves every group the suite's users are in (svip has no rate-limit entry: it takes default's). */
const GROUPS = 'default,vip,svip';
const chat = (content = 'hello there') => ({ model: 'gpt-3.5-turbo', max_tokens: 20, messages: [{ role: 'user', content }] });

for (const target of targets) {
  describe.runIf(target.available)(`relay rate limits on ${target.name}${redisUp ? ' with Redis' : ' in memory'}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let users = 0;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(
        database.config,
        redisUp ? { redisUrl: REDIS_URL, redisKeyPrefix: `test:${randomBytes(6).toString('hex')}:` } : {},
      );
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      await resetRelay(harness);
      await harness.addChannel({ name: 'emulator', key: 'sk-good', group: GROUPS });
      await harness.app.ctx.options.set('GroupRateLimits', JSON.stringify({ default: { rpm: 0, tpm: 0 }, vip: { rpm: 3, tpm: 0 } }));
    });

    /** A new user (fresh buckets) in `group`, signed in, with one key; `limits` are the admin's overrides on the user. */
    const newCaller = async (group: string, limits: Record<string, unknown> = {}) => {
      users += 1;
      const username = `limited${users}`;
      expect((await harness.admin('POST', '/api/user/', { username, password: PASSWORD })).success).toBe(true);
      const user = await harness.app.ctx.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow();
      const userId = Number(user.id);
      const updated = await harness.admin('PUT', '/api/user/', { id: userId, group, quota: 10_000_000, ...limits });
      expect(updated.success, updated.message).toBe(true);
      const cookie = await login(harness.app, username, PASSWORD);
      const asUser = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
        asBrowser(harness.app, cookie, { method, url, payload: payload as never }).then((response) => response.json());
      const newKey = async (fields: Record<string, unknown> = {}) => {
        const created = await asUser('POST', '/api/token/', { name: 'limited key', remain_quota: 1_000_000, ...fields });
        if (!created.success) throw new Error(created.message);
        return { key: `sk-${created.data.key}`, id: Number(created.data.id) };
      };
      return { userId, asUser, newKey, key: (await newKey()).key };
    };
    /** Sends `count` chats one after the other; the statuses, and the last answer's headers and error message. */
    const send = async (key: string, count: number) => {
      const statuses: number[] = [];
      let last: Response | undefined;
      let lastText = '';
      for (let index = 0; index < count; index += 1) {
        last = await harness.post('/v1/chat/completions', chat(), key);
        statuses.push(last.status);
        lastText = await last.text();
      }
      return {
        statuses,
        last: last!,
        message: last!.status === 200 ? '' : (JSON.parse(lastText) as { error: { message: string } }).error.message,
      };
    };
    const heldAndQuota = async (userId: number) => {
      await harness.settled();
      const user = await harness.app.ctx.db
        .selectFrom('users')
        .select(['quota', 'held_quota', 'used_quota'])
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      const tokens = await harness.app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota'])
        .where('user_id', '=', userId)
        .execute();
      return {
        user: { quota: Number(user.quota), held: Number(user.held_quota), used: Number(user.used_quota) },
        tokens: tokens.map((token) => ({ remain: Number(token.remain_quota), held: Number(token.held_quota) })),
      };
    };

    it("applies the group's default to each user of the group, with the x-ratelimit headers on every answer", async () => {
      const caller = await newCaller('vip');
      const remaining: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        const response = await harness.post('/v1/chat/completions', chat(), caller.key);
        expect(response.status).toBe(200);
        await response.json();
        expect(response.headers.get('x-ratelimit-limit-requests')).toBe('3');
        expect(response.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|[\d.]+s|\d+m[\d.]+s)$/);
        expect(response.headers.get('x-ratelimit-limit-tokens')).toBeNull();
        remaining.push(response.headers.get('x-ratelimit-remaining-requests')!);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      const refused = await harness.post('/v1/chat/completions', chat(), caller.key);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        error: { message: expect.stringContaining('your account'), type: 'requests', param: null, code: 'rate_limit_exceeded' },
      });
      // a minute of 3: the next one in 20 s
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(19);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(20);
      // another user of the same group has a bucket of their own; a group without an entry takes "default" (unlimited here)
      expect((await send((await newCaller('vip')).key, 3)).statuses).toEqual([200, 200, 200]);
      const unlisted = await send((await newCaller('svip')).key, 5);
      expect(unlisted.statuses).toEqual([200, 200, 200, 200, 200]);
      expect(unlisted.last.headers.get('x-ratelimit-limit-requests')).toBeNull();
    });

    it("lets an admin's override on the user replace the group's, 0 meaning unlimited", async () => {
      expect((await send((await newCaller('vip', { rpm_limit: 5 })).key, 6)).statuses).toEqual([200, 200, 200, 200, 200, 429]);
      const unlimited = await send((await newCaller('vip', { rpm_limit: 0 })).key, 6);
      expect(unlimited.statuses.every((status) => status === 200)).toBe(true);
      expect(unlimited.last.headers.get('x-ratelimit-limit-requests')).toBeNull();
      // cleared (null): the group's again
      const caller = await newCaller('vip', { rpm_limit: 7 });
      expect((await harness.admin('PUT', '/api/user/', { id: caller.userId, rpm_limit: null })).success).toBe(true);
      expect((await harness.admin('GET', `/api/user/${caller.userId}`)).data).toMatchObject({ rpm_limit: null, tpm_limit: null });
      expect((await send(caller.key, 4)).statuses).toEqual([200, 200, 200, 429]);
    });

    it("narrows one key with its own lower limit while the user's still counts all keys together", async () => {
      const caller = await newCaller('vip');
      const narrow = await caller.newKey({ rpm_limit: 2 });
      const narrowRun = await send(narrow.key, 3);
      expect(narrowRun.statuses).toEqual([200, 200, 429]);
      expect(narrowRun.message).toContain('this API key');
      // the user's third request goes through another key; the fourth is the account's refusal
      const wide = await send(caller.key, 2);
      expect(wide.statuses).toEqual([200, 429]);
      expect(wide.message).toContain('your account');
    });

    it("never lets a user raise a key's limit above their own, nor change their own", async () => {
      const caller = await newCaller('vip', { tpm_limit: 1000 });
      const key = await caller.newKey();
      for (const refused of [{ rpm_limit: 4 }, { rpm_limit: 0 }, { tpm_limit: 1001 }, { rpm_limit: -1 }, { rpm_limit: 'many' }]) {
        const answer = await caller.asUser('PUT', '/api/token/', { id: key.id, ...refused });
        expect(answer.success, JSON.stringify(refused)).toBe(false);
      }
      expect((await caller.asUser('POST', '/api/token/', { name: 'too wide', rpm_limit: 10 })).success).toBe(false);
      const saved = await caller.asUser('PUT', '/api/token/', { id: key.id, rpm_limit: 2, tpm_limit: 500 });
      expect(saved.success, saved.message).toBe(true);
      expect(saved.data).toMatchObject({ rpm_limit: 2, tpm_limit: 500, rate_limits: { rpm: 2, tpm: 500 } });
      // the list shows what limits each key in effect: its own, or its user's
      const listed = (await caller.asUser('GET', '/api/token/?p=0')).data as Array<{
        id: number;
        rpm_limit: number | null;
        rate_limits: { rpm: number; tpm: number };
      }>;
      expect(listed.find((row) => row.id === key.id)).toMatchObject({ rpm_limit: 2, rate_limits: { rpm: 2, tpm: 500 } });
      expect(listed.find((row) => row.id !== key.id)).toMatchObject({ rpm_limit: null, rate_limits: { rpm: 3, tpm: 1000 } });
      // an edit of something else keeps a limit the group lowered since
      await harness.app.ctx.options.set('GroupRateLimits', JSON.stringify({ vip: { rpm: 1, tpm: 0 } }));
      expect((await caller.asUser('PUT', '/api/token/', { id: key.id, name: 'renamed' })).success).toBe(true);
      // a user's own limit is the admin's to set: the self update ignores it
      await caller.asUser('PUT', '/api/user/self', { rpm_limit: 0, tpm_limit: 0 });
      expect((await harness.admin('GET', `/api/user/${caller.userId}`)).data).toMatchObject({ rpm_limit: null, tpm_limit: 1000 });
      // an admin may not set nonsense either
      expect((await harness.admin('PUT', '/api/user/', { id: caller.userId, rpm_limit: -5 })).success).toBe(false);
    });

    it('refuses a bad GroupRateLimits table and keeps the one in force', async () => {
      const before = harness.app.ctx.options.get('GroupRateLimits');
      for (const value of ['{"vip": 5}', '{"vip": {"rpm": -1}}', 'not json', '{"vip": {"rpm": 1, "burst": 3}}']) {
        const answer = await harness.admin('PUT', '/api/option/', { key: 'GroupRateLimits', value });
        expect(answer.success, value).toBe(false);
      }
      expect(harness.app.ctx.options.get('GroupRateLimits')).toBe(before);
    });

    const protocols: Array<{ name: string; send(key: string): Promise<Response>; body: unknown }> = [
      {
        name: 'OpenAI',
        send: (key) => harness.post('/v1/chat/completions', chat(), key),
        body: {
          error: { message: expect.stringContaining('requests per minute'), type: 'requests', param: null, code: 'rate_limit_exceeded' },
        },
      },
      {
        name: 'Anthropic',
        send: (key) =>
          fetch(`${harness.baseUrl}/v1/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
            body: JSON.stringify({ model: 'gpt-3.5-turbo', max_tokens: 20, messages: [{ role: 'user', content: 'hello there' }] }),
          }),
        body: { type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('requests per minute') } },
      },
      {
        name: 'Gemini',
        send: (key) =>
          fetch(`${harness.baseUrl}/v1beta/models/gpt-3.5-turbo:generateContent`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
            body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] }),
          }),
        body: { error: { code: 429, message: expect.stringContaining('requests per minute'), status: 'RESOURCE_EXHAUSTED' } },
      },
    ];
    for (const protocol of protocols) {
      it(`refuses in ${protocol.name}'s shape with Retry-After and the headers, before anything is held, charged or sent upstream`, async () => {
        const caller = await newCaller('vip', { rpm_limit: 1 });
        const first = await protocol.send(caller.key);
        expect(first.status, await first.clone().text()).toBe(200);
        await first.text();
        const before = await heldAndQuota(caller.userId);
        const upstreamCalls = harness.emulator.requests.length;
        const refused = await protocol.send(caller.key);
        expect(refused.status).toBe(429);
        expect(await refused.json()).toEqual(protocol.body);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
        expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
        expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
        expect(refused.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|[\d.]+s|\d+m[\d.]+s)$/);
        const after = await heldAndQuota(caller.userId);
        expect(after).toEqual(before);
        expect(after.user.held).toBe(0);
        expect(after.tokens.every((token) => token.held === 0)).toBe(true);
        expect(harness.emulator.requests.length).toBe(upstreamCalls);
      });
    }

    it("charges tokens per minute on the prompt's bound up front and gives back what the answer did not use", async () => {
      const caller = await newCaller('vip', { rpm_limit: 0, tpm_limit: 1500 });
      // 400 words: a byte bound over 800 (two such do not fit in 1500), and 400 tokens as the emulator counts them (they do)
      const long = Array.from({ length: 400 }, () => 'a').join(' ');
      const slowStream = { ...chat(long), stream: true, emulator: { chunks: 8, delay_ms: 150 } };
      const inFlight = await harness.post('/v1/chat/completions', slowStream, caller.key);
      expect(inFlight.status).toBe(200);
      expect(inFlight.headers.get('x-ratelimit-limit-tokens')).toBe('1500');
      const remainingWhileHeld = Number(inFlight.headers.get('x-ratelimit-remaining-tokens'));
      expect(remainingWhileHeld).toBeLessThan(700);
      // while its bound is charged, a second such prompt does not fit: refused on tokens, nothing held
      const refused = await harness.post('/v1/chat/completions', chat(long), caller.key);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { type: string; message: string } }).error).toMatchObject({
        type: 'tokens',
        message: expect.stringContaining('tokens per minute'),
      });
      expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('1500');
      await inFlight.text();
      await harness.settled();
      // settled at its usage (about 400 prompt + 8 answer tokens): the rest of the bound came back, so the same prompt fits now
      const after = await harness.post('/v1/chat/completions', chat(long), caller.key);
      expect(after.status).toBe(200);
      await after.json();
      const log = await harness.app.ctx.db
        .selectFrom('logs')
        .select(['prompt_tokens', 'completion_tokens'])
        .where('user_id', '=', caller.userId)
        .orderBy('id', 'asc')
        .executeTakeFirstOrThrow();
      const used = Number(log.prompt_tokens) + Number(log.completion_tokens);
      expect(used).toBeLessThan(600);
      // what is left: 1500 - the first's usage - this one's bound (over 800), plus what flowed back since (25 a second)
      const remaining = Number(after.headers.get('x-ratelimit-remaining-tokens'));
      expect(remaining).toBeLessThan(1500 - used);
      expect(remaining).toBeGreaterThanOrEqual(0);
    });

    it('gives the tokens back when the quota refuses the request (nothing used)', async () => {
      const caller = await newCaller('vip', { rpm_limit: 0, tpm_limit: 1500 });
      expect((await harness.admin('PUT', '/api/user/', { id: caller.userId, quota: 0 })).success).toBe(true);
      const long = Array.from({ length: 400 }, () => 'a').join(' ');
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const refused = await harness.post('/v1/chat/completions', chat(long), caller.key);
        expect(refused.status).toBe(429);
        // the quota's refusal each time, never the tokens-per-minute one: each refused request gave its bound back
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
      }
    });

    it('gives the tokens back when no upstream answers (nothing used)', async () => {
      const caller = await newCaller('vip', { rpm_limit: 0, tpm_limit: 1000 });
      await resetRelay(harness);
      await harness.addChannel({ name: 'broken', key: 'sk-good', base_url: 'http://127.0.0.1:9', group: GROUPS });
      const long = Array.from({ length: 400 }, () => 'a').join(' ');
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const failed = await harness.post('/v1/chat/completions', chat(long), caller.key);
        // a failed call gave its bound back: never a rate-limit refusal, however many are tried
        expect(failed.status).not.toBe(429);
        await failed.text();
      }
      expect((await heldAndQuota(caller.userId)).user.held).toBe(0);
    });
  });
}

describe('rate limits while Redis is unreachable', () => {
  let harness: RelayHarness;
  beforeAll(async () => {
    // nothing listens on port 9: the node starts without Redis and counts in memory, never failing a request for it
    harness = await startRelayHarness(undefined, { redisUrl: 'redis://127.0.0.1:9', redisCommandTimeoutMs: 100 });
    await harness.addChannel({ name: 'emulator', key: 'sk-good' });
    await harness.app.ctx.options.set('GroupRateLimits', JSON.stringify({ default: { rpm: 2, tpm: 0 } }));
  });
  afterAll(() => harness?.close());

  it('enforces the limit in memory and answers everything else normally', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await harness.post('/v1/chat/completions', chat());
      statuses.push(response.status);
      await response.text();
    }
    expect(statuses).toEqual([200, 200, 429]);
  });
});

const redisServer = redisTool('relay rate limits: Redis outage');

describe.runIf(redisServer !== undefined)('rate limits when Redis goes away and comes back', () => {
  let harness: RelayHarness;
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  const prefix = 'outage-test:';
  beforeAll(async () => {
    redis = await startPrivateRedis(redisServer!);
    harness = await startRelayHarness(undefined, { redisUrl: redis.url, redisKeyPrefix: prefix });
    await harness.addChannel({ name: 'emulator', key: 'sk-good' });
    await harness.app.ctx.options.set('GroupRateLimits', JSON.stringify({ default: { rpm: 5, tpm: 0 } }));
  });
  afterAll(async () => {
    await harness?.close();
    await redis?.destroy();
  });
  const statuses = async (count: number) => {
    const seen: number[] = [];
    for (let index = 0; index < count; index += 1) {
      const response = await harness.post('/v1/chat/completions', chat());
      seen.push(response.status);
      await response.text();
    }
    return seen;
  };
  const bucketKeys = async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      return await client.keys(`${prefix}*`);
    } finally {
      client.disconnect();
    }
  };

  it('counts in Redis, then in memory while it is down (never failing a request), then in Redis again', async () => {
    expect(await statuses(2)).toEqual([200, 200]);
    expect(await bucketKeys()).toHaveLength(1);

    await redis.stop();
    // the node goes on from what Redis last said (two of five used): three more, then refused; no request fails for the outage
    expect(await statuses(4)).toEqual([200, 200, 200, 429]);

    await redis.start();
    await waitUntil('the gateway reconnected to Redis', () => harness.app.ctx.redis?.status === 'ready');
    // the restarted Redis kept nothing (no persistence): its bucket starts full and is used again
    await waitUntil('a request counted in Redis again', async () => {
      const response = await harness.post('/v1/chat/completions', chat());
      await response.text();
      return (await bucketKeys()).length === 1;
    });
  }, 120_000);
});
