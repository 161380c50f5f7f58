// Routing: among enabled channels serving (group, model), take the highest
// priority, then pick by weight at random. Retries exclude tried channels;
// channels resting after 429s or failures (routing.ts) are passed by.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { groupChannelCandidates, pinnedChannelCandidates } from '../repositories/relayChannels';
import type { CandidateChannel, RelayCache } from './relayCache';
import type { RoutingBook } from './routing';

/** A channel to call; for a multi-key channel, with the key chosen for this call (its `key`, and its id in `keyId`). */
export type RoutedChannel = CandidateChannel & { keyId?: number };

const normalise = (rows: Array<Omit<CandidateChannel, never>>): CandidateChannel[] =>
  rows.map((row) => ({
    ...row,
    id: Number(row.id),
    type: Number(row.type),
    multi_key: Number(row.multi_key),
    priority: Number(row.priority),
    weight: Math.max(1, Number(row.weight)),
  }));

/** What a selection is asked for beyond (group, model). */
export interface Selection {
  /** Channels tried already for this request. */
  exclude: number[];
  /** A key bound to one channel (an admin's test key): that channel or nothing, resting or not. */
  pinnedChannelId?: number;
  cache?: RelayCache;
  /** What the relay remembers of the channels' recent answers: resting channels are passed by. */
  book?: RoutingBook;
  /** The channel this caller was last served by, kept while it is among the best candidates. */
  affinity?: number;
  /** Take a resting channel, the one whose rest ends first, because no other can take the request. */
  resting?: boolean;
  random?: () => number;
}

/** The channel to try, synchronously when the routes of (group, model) are cached. */
export function selectChannel(
  db: Kysely<Database>,
  group: string,
  model: string,
  selection: Selection,
): RoutedChannel | undefined | Promise<RoutedChannel | undefined> {
  let rows: CandidateChannel[] | Promise<CandidateChannel[]>;
  const { pinnedChannelId, cache } = selection;
  if (pinnedChannelId !== undefined) {
    rows = pinnedChannelCandidates(db, pinnedChannelId, model).then(normalise);
    return rows.then((loaded) => pick(loaded, { exclude: selection.exclude }));
  }
  const load = async () => normalise(await groupChannelCandidates(db, group, model));
  rows = cache ? cache.channels(group, model, load) : load();
  return rows instanceof Promise ? rows.then((loaded) => pick(loaded, selection)) : pick(rows, selection);
}

/**
 * Among the rows not excluded: the highest priority, then by weight at random
 * (the caller's affinity first). Resting channels are left out, or with
 * `resting`, only they count and the one whose rest ends first is taken.
 */
function pick(rows: CandidateChannel[], selection: Selection): RoutedChannel | undefined {
  const { exclude, book } = selection;
  if (exclude.length) rows = rows.filter((row) => !exclude.includes(row.id));
  if (book && !book.empty) {
    if (selection.resting) return soonestAwake(rows, book);
    rows = rows.filter((row) => book.restingUntil(row.id) === 0);
  } else if (selection.resting) {
    return undefined;
  }
  if (!rows.length) return undefined;
  if (rows.length === 1) return rows[0];
  let top = -Infinity;
  for (const row of rows) if (row.priority > top) top = row.priority;
  const candidates = rows.filter((row, index) => row.priority === top && rows.findIndex((other) => other.id === row.id) === index);
  if (selection.affinity !== undefined) {
    const kept = candidates.find((row) => row.id === selection.affinity);
    if (kept) return kept;
  }
  let ticket = (selection.random ?? Math.random)() * candidates.reduce((sum, row) => sum + row.weight, 0);
  for (const candidate of candidates) {
    ticket -= candidate.weight;
    if (ticket < 0) return candidate;
  }
  return candidates[candidates.length - 1];
}

/** The resting channel whose rest ends first (the higher priority on a tie), or undefined when none rests. */
function soonestAwake(rows: CandidateChannel[], book: RoutingBook): RoutedChannel | undefined {
  let best: CandidateChannel | undefined;
  let bestUntil = Infinity;
  for (const row of rows) {
    const until = book.restingUntil(row.id);
    if (until === 0) continue;
    if (until < bestUntil || (until === bestUntil && best !== undefined && row.priority > best.priority)) {
      best = row;
      bestUntil = until;
    }
  }
  return best;
}
