// The rate-limit algorithm of the relay: GCRA (the generic cell rate
// algorithm), one number per bucket, the theoretical arrival time (TAT) in
// milliseconds. A bucket of `limit` units per minute spends 60000/limit ms per
// unit and holds at most a minute of them: a full bucket admits `limit` at
// once, then `limit` per minute. Tokens are charged as an amount: an estimate
// up front, corrected by the real count after the answer (adjust()). The same
// steps run in memory (below) and in Redis (the Lua script in
// server/relay/rateLimits.ts), so a node without Redis, or whose Redis is
// down, enforces the same limits on its own.

/** The window a bucket holds: a full bucket is a minute's worth of its limit. */
export const WINDOW_MS = 60_000;

/** One bucket to pass: its key, limit per minute, what it is charged, and what must fit to pass. */
export interface BucketCharge {
  key: string;
  limit: number;
  /** Units charged on admission (1 request; the token estimate). */
  cost: number;
  /** Units that must fit in the bucket now (a request larger than the limit waits for a full bucket, it is not refused forever). */
  need: number;
}

/** A bucket after an admission (or as it stands, after a refusal). */
export interface BucketState {
  limit: number;
  /** Units left in the bucket. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface GcraResult {
  admitted: boolean;
  /** When refused: milliseconds until the request would pass. */
  retryMs: number;
  /** One per bucket, in order. */
  buckets: BucketState[];
}

const EPSILON = 1e-6;

/** What a bucket shows at `now` with `tat` as its arrival time. */
export function bucketState(tat: number, now: number, limit: number): BucketState {
  const interval = WINDOW_MS / limit;
  const backlog = Math.max(0, tat - now);
  return { limit, remaining: Math.max(0, Math.floor((WINDOW_MS - backlog) / interval + EPSILON)), resetMs: Math.ceil(backlog) };
}

/**
 * One admission over several buckets, all or nothing: passes when every
 * bucket has room for its `need`, then charges each its `cost`. `tats` are
 * the stored arrival times (undefined: a full bucket); the new ones are
 * returned for the store to keep (only when admitted).
 */
export function gcraAdmit(tats: Array<number | undefined>, now: number, charges: BucketCharge[]): GcraResult & { newTats: number[] } {
  let retryMs = -1;
  const bases = charges.map((charge, index) => Math.max(tats[index] ?? now, now));
  charges.forEach((charge, index) => {
    const wouldBe = bases[index] + charge.need * (WINDOW_MS / charge.limit);
    if (wouldBe - now > WINDOW_MS + EPSILON) retryMs = Math.max(retryMs, wouldBe - WINDOW_MS - now);
  });
  if (retryMs >= 0) {
    return { admitted: false, retryMs, newTats: [], buckets: charges.map((charge, index) => bucketState(bases[index], now, charge.limit)) };
  }
  const newTats = charges.map((charge, index) => bases[index] + charge.cost * (WINDOW_MS / charge.limit));
  return { admitted: true, retryMs: 0, newTats, buckets: charges.map((charge, index) => bucketState(newTats[index], now, charge.limit)) };
}

/** A correction after the fact (units may be negative: an estimate larger than the real count gives the difference back). */
export function gcraAdjust(tat: number | undefined, now: number, limit: number, units: number): number {
  return Math.max(tat ?? now, now) + units * (WINDOW_MS / limit);
}

/** Arrival times in this process: the store without Redis, and while Redis is down. */
export class MemoryGcra {
  private readonly tats = new Map<string, number>();

  admit(charges: BucketCharge[], now = Date.now()): GcraResult {
    if (this.tats.size > 100_000) this.sweep(now);
    const result = gcraAdmit(
      charges.map((charge) => this.tats.get(charge.key)),
      now,
      charges,
    );
    if (result.admitted) charges.forEach((charge, index) => this.tats.set(charge.key, result.newTats[index]));
    return result;
  }

  adjust(key: string, limit: number, units: number, now = Date.now()): void {
    const tat = gcraAdjust(this.tats.get(key), now, limit, units);
    if (tat <= now) this.tats.delete(key);
    else this.tats.set(key, tat);
  }

  /** Takes a bucket's arrival time as another store has it (the copy of what Redis said). */
  sync(key: string, tat: number, now = Date.now()): void {
    if (tat <= now) this.tats.delete(key);
    else this.tats.set(key, tat);
  }

  /** Drops the buckets that are full again (they read the same as absent ones). */
  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }
}
