// Per-client-IP limits on the sensitive console endpoints (sign-in, sign-up,
// codes, resets, top-up). The client IP is the socket address unless
// TRUSTED_PROXY is set, so X-Forwarded-For cannot be used to dodge a limit.
// With Redis the counters are shared by every node; otherwise per process.
// While Redis is unreachable (or slower than its command timeout) the node
// counts in memory instead, so sign-in never waits on or fails with Redis.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import { fail } from '../../common/envelope';

export interface RateLimitRule {
  /** Requests allowed per window; 0 turns the limit off. */
  max: number;
  windowSeconds: number;
}

export interface RateLimitConfig {
  /** Login, registration, e-mail codes, password reset, OAuth callbacks. */
  critical: RateLimitRule;
  topUp: RateLimitRule;
}

export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  critical: { max: 20, windowSeconds: 20 * 60 },
  topUp: { max: 20, windowSeconds: 60 },
};

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

  constructor(private readonly redis?: Redis) {}

  /** Counts a request; true when it is within the limit. */
  async allow(bucket: string, ip: string, rule: RateLimitRule): Promise<boolean> {
    if (rule.max <= 0) return true;
    const key = `ratelimit:${bucket}:${ip}`;
    // a client that is not connected would only fail, and one that just timed out would likely again: skip the attempt
    if (this.redis?.status === 'ready' && Date.now() >= this.redisSkippedUntil) {
      const window = Math.floor(Date.now() / 1000 / rule.windowSeconds);
      const windowKey = `${key}:${window}`;
      try {
        const [[error, count]] = (await this.redis.multi().incr(windowKey).expire(windowKey, rule.windowSeconds).exec()) as [[Error | null, number], [Error | null, number]];
        if (!error) return count <= rule.max;
      } catch {
        // Redis went away mid-command or timed out (hangs): count here for a while (the client logs an outage)
        this.redisSkippedUntil = Date.now() + REDIS_RETRY_AFTER_MS;
      }
    }
    return this.memory.hit(key, rule.windowSeconds) <= rule.max;
  }
}

export function rateLimit(bucket: keyof RateLimitConfig): preHandlerAsyncHookHandler {
  return async function limitRate(request: FastifyRequest, reply: FastifyReply) {
    const { rateLimiter, config } = request.server.ctx;
    if (!(await rateLimiter.allow(bucket, request.ip, config.rateLimits[bucket]))) {
      return reply.code(429).send(fail('too many requests, please try again later'));
    }
  };
}
