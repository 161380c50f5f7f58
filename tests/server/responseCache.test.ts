// The exact response cache (server/relay/responseCache.ts) on a listening
// gateway in front of the OpenAI emulator, counting the emulator's calls: a
// miss then a hit, whole and streamed (the same bytes, usage included), per
// owner scope, Cache-Control, requests that are not deterministic, the option
// off, hits billed at the operator's share with the ledger exact, expiry and
// the size caps. On SQLite and MariaDB the database keeps the entries; on
// PostgreSQL the gateway has Redis and keeps them there.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { asBrowser, login, register } from '../support/app';
import { REDIS_URL, databaseTargets, redisAvailable, redisTestPrefix, type TestDatabase } from '../support/databases';
import { ledgerState } from '../support/ledgerState';
import { startRelayHarness, type RelayHarness } from './relay/harness';
import { LogType } from '../../common/roles';
import type { OptionKey } from '../../common/options';
import type { Dashboard } from '../../common/dashboard';
import { bookkeepingFor } from '../../server/billing/bookkeeping';
import { relayContextOf } from '../../server/plugins/relayContext';

const targets = await databaseTargets('response cache');
const redisUp = await redisAvailable('response cache');

const OPTIONS: Partial<Record<OptionKey, string>> = {
  ResponseCacheEnabled: 'true',
  ResponseCacheGroups: 'default',
  ResponseCacheModels: '',
  ResponseCacheTokens: '',
  ResponseCacheScope: 'user',
  ResponseCacheTtlSeconds: '3600',
  ResponseCacheMaxTemperature: '0',
  ResponseCacheHitRatio: '0',
  ResponseCacheMaxEntryKB: '1024',
  ResponseCacheMaxTotalMB: '256',
};

let prompt = 0;
/** A chat request no other test sends (each test starts from an empty cache, but a fresh prompt keeps the counts plain). */
const chat = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-3.5-turbo',
  messages: [{ role: 'user', content: `question number ${++prompt}` }],
  temperature: 0,
  ...extra,
});

