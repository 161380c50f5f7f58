// The rate-limit algorithm on its own (server/relay/gcra.ts), on a clock the
// test moves: a full bucket admits a minute's worth at once, then the limit
// per minute; several buckets pass all together or not at all; tokens are
// charged as amounts and corrected afterwards. The Lua script that runs the
// same steps in Redis must agree with the memory version step for step.
// Also the pieces around it: the GroupRateLimits rule, where a limit comes
// from, a key's override never above its user's, and the reset headers'
// duration format.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { effectiveTokenRateLimits, parseGroupRateLimits, parseRateLimitOverride, userRateLimits } from '../../../common/rateLimits';
import { gcraAdmit, MemoryGcra, WINDOW_MS, type BucketCharge } from '../../../server/relay/gcra';
import { formatResetDuration, redisGcraAdjust, redisGcraAdmit } from '../../../server/relay/rateLimits';
import { REDIS_URL, redisAvailable } from '../../support/databases';

const requests = (key: string, limit: number): BucketCharge => ({ key, limit, cost: 1, need: 1 });
const tokens = (key: string, limit: number, cost: number): BucketCharge => ({ key, limit, cost, need: Math.min(cost, limit) });

describe('GCRA in memory', () => {
  it('admits a full minute of requests at once, then refuses until one emission interval has passed', () => {
    const store = new MemoryGcra();
    const now = 1_000_000;
    const bucket = requests('r', 60);
    let admitted = 0;
    for (let attempt = 0; attempt < 100; attempt += 1) if (store.admit([bucket], now).admitted) admitted += 1;
    expect(admitted).toBe(60);
    const refused = store.admit([bucket], now);
    expect(refused.admitted).toBe(false);
    // 60 a minute: one a second; the 61st waits exactly that second
    expect(refused.retryMs).toBeCloseTo(1000, 6);
    expect(refused.buckets[0]).toEqual({ limit: 60, remaining: 0, resetMs: WINDOW_MS });
    expect(store.admit([bucket], now + 999).admitted).toBe(false);
    expect(store.admit([bucket], now + 1000).admitted).toBe(true);
    expect(store.admit([bucket], now + 1000).admitted).toBe(false);
  });

  it('admits the limit per minute at a steady rate: over ten simulated minutes at 5x the limit, exactly burst + rate x time', () => {
    const store = new MemoryGcra();
    const limit = 600;
    const start = 5_000_000;
    let admitted = 0;
    // 50 requests a second for 600 seconds, offered every 20 ms
    for (let time = 0; time < 600_000; time += 20) if (store.admit([requests('steady', limit)], start + time).admitted) admitted += 1;
    // the first minute's bucket, then 10 a second for the remaining time
    expect(admitted).toBeGreaterThanOrEqual(limit + (600_000 / 60_000) * limit - 2);
    expect(admitted).toBeLessThanOrEqual(limit + (600_000 / 60_000) * limit + 1);
  });

  it('reports what is left and when the bucket is full again', () => {
    const store = new MemoryGcra();
    const first = store.admit([requests('h', 600)], 0);
    expect(first.buckets[0]).toEqual({ limit: 600, remaining: 599, resetMs: 100 });
    for (let index = 0; index < 99; index += 1) store.admit([requests('h', 600)], 0);
    expect(store.admit([requests('h', 600)], 0).buckets[0]).toEqual({ limit: 600, remaining: 499, resetMs: 10_100 });
    // 5 seconds later 50 came back
    expect(store.admit([requests('h', 600)], 5000).buckets[0]).toEqual({ limit: 600, remaining: 548, resetMs: 5_200 });
  });

  it('passes several buckets all together or not at all', () => {
    const store = new MemoryGcra();
    const key = requests('key', 2);
    const account = requests('account', 10);
    expect(store.admit([key, account], 0).admitted).toBe(true);
    expect(store.admit([key, account], 0).admitted).toBe(true);
    const refused = store.admit([key, account], 0);
    expect(refused.admitted).toBe(false);
    // the refusal charged the account nothing: 8 of its 10 are left
    expect(refused.buckets[1].remaining).toBe(8);
    let viaOther = 0;
    while (store.admit([requests('other key', 100), account], 0).admitted) viaOther += 1;
    expect(viaOther).toBe(8);
  });

  it('charges tokens as amounts: a big request waits for a full bucket, is never refused forever, and drives the bucket into debt', () => {
    const store = new MemoryGcra();
    // 1000 tokens a minute; a 5000-token prompt passes on a full bucket
    expect(store.admit([tokens('t', 1000, 5000)], 0).admitted).toBe(true);
    // the debt: four minutes beyond the window before anything passes again
    const refused = store.admit([tokens('t', 1000, 1)], 0);
    expect(refused.admitted).toBe(false);
    expect(refused.retryMs).toBeCloseTo(4 * WINDOW_MS + 60, 6);
    expect(store.admit([tokens('t', 1000, 1)], 4 * WINDOW_MS + 60).admitted).toBe(true);
  });

  it('corrects an estimate after the answer: giving back what was not used, charging what was', () => {
    const store = new MemoryGcra();
    expect(store.admit([tokens('c', 1000, 1000)], 0).admitted).toBe(true);
    expect(store.admit([tokens('c', 1000, 10)], 0).admitted).toBe(false);
    // the answer used 300 in all: 700 come back, and a 700-token request fits
    store.adjust('c', 1000, -700, 0);
    expect(store.admit([tokens('c', 1000, 700)], 0).admitted).toBe(true);
    expect(store.admit([tokens('c', 1000, 1)], 0).admitted).toBe(false);
    // an answer longer than estimated charges the difference
    const later = new MemoryGcra();
    later.admit([tokens('d', 1000, 100)], 0);
    later.adjust('d', 1000, 850, 0);
    expect(later.admit([tokens('d', 1000, 50)], 0).admitted).toBe(true);
    expect(later.admit([tokens('d', 1000, 1)], 0).admitted).toBe(false);
    // giving back more than is charged leaves a full bucket, never credit
    const refund = new MemoryGcra();
    refund.admit([tokens('e', 100, 10)], 0);
    refund.adjust('e', 100, -1000, 0);
    expect(refund.admit([tokens('e', 100, 100)], 0).admitted).toBe(true);
    expect(refund.admit([tokens('e', 100, 1)], 0).admitted).toBe(false);
  });

  it('is a pure function of the stored times: gcraAdmit computes the same as the store', () => {
    const result = gcraAdmit([undefined, 1500], 1000, [requests('a', 60), requests('b', 60)]);
    expect(result.admitted).toBe(true);
    expect(result.newTats).toEqual([2000, 2500]);
  });
});

