// What an import writes (the Plan, mapped in memory before anything is
// written), and what the mapping steps (mapUsers.ts, mapTokens.ts, ...)
// share while they build it: the offsets, and the clashes, uncarried fields
// and quota totals each of them adds to, in order.
import { Uncarried } from './outcome';
import { ZERO, type QuotaTotals } from './quotaTotals';
import type { Offsets } from './targetState';

export interface Plan {
  users: Array<Record<string, unknown> & { id: number }>;
  tokens: Array<Record<string, unknown> & { id: number }>;
  channels: Array<
    Record<string, unknown> & { id: number; models: string; group: string; status: number; priority: number; weight: number }
  >;
  /** The keys of new-api's multi-key channels, each its own row here. */
  channelKeys: Array<{ channel_id: number; key: string; status: number; last_error: string; created_time: number }>;
  redemptions: Array<Record<string, unknown> & { id: number }>;
  options: Array<{ key: string; value: string }>;
  offsets: Offsets;
}

/** Shared by the mapping steps, each adding to it. */
export interface MappingState {
  merge: boolean;
  offsets: Offsets;
  /** Usernames and keys that clashed with the target's (--merge). */
  clashes: string[];
  uncarried: Uncarried;
  /** The source's live rows' quota. */
  sourceTotals: QuotaTotals;
  /** The quota of the rows carried. */
  carried: QuotaTotals;
}

/** A mapping state with nothing noted yet. */
export function newMappingState(merge: boolean, offsets: Offsets): MappingState {
  return { merge, offsets, clashes: [], uncarried: new Uncarried(), sourceTotals: { ...ZERO }, carried: { ...ZERO } };
}
