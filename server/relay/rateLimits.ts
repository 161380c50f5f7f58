// Requests and tokens per minute per key and per user (the user's limit comes
// from their group, or their own override: common/rateLimits.ts), enforced
// across nodes. With Redis every node charges the same buckets through one
// Lua script (GCRA, server/relay/gcra.ts: atomic, so two nodes can never both
// take the last unit, and timed by Redis's clock, so nodes' clocks need not
// agree). Without Redis, and while it is down or slower than its command
// timeout, the node counts in memory with the same algorithm: a request is
// never failed because Redis is.
//
// Tokens: a request is charged its prompt's upper bound (the byte bound the
// reservation uses; no tokenizer on the hot path) when admitted, and
// corrected to what the answer really used once it is settled, or given
// back if it is not. The bound never under-counts a prompt, so a burst of
// concurrent requests cannot overshoot the limit before their answers are
// counted; the excess goes back within the request's own lifetime. (The
// reservation amount would count the whole output limit, often thousands of
// tokens never produced, and it is quota, not tokens.)
//
// The check runs after the key, the model and its price are known and before
// anything is reserved: a refused request holds and costs nothing.
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import { parseGroupRateLimits, userRateLimits, type RateLimitPair } from '../../common/rateLimits';
import type { OptionStore } from '../services/optionStore';
import { relayError, type RelayError } from './errors';
import { bucketState, MemoryGcra, WINDOW_MS, type BucketCharge, type BucketState, type GcraResult } from './gcra';
import type { RelayCaller } from './tokenAuth';

/** After failed Redis commands, how long the limiter counts in memory before trying Redis again. */
const REDIS_RETRY_AFTER_MS = 1000;
/**
 * How long Redis must keep failing (no success in between) before it is
 * skipped for REDIS_RETRY_AFTER_MS. A burst of timeouts at one moment is most
 * often this node's own stall (a busy event loop fires the commands' timers
 * before it reads the answers waiting in its socket): the next requests ask
 * Redis again, so only those caught in the stall count alone, not a whole
 * second of them on every node (each node counting alone admits the whole
 * limit).
 */
const REDIS_FAILING_FOR_MS_BEFORE_SKIP = 500;

/** A script's `now` in ms: ARGV[1] when given (tests fix the clock), else Redis's own clock, the same for every node. */
const SCRIPT_CLOCK = `
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
end
`;

/**
 * KEYS: the buckets. ARGV[1]: now in ms ('' = Redis's clock), then for each
 * bucket its limit, cost and need. Returns {1|0, now, retryMs, tat...}, the
 * numbers as strings (Lua numbers would be cut to integers).
 */
const ADMIT_SCRIPT = `${SCRIPT_CLOCK}local window = ${WINDOW_MS}
local bases = {}
local retry = -1
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[i * 3 - 1])
  local need = tonumber(ARGV[i * 3 + 1])
  local base = tonumber(redis.call('GET', key) or '0')
  if base < now then base = now end
  bases[i] = base
  local wouldBe = base + need * window / limit
  if wouldBe - now > window + 0.000001 then
    retry = math.max(retry, wouldBe - window - now)
  end
end
local reply = {}
if retry >= 0 then
  reply[1] = 0
  reply[2] = string.format('%.3f', now)
  reply[3] = string.format('%.3f', retry)
  for i = 1, #KEYS do reply[i + 3] = string.format('%.3f', bases[i]) end
  return reply
end
reply[1] = 1
reply[2] = string.format('%.3f', now)
reply[3] = '0'
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[i * 3 - 1])
  local cost = tonumber(ARGV[i * 3])
  local tat = bases[i] + cost * window / limit
  redis.call('SET', key, string.format('%.3f', tat), 'PX', math.max(1, math.ceil(tat - now)))
  reply[i + 3] = string.format('%.3f', tat)
end
return reply
`;

/** KEYS[1]: the bucket. ARGV: now ('' = Redis's clock), limit, units (may be negative). */
const ADJUST_SCRIPT = `${SCRIPT_CLOCK}local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
tat = tat + tonumber(ARGV[3]) * ${WINDOW_MS} / tonumber(ARGV[2])
if tat <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.max(1, math.ceil(tat - now)))
end
return 1
`;

type ScriptedRedis = Redis & {
  switchboardRateAdmit(keyCount: number, ...args: string[]): Promise<string[]>;
  switchboardRateAdjust(keyCount: number, ...args: string[]): Promise<number>;
};

function scripted(redis: Redis): ScriptedRedis {
  const client = redis as ScriptedRedis;
  if (typeof client.switchboardRateAdmit !== 'function') {
    redis.defineCommand('switchboardRateAdmit', { lua: ADMIT_SCRIPT });
    redis.defineCommand('switchboardRateAdjust', { lua: ADJUST_SCRIPT });
  }
  return client;
}