const redisUp = await redisAvailable('rate limit script');

describe.runIf(redisUp)('the Lua script in Redis', () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `test:gcra:${randomBytes(6).toString('hex')}:`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('agrees with the memory version, step for step, on a fixed clock', async () => {
    const memory = new MemoryGcra();
    const start = Date.now();
    const key = `${prefix}steps:r`;
    const tokenKey = `${prefix}steps:t`;
    const random = (seed: number) => () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const next = random(7);
    let time = start;
    for (let step = 0; step < 400; step += 1) {
      time += Math.floor(next() * 120);
      const charges = [requests(key, 300), tokens(tokenKey, 5000, Math.floor(next() * 400))];
      const inRedis = await redisGcraAdmit(redis, charges, time);
      const inMemory = memory.admit(charges, time);
      expect(inRedis.admitted, `step ${step}`).toBe(inMemory.admitted);
      expect(inRedis.buckets, `step ${step}`).toEqual(inMemory.buckets);
      if (!inRedis.admitted) expect(inRedis.retryMs).toBeCloseTo(inMemory.retryMs, 1);
      if (inRedis.admitted && step % 5 === 0) {
        const correction = Math.floor(next() * 300) - 150;
        await redisGcraAdjust(redis, tokenKey, 5000, correction, time);
        memory.adjust(tokenKey, 5000, correction, time);
      }
    }
  });

  it('expires a bucket once it is full again, and uses Redis time when no clock is given', async () => {
    const key = `${prefix}expiry:r`;
    const result = await redisGcraAdmit(redis, [requests(key, 60_000)]);
    expect(result.admitted).toBe(true);
    expect(result.buckets[0]).toMatchObject({ limit: 60_000, remaining: 59_999 });
    // one request at 60000 a minute: its bucket is full again within a millisecond or two
    const ttl = await redis.pttl(key);
    expect(ttl).toBeLessThanOrEqual(2);
  });
});

