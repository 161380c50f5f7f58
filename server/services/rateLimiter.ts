// Per-client-IP limits on the sensitive console endpoints (sign-in, sign-up,
// codes, resets, top-up). The client IP is the socket address unless
// TRUSTED_PROXY is set, so X-Forwarded-For cannot be used to dodge a limit.
// With Redis the counters are shared by every node; otherwise per process.
// While Redis is unreachable (or slower than its command timeout) the node
// counts in memory instead, so sign-in never waits on or fails with Redis.
import type { Redis } from 'ioredis';
import { DEFAULT_LOGIN_LIMITS, type LoginLimitConfig, type RateLimitRule } from '../config';

/** Fixed-window counters in memory, swept as windows pass. */
class MemoryCounter {
  private readonly windows = new Map<string, { resetAt: number; count: number }>();

  hit(key: string, windowSeconds: number): number {
    const now = Date.now();
    const entry = this.windows.get(key);
    if (!entry || entry.resetAt <= now) {
      if (this.windows.size > 10_000) for (const [name, value] of this.windows) if (value.resetAt <= now) this.windows.delete(name);
      this.windows.set(key, { resetAt: now + windowSeconds * 1000, count: 1 });
      return 1;
    }
    entry.count += 1;
    return entry.count;
  }
}

/** After a failed Redis command, how long the limiter counts in memory before trying Redis again. */
const REDIS_RETRY_AFTER_MS = 1000;

export class RateLimiter {
  private readonly memory = new MemoryCounter();
  private redisSkippedUntil = 0;

  /** `keyPrefix` (REDIS_KEY_PREFIX) starts every Redis key, so deployments (or test runs) sharing a Redis count apart. */
  constructor(
    private readonly redis?: Redis,
    readonly keyPrefix = '',
  ) {}

  /** Counts a request; true when it is within the limit. */
  async allow(bucket: string, ip: string, rule: RateLimitRule): Promise<boolean> {
    if (rule.max <= 0) return true;
    const key = `${this.keyPrefix}ratelimit:${bucket}:${ip}`;
    // a client that is not connected would only fail, and one that just timed out would likely again: skip the attempt
    if (this.redis?.status === 'ready' && Date.now() >= this.redisSkippedUntil) {
      const window = Math.floor(Date.now() / 1000 / rule.windowSeconds);
      const windowKey = `${key}:${window}`;
      try {
        const [[error, count]] = (await this.redis.multi().incr(windowKey).expire(windowKey, rule.windowSeconds).exec()) as [
          [Error | null, number],
          [Error | null, number],
        ];
        if (!error) return count <= rule.max;
      } catch {
        // Redis went away mid-command or timed out (hangs): count here for a while (the client logs an outage)
        this.redisSkippedUntil = Date.now() + REDIS_RETRY_AFTER_MS;
      }
    }
    return this.memory.hit(key, rule.windowSeconds) <= rule.max;
  }
}

// ---- sign-in: failed attempts per (IP, account) and per IP ----

/**
 * Failure counters kept apart from RateLimiter's: they are read before a
 * secret is checked and bumped only when it was wrong, so right answers never
 * count. For sign-in, one attacker's guesses lock only (their IP, that
 * account) out, or their IP once it sprays many accounts; for e-mail codes,
 * (their IP, that address). Shared through Redis when there is one; a Redis
 * error falls back to this node's own counts rather than failing the request.
 */
export class FailureCounter {
  private readonly memory = new Map<string, { resetAt: number; count: number }>();

  /** `keyPrefix` (REDIS_KEY_PREFIX) starts every Redis key, so deployments (or test runs) sharing a Redis count apart. */
  constructor(
    private readonly redis?: Redis,
    private readonly keyPrefix = '',
  ) {}

  private windowKey(key: string, rule: RateLimitRule): string {
    return `${this.keyPrefix}failures:${key}:${Math.floor(Date.now() / 1000 / rule.windowSeconds)}`;
  }

  async count(key: string, rule: RateLimitRule): Promise<number> {
    if (this.redis) {
      try {
        return Number((await this.redis.get(this.windowKey(key, rule))) ?? 0);
      } catch {
        // counted locally below
      }
    }
    const entry = this.memory.get(key);
    return entry && entry.resetAt > Date.now() ? entry.count : 0;
  }

  async add(key: string, rule: RateLimitRule): Promise<void> {
    const now = Date.now();
    const entry = this.memory.get(key);
    if (!entry || entry.resetAt <= now) {
      if (this.memory.size > 10_000) for (const [name, value] of this.memory) if (value.resetAt <= now) this.memory.delete(name);
      this.memory.set(key, { resetAt: now + rule.windowSeconds * 1000, count: 1 });
    } else {
      entry.count += 1;
    }
    if (this.redis) {
      const windowKey = this.windowKey(key, rule);
      await this.redis
        .multi()
        .incr(windowKey)
        .expire(windowKey, rule.windowSeconds)
        .exec()
        .catch(() => undefined);
    }
  }
}

const failureCounters = new WeakMap<object, FailureCounter>();

interface LimitContext {
  rateLimiter: RateLimiter;
  redis?: Redis;
}

function failureCounterOf(ctx: LimitContext): FailureCounter {
  let counter = failureCounters.get(ctx.rateLimiter);
  if (!counter) {
    counter = new FailureCounter(ctx.redis, ctx.rateLimiter.keyPrefix);
    failureCounters.set(ctx.rateLimiter, counter);
  }
  return counter;
}

/** A limit on wrong answers: `blocked()` before checking, `failed()` after a wrong one. */
export function failureLimit(ctx: LimitContext, key: string, rule: RateLimitRule) {
  const counter = failureCounterOf(ctx);
  return {
    blocked: async () => rule.max > 0 && (await counter.count(key, rule)) >= rule.max,
    failed: async () => {
      if (rule.max > 0) await counter.add(key, rule);
    },
  };
}

/** The sign-in limits for one attempt: `blocked()` before checking the password, `failed()` after a wrong one. */
export function loginLimits(ctx: LimitContext & { config: { loginLimits?: LoginLimitConfig } }, ip: string, username: string) {
  const counter = failureCounterOf(ctx);
  const limits = ctx.config.loginLimits ?? DEFAULT_LOGIN_LIMITS;
  // usernames compare case-insensitively on MySQL: count them so everywhere
  const accountKey = `login-account:${ip}:${username.toLowerCase()}`;
  const ipKey = `login-ip:${ip}`;
  const over = async (key: string, rule: RateLimitRule) => rule.max > 0 && (await counter.count(key, rule)) >= rule.max;
  return {
    blocked: async () => (await over(accountKey, limits.perAccount)) || over(ipKey, limits.perIp),
    failed: async () => {
      if (limits.perAccount.max > 0) await counter.add(accountKey, limits.perAccount);
      if (limits.perIp.max > 0) await counter.add(ipKey, limits.perIp);
    },
  };
}