/** One admission by the Lua script; `now` (ms) only where a test needs the clock fixed, else Redis's own. */
export async function redisGcraAdmit(redis: Redis, charges: BucketCharge[], now?: number): Promise<GcraResult> {
  const args = [...charges.map((charge) => charge.key), now === undefined ? '' : String(now)];
  for (const charge of charges) args.push(String(charge.limit), String(charge.cost), String(charge.need));
  const reply = await scripted(redis).switchboardRateAdmit(charges.length, ...args);
  const scriptNow = Number(reply[1]);
  const tats = reply.slice(3).map(Number);
  return {
    admitted: Number(reply[0]) === 1,
    retryMs: Number(reply[2]),
    buckets: charges.map((charge, index) => bucketState(tats[index], scriptNow, charge.limit)),
  };
}

/** A correction by the Lua script (`now` as above). */
export function redisGcraAdjust(redis: Redis, key: string, limit: number, units: number, now?: number): Promise<number> {
  return scripted(redis).switchboardRateAdjust(1, key, now === undefined ? '' : String(now), String(limit), String(units));
}

/** Where the buckets of a request live, for the correction after its answer. */
type Store = 'redis' | 'memory';

/** An admitted request's charge on the token buckets, corrected once after its answer. */
export interface RateTicket {
  store: Store;
  /** The token buckets charged, with the estimate charged. */
  tokenBuckets: Array<{ key: string; limit: number }>;
  estimate: number;
  /** Set once corrected: a second settle or release changes nothing. */
  done: boolean;
}

/** What a bucket was for: the headers and the refusal name it. */
interface Bucket extends BucketCharge {
  kind: 'requests' | 'tokens';
  owner: 'key' | 'account';
}

export interface RateDecision {
  /** The refusal (429 with Retry-After), undefined when admitted. */
  refused?: RelayError;
  /** OpenAI's x-ratelimit-* headers, on the refusal and on the answer. */
  headers: Record<string, string>;
  /** Present when admitted with a token limit: settle or release corrects it. */
  ticket?: RateTicket;
}