describe('where a limit comes from', () => {
  const groups = parseGroupRateLimits('{"default": {"rpm": 100, "tpm": 0}, "vip": {"rpm": 1000, "tpm": 50000}}')!;

  it('takes the user override, else the group, else default; 0 is unlimited', () => {
    expect(userRateLimits({ group: 'vip' }, groups)).toEqual({ rpm: 1000, tpm: 50000 });
    expect(userRateLimits({ group: 'unknown' }, groups)).toEqual({ rpm: 100, tpm: 0 });
    expect(userRateLimits({ group: 'vip', rpm_limit: 5, tpm_limit: null }, groups)).toEqual({ rpm: 5, tpm: 50000 });
    expect(userRateLimits({ group: 'vip', rpm_limit: 0, tpm_limit: 0 }, groups)).toEqual({ rpm: 0, tpm: 0 });
    expect(userRateLimits({ group: 'default' }, {})).toEqual({ rpm: 0, tpm: 0 });
  });

  it("limits a key by the tighter of its own and its user's", () => {
    expect(effectiveTokenRateLimits({ rpm_limit: null, tpm_limit: null }, { rpm: 100, tpm: 0 })).toEqual({ rpm: 100, tpm: 0 });
    expect(effectiveTokenRateLimits({ rpm_limit: 10, tpm_limit: 2000 }, { rpm: 100, tpm: 0 })).toEqual({ rpm: 10, tpm: 2000 });
    expect(effectiveTokenRateLimits({ rpm_limit: 500, tpm_limit: 0 }, { rpm: 100, tpm: 300 })).toEqual({ rpm: 100, tpm: 300 });
  });

  it('accepts a key override only up to the user limit, and never "unlimited" under a limited user', () => {
    expect(parseRateLimitOverride('', 'rpm', 100)).toEqual({ value: null });
    expect(parseRateLimitOverride(null, 'rpm', 100)).toEqual({ value: null });
    expect(parseRateLimitOverride(50, 'rpm', 100)).toEqual({ value: 50 });
    expect(parseRateLimitOverride('100', 'rpm', 100)).toEqual({ value: 100 });
    expect(parseRateLimitOverride(101, 'rpm', 100)).toHaveProperty('error');
    expect(parseRateLimitOverride(0, 'rpm', 100)).toHaveProperty('error');
    expect(parseRateLimitOverride(0, 'tpm', 0)).toEqual({ value: 0 });
    expect(parseRateLimitOverride(-1, 'tpm')).toHaveProperty('error');
    expect(parseRateLimitOverride(1.5, 'tpm')).toHaveProperty('error');
    expect(parseRateLimitOverride('lots', 'tpm')).toHaveProperty('error');
  });

  it('validates the GroupRateLimits table', () => {
    expect(parseGroupRateLimits('{"default": {"rpm": 1}}')).toEqual({ default: { rpm: 1, tpm: 0 } });
    for (const bad of [
      '',
      '[]',
      '{"default": 5}',
      '{"default": {"rpm": -1}}',
      '{"default": {"rpm": 1.5}}',
      '{"default": {"rpm": "5"}}',
      '{"default": {"rpm": 1, "burst": 2}}',
      'null',
    ]) {
      expect(parseGroupRateLimits(bad), bad).toBeUndefined();
    }
  });
});

describe('reset durations as OpenAI writes them', () => {
  it.each([
    [0, '0ms'],
    [20, '20ms'],
    [999.2, '1s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [360_000, '6m0s'],
    [61_250, '1m1.25s'],
  ])('%d ms is %s', (milliseconds, text) => {
    expect(formatResetDuration(milliseconds)).toBe(text);
  });
});
