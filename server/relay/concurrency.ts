// How many relayed requests each token and each user has in flight, so one
// key's thousand streams cannot take every upstream connection from everyone
// else. This process always counts its own requests in two Maps. A caller
// with a limit is also counted where every process serving the gateway sees
// it (services/sharedConcurrency.ts): Redis when configured, else, under
// WORKERS=N, the primary process; when neither answers in time the Maps
// decide alone, as they do for a lone process. A caller without any limit
// never leaves this process: no promise, no message, no Redis call.
// A request takes its place once its key is known, before anything is
// reserved, and gives it back on every way out. One limiter per app (so per
// node): plugins/relayContext.ts makes it, its counts shared as the process's
// setup allows.
import type { OptionStore } from '../services/optionStore';
import { isRefusal, type PlaceTaken, type SharedPlaces } from '../services/sharedConcurrency';
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
export function tokenConcurrencyLimit(
  token: { concurrency_limit?: unknown },
  userLimit: number,
  options: Pick<OptionStore, 'number'>,
): number {
  return Math.min(effectiveLimit(token.concurrency_limit, options.number('TokenConcurrencyLimit')), userLimit);
}

/** Wait a second: a slot frees as soon as any of the caller's requests ends. */
const RETRY_AFTER_SECONDS = 1;

export class ConcurrencyLimiter {
  /** In-flight counts of this process by token id and by user id; an id leaves the map when its count drops to 0. */
  readonly byToken = new Map<number, number>();
  readonly byUser = new Map<number, number>();
  /**
   * Places taken in a shared count, by token id. Any of a key's places is as
   * good as another (each counts once against the key and once against its
   * user), so a request that ends gives back the last one taken for its key.
   */
  private readonly sharedHolds = new Map<number, PlaceTaken[]>();
  /**
   * Places of limited callers counted here alone (no shared count answered),
   * by token id: a request of the key that ends gives one of these back
   * before a shared place, so the shared count never drops below what runs.
   */
  private readonly alone = new Map<number, number>();
  /** The shared counts that stopped answering, so each outage is logged once. */
  private readonly unanswered = new Set<SharedPlaces>();

  constructor(
    private readonly options: Pick<OptionStore, 'number'>,
    /** Asked in order for a limited caller; empty for a lone process. */
    private readonly shared: SharedPlaces[] = [],
    private readonly log?: { warn(message: string): void },
  ) {}

  /**
   * Takes a place for the caller, or answers why not (nothing taken then).
   * Synchronous unless the caller has a limit and the count is shared.
   */
  enter(caller: RelayCaller): RelayError | undefined | Promise<RelayError | undefined> {
    const tokenId = Number(caller.token.id);
    const userId = Number(caller.user.id);
    const userLimit = userConcurrencyLimit(caller.user, this.options);
    const tokenLimit = tokenConcurrencyLimit(caller.token, userLimit, this.options);
    if (this.shared.length === 0 || (tokenLimit === Infinity && userLimit === Infinity))
      return this.enterHere(tokenId, userId, tokenLimit, userLimit);
    return this.enterShared(tokenId, userId, tokenLimit, userLimit);
  }

  /** Gives the caller's place back; once for each enter() that returned nothing. */
  leave(caller: RelayCaller): void {
    const tokenId = Number(caller.token.id);
    decrement(this.byToken, tokenId);
    decrement(this.byUser, Number(caller.user.id));
    if (this.alone.size > 0 && this.alone.has(tokenId)) return decrement(this.alone, tokenId);
    if (this.sharedHolds.size === 0) return;
    const holds = this.sharedHolds.get(tokenId);
    if (!holds) return;
    const hold = holds.pop()!;
    if (holds.length === 0) this.sharedHolds.delete(tokenId);
    hold.give();
  }

  /** This process's own count decides. */
  private enterHere(tokenId: number, userId: number, tokenLimit: number, userLimit: number): RelayError | undefined {
    const tokenCount = this.byToken.get(tokenId) ?? 0;
    if (tokenCount >= tokenLimit) return tooMany('token', tokenCount);
    const userCount = this.byUser.get(userId) ?? 0;
    if (userCount >= userLimit) return tooMany('user', userCount);
    this.byToken.set(tokenId, tokenCount + 1);
    this.byUser.set(userId, userCount + 1);
    return undefined;
  }

  /** The first shared count that answers decides; none answering, this process's own does. */
  private async enterShared(tokenId: number, userId: number, tokenLimit: number, userLimit: number): Promise<RelayError | undefined> {
    const ask = { tokenId, userId, tokenLimit, userLimit };
    for (const places of this.shared) {
      const answer = await places.take(ask);
      if (!answer) {
        if (!this.unanswered.has(places)) {
          this.unanswered.add(places);
          this.log?.warn(`requests in flight: ${places.name} did not answer in time; limits count on this process alone until it does`);
        }
        continue;
      }
      if (this.unanswered.delete(places)) this.log?.warn(`requests in flight: ${places.name} answers again; limits count there`);
      if (isRefusal(answer)) return tooMany(answer.scope, answer.count);
      this.byToken.set(tokenId, (this.byToken.get(tokenId) ?? 0) + 1);
      this.byUser.set(userId, (this.byUser.get(userId) ?? 0) + 1);
      const holds = this.sharedHolds.get(tokenId);
      if (holds) holds.push(answer);
      else this.sharedHolds.set(tokenId, [answer]);
      return undefined;
    }
    const refused = this.enterHere(tokenId, userId, tokenLimit, userLimit);
    if (!refused) this.alone.set(tokenId, (this.alone.get(tokenId) ?? 0) + 1);
    return refused;
  }
}

function decrement(counts: Map<number, number>, id: number): void {
  const count = (counts.get(id) ?? 1) - 1;
  if (count > 0) counts.set(id, count);
  else counts.delete(id);
}

function tooMany(scope: 'token' | 'user', count: number): RelayError {
  const message =
    scope === 'token'
      ? `this API key already has ${count} requests in flight, its limit; retry when one ends`
      : `your account already has ${count} requests in flight, its limit; retry when one ends`;
  return { ...relayError(429, message, 'too_many_concurrent_requests', 'rate_limit_error'), retryAfter: RETRY_AFTER_SECONDS };
}

/**
 * For the Fastify routes (images, audio): takes a place and gives it back when
 * the response is over, however it ends (answered, failed, or the client left).
 */
export async function holdPlaceUntilClosed(
  limiter: ConcurrencyLimiter,
  caller: RelayCaller,
  raw: import('node:http').ServerResponse,
): Promise<RelayError | undefined> {
  const refused = await limiter.enter(caller);
  if (refused) return refused;
  // a shared count answers later: the response may have closed meanwhile
  if (raw.closed) limiter.leave(caller);
  else raw.once('close', () => limiter.leave(caller));
  return undefined;
}