for (const target of targets) {
  const withRedis = target.name === 'postgres';
  describe.runIf(target.available && (!withRedis || redisUp))(
    `the response cache on ${target.name}${withRedis ? ' with Redis' : ''}`,
    () => {
      let database: TestDatabase;
      let harness: RelayHarness;
      const redisKeyPrefix = redisTestPrefix();

      beforeAll(async () => {
        database = await target.create();
        harness = await startRelayHarness(database.config, withRedis ? { redisUrl: REDIS_URL, redisKeyPrefix } : {});
        await harness.addChannel({ name: 'emulator', key: 'sk-emulator' });
        // an OpenAI channel: it takes the Responses API as it is (the Custom one above gets it translated into chat)
        await harness.addChannel({ name: 'openai', key: 'sk-openai', type: 1, models: 'gpt-4o-mini' });
      });
      afterAll(async () => {
        if (harness) await store().clear();
        await harness?.close();
        await database?.drop();
      });
      beforeEach(async () => {
        // the stores still under way from the test before end first
        await harness.settled();
        for (const [key, value] of Object.entries(OPTIONS)) await harness.app.ctx.options.set(key as OptionKey, value);
        await store().clear();
        harness.emulator.requests.length = 0;
      });

      /** The gateway's own store (its relay context's, memory included). */
      const store = () => relayContextOf(harness.app, bookkeepingFor(harness.app.ctx, harness.app.log)).responseCache!;
      const upstreamCalls = () => harness.emulator.requests.filter((request) => request.path === '/v1/chat/completions').length;
      /** Entries stored so far (Redis: the index; the database: its rows). */
      const entries = async (): Promise<number> => {
        const redis = harness.app.ctx.redis;
        if (withRedis && redis) return redis.zcard(`${redisKeyPrefix}rc:index`);
        const row = await harness.app.ctx.db
          .selectFrom('response_cache')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        return Number(row.count);
      };
      const storedCount = (count: number) => vi.waitFor(async () => expect(await entries()).toBe(count), { timeout: 5000, interval: 20 });

      /** Sends a chat request; its cache header, status and body as text. */
      async function send(body: unknown, headers: Record<string, string> = {}, key = harness.apiKey) {
        const response = await harness.post('/v1/chat/completions', body, key, headers);
        return { status: response.status, cache: response.headers.get('x-switchboard-cache'), text: await response.text() };
      }

      it('answers a repeated request from the cache, whole and streamed, with the same bytes and usage', async () => {
        const body = chat();
        const first = await send(body);
        expect(first).toMatchObject({ status: 200, cache: 'miss' });
        await storedCount(1);
        const second = await send(body);
        expect(second).toEqual({ ...first, cache: 'hit' });
        expect(upstreamCalls()).toBe(1);

        const streamed = chat({ stream: true, stream_options: { include_usage: true } });
        const live = await send(streamed);
        expect(live.cache).toBe('miss');
        await storedCount(2);
        const replay = await send(streamed);
        expect(replay).toEqual({ ...live, cache: 'hit' });
        expect(replay.text).toContain('"usage"');
        expect(replay.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
        expect(upstreamCalls()).toBe(2);
      });

      it('caches the Responses API the same way', async () => {
        const body = { model: 'gpt-4o-mini', input: `responses question ${++prompt}`, temperature: 0 };
        const ask = async () => {
          const response = await harness.post('/v1/responses', body);
          return { status: response.status, cache: response.headers.get('x-switchboard-cache'), text: await response.text() };
        };
        const first = await ask();
        expect(first).toMatchObject({ status: 200, cache: 'miss' });
        await storedCount(1);
        expect(await ask()).toEqual({ ...first, cache: 'hit' });
        expect(harness.emulator.requests.filter((request) => request.path === '/v1/responses')).toHaveLength(1);
      });

      it("keeps one owner's answers from another unless the scope is widened", async () => {
        const body = chat();
        await send(body);
        await storedCount(1);
        const other = await otherUserKey(harness, 'neighbour');
        expect((await send(body, {}, other)).cache).toBe('miss');
        expect(upstreamCalls()).toBe(2);
        await harness.app.ctx.options.set('ResponseCacheScope', 'global');
        const shared = chat();
        await send(shared);
        await storedCount(3);
        expect((await send(shared, {}, other)).cache).toBe('hit');
        expect(upstreamCalls()).toBe(3);
      });

      it('honours no-store and no-cache', async () => {
        const body = chat();
        expect((await send(body, { 'cache-control': 'no-store' })).cache).toBe('miss');
        expect((await send(body, { 'cache-control': 'no-store' })).cache).toBe('miss');
        await harness.settled();
        expect(await entries()).toBe(0);
        await send(body);
        await storedCount(1);
        // no-cache: not read from the cache, the fresh answer stored in its place
        expect((await send(body, { 'cache-control': 'no-cache' })).cache).toBe('miss');
        expect((await send(body)).cache).toBe('hit');
        expect(upstreamCalls()).toBe(4);
      });

      it('relays requests that are not deterministic unless the client asks for the cache', async () => {
        const warm = chat({ temperature: 0.7 });
        const several = chat({ n: 2 });
        const sideEffects = chat();
        for (const [body, headers] of [
          [warm, {}],
          [several, {}],
          [sideEffects, { 'x-switchboard-side-effects': 'true' }],
        ] as const) {
          await send(body, headers);
          await send(body, headers);
        }
        expect(upstreamCalls()).toBe(6);
        await harness.settled();
        expect(await entries()).toBe(0);
        // asked: cached whatever its temperature, and a group not opted in may ask too
        await harness.app.ctx.options.set('ResponseCacheGroups', '');
        expect((await send(warm, { 'x-switchboard-cache': 'on' })).cache).toBe('miss');
        await storedCount(1);
        expect((await send(warm, { 'x-switchboard-cache': 'on' })).cache).toBe('hit');
        expect((await send(warm)).cache).toBeNull();
        expect(upstreamCalls()).toBe(8);
      });

      it('does nothing while the option is off', async () => {
        await harness.app.ctx.options.set('ResponseCacheEnabled', 'false');
        const body = chat();
        const first = await send(body, { 'x-switchboard-cache': 'on' });
        const second = await send(body, { 'x-switchboard-cache': 'on' });
        expect([first.cache, second.cache]).toEqual([null, null]);
        expect(upstreamCalls()).toBe(2);
        await harness.settled();
        expect(await entries()).toBe(0);
      });

      it('bills a hit at the operator share through the ledger, and logs what it saved', async () => {
        const userId = 1;
        const start = await ledgerState(harness.app.ctx.db, userId, harness.tokenId);
        const body = chat();
        await send(body);
        await storedCount(1);
        await harness.settled();
        const miss = await lastConsume(harness);
        expect(miss.quota).toBeGreaterThan(0);
        await send(body);
        await harness.settled();
        const free = await lastConsume(harness);
        expect(free).toMatchObject({
          quota: 0,
          channel_id: 0,
          prompt_tokens: miss.prompt_tokens,
          completion_tokens: miss.completion_tokens,
        });
        expect(JSON.parse(free.other!).responseCache).toEqual({ hit: true, saved: miss.quota });
        expect(free.content).toContain('response cache hit');

        await harness.app.ctx.options.set('ResponseCacheHitRatio', '0.1');
        await send(body);
        await harness.settled();
        const tenth = await lastConsume(harness);
        expect(tenth.quota).toBe(Math.round(miss.quota * 0.1));
        expect(JSON.parse(tenth.other!).responseCache).toEqual({ hit: true, saved: miss.quota - tenth.quota });
        expect(upstreamCalls()).toBe(1);

        const end = await ledgerState(harness.app.ctx.db, userId, harness.tokenId);
        const charged = miss.quota + tenth.quota;
        expect(end.logged - start.logged).toBe(charged);
        expect(start.quota - end.quota).toBe(charged);
        expect(start.remain - end.remain).toBe(charged);
        expect({ userHeld: end.userHeld, tokenHeld: end.tokenHeld, reservationsHeld: end.reservationsHeld }).toEqual({
          userHeld: 0,
          tokenHeld: 0,
          reservationsHeld: 0,
        });
      });

      it('a client that leaves during a miss cuts the upstream call, stores nothing and keeps the ledger exact', async () => {
        const start = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
        const abortedBefore = harness.emulator.abortedRequests;
        const leaving = new AbortController();
        const response = await fetch(`${harness.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.apiKey}`, 'x-switchboard-cache': 'on' },
          body: JSON.stringify(chat({ stream: true, emulator: { chunks: 100, delay_ms: 50 } })),
          signal: leaving.signal,
        });
        expect(response.headers.get('x-switchboard-cache')).toBe('miss');
        const reader = response.body!.getReader();
        await reader.read();
        leaving.abort();
        await vi.waitFor(() => expect(harness.emulator.abortedRequests).toBe(abortedBefore + 1), { timeout: 5000, interval: 20 });
        await harness.settled();
        expect(await entries()).toBe(0);
        const end = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
        // what streamed before the client left is billed; nothing stays held
        expect(end.logged - start.logged).toBe(start.quota - end.quota);
        expect(start.remain - end.remain).toBe(start.quota - end.quota);
        expect({ userHeld: end.userHeld, tokenHeld: end.tokenHeld, reservationsHeld: end.reservationsHeld }).toEqual({
          userHeld: 0,
          tokenHeld: 0,
          reservationsHeld: 0,
        });
      });

      it('holds only the share a hit is billed: a key whose balance cannot hold the full request still gets a free hit', async () => {
        const body = chat();
        expect((await send(body)).cache).toBe('miss');
        await storedCount(1);
        await harness.settled();
        const full = (await lastConsume(harness)).quota;
        // enough for the answer's charge, far below what the request holds without a cache (its whole output limit)
        const token = await harness.admin('POST', '/api/token/', { name: 'small balance', remain_quota: full });
        const smallKey = `sk-${token.data.key}`;
        const start = await ledgerState(harness.app.ctx.db, 1, token.data.id);
        const hit = await send(body, {}, smallKey);
        expect(hit).toMatchObject({ status: 200, cache: 'hit' });
        await harness.settled();
        expect(await lastConsume(harness)).toMatchObject({ quota: 0, token_id: token.data.id });
        expect(upstreamCalls()).toBe(1);
        const end = await ledgerState(harness.app.ctx.db, 1, token.data.id);
        expect({ remain: end.remain, quota: end.quota, tokenHeld: end.tokenHeld, userHeld: end.userHeld }).toEqual({
          remain: start.remain,
          quota: start.quota,
          tokenHeld: 0,
          userHeld: 0,
        });
      });

      it("counts the hits and what they saved on the dashboard, the user's own and root's site view", async () => {
        const siteBefore = await dashboardCache(harness, '/api/dashboard/admin');
        const ownBefore = await dashboardCache(harness, '/api/dashboard');
        const body = chat();
        await send(body);
        await storedCount(1);
        await harness.settled();
        const full = (await lastConsume(harness)).quota;
        await send(body);
        await harness.app.ctx.options.set('ResponseCacheHitRatio', '0.1');
        await send(body);
        const tenth = Math.round(full * 0.1);
        const neighbour = await otherUser(harness, 'cachedash');
        const streamed = chat({ stream: true, stream_options: { include_usage: true } });
        await send(streamed, {}, neighbour.key);
        await storedCount(2);
        await harness.settled();
        const streamedFull = (await lastConsume(harness)).quota;
        expect((await send(streamed, {}, neighbour.key)).cache).toBe('hit');
        await harness.settled();

        const streamedTenth = Math.round(streamedFull * 0.1);
        expect(await dashboardCache(harness, '/api/dashboard', neighbour.cookie)).toEqual({
          enabled: true,
          hits: 1,
          quota: streamedTenth,
          saved: streamedFull - streamedTenth,
        });
        const own = await dashboardCache(harness, '/api/dashboard');
        expect(own).toEqual({
          enabled: true,
          hits: ownBefore.hits + 2,
          quota: ownBefore.quota + tenth,
          saved: ownBefore.saved + 2 * full - tenth,
        });
        const site = await dashboardCache(harness, '/api/dashboard/admin');
        expect(site).toEqual({
          enabled: true,
          hits: siteBefore.hits + 3,
          quota: siteBefore.quota + tenth + streamedTenth,
          saved: siteBefore.saved + 2 * full - tenth + streamedFull - streamedTenth,
        });

        await harness.app.ctx.options.set('ResponseCacheEnabled', 'false');
        expect(await dashboardCache(harness, '/api/dashboard/admin')).toEqual({ ...site, enabled: false });
        expect(await dashboardCache(harness, '/api/dashboard?model=gpt-4', neighbour.cookie)).toEqual({
          enabled: false,
          hits: 0,
          quota: 0,
          saved: 0,
        });
      });

      it('serves an entry until its time to live is over', async () => {
        await harness.app.ctx.options.set('ResponseCacheTtlSeconds', '0.2');
        const body = chat();
        await send(body);
        await storedCount(1);
        // once the entry has expired, the same request goes upstream again
        await vi.waitFor(async () => expect((await send(body)).cache).toBe('miss'), { timeout: 5000, interval: 100 });
        expect(upstreamCalls()).toBeGreaterThanOrEqual(2);
      });

      it('stores no answer over the entry cap, and evicts the oldest over the total cap', async () => {
        await harness.app.ctx.options.set('ResponseCacheMaxEntryKB', '0.1');
        const large = chat();
        await send(large);
        await harness.settled();
        expect(await entries()).toBe(0);
        expect((await send(large)).cache).toBe('miss');

        await harness.app.ctx.options.set('ResponseCacheMaxEntryKB', '1024');
        const oldest = chat();
        await send(oldest);
        await storedCount(1);
        // room for one entry and a half: the next one pushes the oldest out
        const size = await entrySize(harness, withRedis ? redisKeyPrefix : undefined);
        await harness.app.ctx.options.set('ResponseCacheMaxTotalMB', String((size * 1.5) / (1024 * 1024)));
        const newest = chat();
        await send(newest);
        await harness.settled();
        expect(await entries()).toBe(1);
        expect((await send(newest)).cache).toBe('hit');
        expect((await send(oldest)).cache).toBe('miss');
      });
    },
  );
}

