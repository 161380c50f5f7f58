// How many relayed requests each token and each user has in flight on this
// node, so one key's thousand streams cannot take every upstream connection
// from everyone else. The counts live in this process only: each node
// enforces the limit on its own (a limit across nodes needs shared counters,
// a later issue). A request takes its place once its key is known, before
// anything is reserved, and gives it back on every way out.
import type { FastifyInstance } from 'fastify';
import type { OptionStore } from '../services/optionStore';
import { relayError, type RelayError } from './errors';
import type { RelayCaller } from './tokenAuth';

/** The largest per-token or per-user limit the console accepts; -1 is "no limit", 0 "the default". */
export const MAX_CONCURRENCY_LIMIT = 1_000_000;

/**
 * A concurrency_limit from a form: a whole number from -1 to
 * MAX_CONCURRENCY_LIMIT, and for a key at most `ceiling` (its user's limit in
 * effect): a key's owner may narrow the account's limit, never widen it.
 */
export function parseConcurrencyLimit(raw: unknown, ceiling = Infinity): { value: number } | { error: string } {
  const value = typeof raw === 'string' && raw.trim() === '' ? 0 : Number(raw);
  if (!Number.isSafeInteger(value) || value < -1 || value > MAX_CONCURRENCY_LIMIT) {
    return { error: `the concurrency limit must be a whole number from -1 (no limit) to ${MAX_CONCURRENCY_LIMIT}; 0 uses the default` };
  }
  if (value > ceiling) {
    return { error: `a key's concurrency limit may be at most its account's, ${ceiling}; -1 gives the key the account's limit` };
  }
  return { value };
}

/** The limit that applies: the row's own (-1 none), else the option's (0 none). */
function effectiveLimit(own: unknown, fallback: number): number {
  const value = Number(own) || 0;
  if (value === -1) return Infinity;
  if (value > 0) return value;
  return fallback > 0 ? fallback : Infinity;
}

/** A user's limit in effect: their own (-1 none), else the UserConcurrencyLimit option (0 none); Infinity for none. */
export function userConcurrencyLimit(user: { concurrency_limit?: unknown }, options: Pick<OptionStore, 'number'>): number {
  return effectiveLimit(user.concurrency_limit, options.number('UserConcurrencyLimit'));
}

/**
 * A key's limit in effect: its own, else the TokenConcurrencyLimit option,
 * and never above its user's (so -1 on a key means the user's limit, not
 * none, and a key saved before its user's limit was lowered follows it down).
 */
export function tokenConcurrencyLimit(token: { concurrency_limit?: unknown }, userLimit: number, options: Pick<OptionStore, 'number'>): number {
  return Math.min(effectiveLimit(token.concurrency_limit, options.number('TokenConcurrencyLimit')), userLimit);
}

/** Wait a second: a slot frees as soon as any of the caller's requests ends. */
const RETRY_AFTER_SECONDS = 1;

export class ConcurrencyLimiter {
  /** In-flight counts by token id and by user id; an id leaves the map when its count drops to 0. */
  readonly byToken = new Map<number, number>();
  readonly byUser = new Map<number, number>();

  constructor(private readonly options: Pick<OptionStore, 'number'>) {}

  /** Takes a place for the caller, or answers why not (nothing taken then). */
  enter(caller: RelayCaller): RelayError | undefined {
    const tokenId = Number(caller.token.id);
    const userId = Number(caller.user.id);
    const userLimit = userConcurrencyLimit(caller.user, this.options);
    const tokenCount = this.byToken.get(tokenId) ?? 0;
    if (tokenCount >= tokenConcurrencyLimit(caller.token, userLimit, this.options)) {
      return tooMany(`this API key already has ${tokenCount} requests in flight, its limit; retry when one ends`);
    }
    const userCount = this.byUser.get(userId) ?? 0;
    if (userCount >= userLimit) {
      return tooMany(`your account already has ${userCount} requests in flight, its limit; retry when one ends`);
    }
    this.byToken.set(tokenId, tokenCount + 1);
    this.byUser.set(userId, userCount + 1);
    return undefined;
  }

  /** Gives the caller's place back; once for each enter() that returned nothing. */
  leave(caller: RelayCaller): void {
    decrement(this.byToken, Number(caller.token.id));
    decrement(this.byUser, Number(caller.user.id));
  }
}

function decrement(counts: Map<number, number>, id: number): void {
  const count = (counts.get(id) ?? 1) - 1;
  if (count > 0) counts.set(id, count);
  else counts.delete(id);
}

function tooMany(message: string): RelayError {
  return { ...relayError(429, message, 'too_many_concurrent_requests', 'rate_limit_error'), retryAfter: RETRY_AFTER_SECONDS };
}

const limiters = new WeakMap<object, ConcurrencyLimiter>();

/** The limiter of one app (so of one node), by its context like the in-flight registry. */
export function concurrencyLimiter(app: FastifyInstance): ConcurrencyLimiter {
  let limiter = limiters.get(app.ctx);
  if (!limiter) {
    limiter = new ConcurrencyLimiter(app.ctx.options);
    limiters.set(app.ctx, limiter);
  }
  return limiter;
}

/**
 * For the Fastify routes (images, audio): takes a place and gives it back when
 * the response is over, however it ends (answered, failed, or the client left).
 */
export function holdPlaceUntilClosed(app: FastifyInstance, caller: RelayCaller, raw: import('node:http').ServerResponse): RelayError | undefined {
  const limiter = concurrencyLimiter(app);
  const refused = limiter.enter(caller);
  if (refused) return refused;
  raw.once('close', () => limiter.leave(caller));
  return undefined;
}