/** A duration as OpenAI writes its reset headers (`20ms`, `1.5s`, `6m0s`). */
export function formatResetDuration(milliseconds: number): string {
  const ms = Math.max(0, Math.ceil(milliseconds));
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Number(((ms % 60_000) / 1000).toFixed(3));
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** The bucket of each kind closest to refusing: what the headers report. */
function rateHeaders(buckets: Bucket[], states: BucketState[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    let tightest: BucketState | undefined;
    buckets.forEach((bucket, index) => {
      if (bucket.kind === kind && (!tightest || states[index].remaining < tightest.remaining)) tightest = states[index];
    });
    if (!tightest) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(tightest.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(tightest.remaining);
    headers[`x-ratelimit-reset-${kind}`] = formatResetDuration(tightest.resetMs);
  }
  return headers;
}

const NO_BUCKETS: Bucket[] = [];

export class RelayRateLimiter {
  private readonly memory = new MemoryGcra();
  private redisSkippedUntil = 0;
  /** Date.now() of the first failure since Redis last answered; 0 while it answers. */
  private redisFailingSince = 0;
  private parsedGroups: { raw: string; table: Record<string, RateLimitPair> } | undefined;

  constructor(
    private readonly options: Pick<OptionStore, 'get'>,
    private readonly redis?: Redis,
    /** Prefixes every Redis key (deployments, or test runs, sharing one Redis). */
    private readonly keyPrefix = '',
  ) {}

  /** The GroupRateLimits table, parsed once per value (a bad stored value never reaches here: the store keeps the default). */
  groups(): Record<string, RateLimitPair> {
    const raw = this.options.get('GroupRateLimits');
    if (this.parsedGroups?.raw !== raw) this.parsedGroups = { raw, table: parseGroupRateLimits(raw) ?? {} };
    return this.parsedGroups.table;
  }

  /** The user's limits and the key's own, as they apply to this caller. */
  limitsOf(caller: RelayCaller): { user: RateLimitPair; token: RateLimitPair } {
    const user = userRateLimits(caller.user, this.groups());
    return { user, token: { rpm: Number(caller.token.rpm_limit ?? 0), tpm: Number(caller.token.tpm_limit ?? 0) } };
  }

  private bucketsOf(caller: RelayCaller, estimate: number): Bucket[] {
    const { user, token } = this.limitsOf(caller);
    // the common case, nothing limited: no keys built, nothing allocated beyond the limits
    if (user.rpm === 0 && user.tpm === 0 && token.rpm === 0 && token.tpm === 0) return NO_BUCKETS;
    const userId = Number(caller.user.id);
    // one hash tag per user: a Redis Cluster keeps all of a request's buckets on one shard
    const userPrefix = `${this.keyPrefix}rl:{u${userId}}`;
    const tokenPrefix = `${userPrefix}:k${Number(caller.token.id)}`;
    const buckets: Bucket[] = [];
    const add = (prefix: string, owner: Bucket['owner'], limits: RateLimitPair) => {
      if (limits.rpm > 0) buckets.push({ key: `${prefix}:r`, limit: limits.rpm, cost: 1, need: 1, kind: 'requests', owner });
      if (limits.tpm > 0)
        buckets.push({
          key: `${prefix}:t`,
          limit: limits.tpm,
          cost: estimate,
          need: Math.min(estimate, limits.tpm),
          kind: 'tokens',
          owner,
        });
    };
    add(tokenPrefix, 'key', token);
    add(userPrefix, 'account', user);
    return buckets;
  }

  /**
   * Charges one request (and `estimate` tokens) to the caller's buckets, or
   * refuses it. Undefined when no limit applies (no promise, no Redis call).
   */
  admit(caller: RelayCaller, estimate: number): Promise<RateDecision> | undefined {
    const buckets = this.bucketsOf(caller, Math.max(0, Math.ceil(estimate)));
    return buckets.length === 0 ? undefined : this.admitBuckets(buckets);
  }

  private async admitBuckets(buckets: Bucket[]): Promise<RateDecision> {
    let store: Store = 'memory';
    let result: GcraResult | undefined;
    if (this.redisUsable()) {
      result = await this.admitInRedis(buckets);
      if (result) {
        store = 'redis';
        // what Redis said, kept here: should Redis fail next (a timeout on a busy node, an outage), this node
        // goes on from the shared state it last saw, not from full buckets (which would admit a burst)
        const now = Date.now();
        buckets.forEach((bucket, index) => this.memory.sync(bucket.key, now + result!.buckets[index].resetMs, now));
      }
    }
    result ??= this.memory.admit(buckets);
    const headers = rateHeaders(buckets, result.buckets);
    if (!result.admitted) return { refused: this.refusal(buckets, result), headers };
    const tokenBuckets = buckets.filter((bucket) => bucket.kind === 'tokens').map(({ key, limit }) => ({ key, limit }));
    return {
      headers,
      ticket:
        tokenBuckets.length > 0
          ? { store, tokenBuckets, estimate: buckets.find((bucket) => bucket.kind === 'tokens')!.cost, done: false }
          : undefined,
    };
  }

  /** Replaces the estimate by what the request really used (0 when it was given back); once per ticket, off the hot path. */
  correct(ticket: RateTicket, usedTokens: number): void {
    if (ticket.done) return;
    ticket.done = true;
    const units = Math.max(0, Math.ceil(usedTokens)) - ticket.estimate;
    if (units === 0) return;
    for (const bucket of ticket.tokenBuckets) {
      // the copy here follows (see admitBuckets), and takes the correction alone when Redis fails it
      this.memory.adjust(bucket.key, bucket.limit, units);
      if (ticket.store === 'redis' && this.redisUsable())
        redisGcraAdjust(this.redis!, bucket.key, bucket.limit, units).catch(() => undefined);
    }
  }

  private redisUsable(): boolean {
    // a client that is not connected would only fail, and one that just timed out would likely again: skip the attempt
    return this.redis?.status === 'ready' && Date.now() >= this.redisSkippedUntil;
  }

  /** The script's answer, or undefined when Redis failed (the caller counts in memory then). */
  private async admitInRedis(buckets: Bucket[]): Promise<GcraResult | undefined> {
    try {
      const result = await redisGcraAdmit(this.redis!, buckets);
      this.redisFailingSince = 0;
      return result;
    } catch {
      // Redis went away mid-command or timed out: this request counts here; once Redis has failed for a while
      // with no answer between, the next ones do too for a time (the client logs the outage)
      const now = Date.now();
      if (this.redisFailingSince === 0) this.redisFailingSince = now;
      else if (now - this.redisFailingSince >= REDIS_FAILING_FOR_MS_BEFORE_SKIP) this.redisSkippedUntil = now + REDIS_RETRY_AFTER_MS;
      return undefined;
    }
  }

  private refusal(buckets: Bucket[], result: GcraResult): RelayError {
    // name the bucket that refused: the one whose wait is the longest
    let worst = buckets[0];
    let worstWait = -Infinity;
    buckets.forEach((bucket, index) => {
      const wait = result.buckets[index].resetMs + bucket.need * (WINDOW_MS / bucket.limit) - WINDOW_MS;
      if (wait > worstWait) {
        worstWait = wait;
        worst = bucket;
      }
    });
    const what = worst.kind === 'requests' ? 'requests per minute (RPM)' : 'tokens per minute (TPM)';
    const whose = worst.owner === 'key' ? 'this API key' : 'your account';
    const seconds = Math.max(1, Math.ceil(result.retryMs / 1000));
    const error = relayError(
      429,
      `Rate limit reached for ${whose} on ${what}: limit ${worst.limit}. Please try again in ${formatResetDuration(result.retryMs)}.`,
      'rate_limit_exceeded',
      worst.kind,
    );
    error.retryAfter = seconds;
    return error;
  }
}

/** Puts the x-ratelimit-* headers on the answer to come (whatever writes its head later keeps them). */
export function setRateHeaders(response: ServerResponse, headers: Record<string, string>): void {
  if (response.headersSent) return;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
}