/** The newest consume log. */
function lastConsume(harness: RelayHarness) {
  return harness.app.ctx.db
    .selectFrom('logs')
    .select(['quota', 'other', 'content', 'channel_id', 'token_id', 'prompt_tokens', 'completion_tokens'])
    .where('type', '=', LogType.consume)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()
    .then((row) => ({ ...row, quota: Number(row.quota), channel_id: Number(row.channel_id), token_id: Number(row.token_id) }));
}

/** The size of the one stored entry. */
async function entrySize(harness: RelayHarness, redisKeyPrefix: string | undefined): Promise<number> {
  const redis = harness.app.ctx.redis;
  if (redisKeyPrefix !== undefined && redis) {
    const sizes = await redis.hvals(`${redisKeyPrefix}rc:sizes`);
    return Number(sizes[0]);
  }
  const row = await harness.app.ctx.db.selectFrom('response_cache').select('size').executeTakeFirstOrThrow();
  return Number(row.size);
}

/** The response cache's part of a dashboard, as the session `cookie` (default: root's) sees it. */
async function dashboardCache(harness: RelayHarness, url: string, cookie?: string) {
  const answer = (cookie ? (await asBrowser(harness.app, cookie, { method: 'GET', url })).json() : await harness.admin('GET', url)) as {
    data: Dashboard;
  };
  return answer.data.response_cache!;
}

/** A second user's API key and session. */
async function otherUser(harness: RelayHarness, username: string): Promise<{ key: string; cookie: string }> {
  const key = await otherUserKey(harness, username);
  return { key, cookie: await login(harness.app, username, 'password-123') };
}

/** A second user's API key, with quota of its own. */
async function otherUserKey(harness: RelayHarness, username: string): Promise<string> {
  await register(harness.app, username);
  await harness.app.ctx.db.updateTable('users').set({ quota: 10_000_000 }).where('username', '=', username).execute();
  const cookie = await login(harness.app, username, 'password-123');
  const token = await asBrowser(harness.app, cookie, {
    method: 'POST',
    url: '/api/token/',
    payload: { name: 'other', remain_quota: 1_000_000 },
  });
  return `sk-${token.json().data.key as string}`;
}
