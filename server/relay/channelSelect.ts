// Routing: among enabled channels serving (group, model), take the highest
// priority, then pick by weight at random. Retries exclude tried channels.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import type { CandidateChannel, RelayCache } from './relayCache';

/** A channel to call; for a multi-key channel, with the key chosen for this call (its `key`, and its id in `keyId`). */
export type RoutedChannel = CandidateChannel & { keyId?: number };

function candidatesQuery(db: Kysely<Database>, model: string) {
  return db
    .selectFrom('abilities')
    .innerJoin('channels', 'channels.id', 'abilities.channel_id')
    .select([
      'channels.id',
      'channels.name',
      'channels.type',
      'channels.key',
      'channels.base_url',
      'channels.other',
      'channels.model_mapping',
      'channels.multi_key',
      'channels.key_strategy',
      'abilities.priority',
      'abilities.weight',
    ])
    .where('abilities.model', '=', model)
    .where('abilities.enabled', '=', 1)
    .where('channels.status', '=', 1);
}

const normalise = (rows: Array<Omit<CandidateChannel, never>>): CandidateChannel[] =>
  rows.map((row) => ({ ...row, id: Number(row.id), type: Number(row.type), multi_key: Number(row.multi_key), priority: Number(row.priority), weight: Math.max(1, Number(row.weight)) }));

/** The channel to try, synchronously when the routes of (group, model) are cached. */
export function selectChannel(
  db: Kysely<Database>,
  group: string,
  model: string,
  exclude: number[],
  pinnedChannelId?: number,
  random: () => number = Math.random,
  cache?: RelayCache,
): RoutedChannel | undefined | Promise<RoutedChannel | undefined> {
  let rows: CandidateChannel[] | Promise<CandidateChannel[]>;
  if (pinnedChannelId !== undefined) {
    rows = candidatesQuery(db, model).where('channels.id', '=', pinnedChannelId).execute().then(normalise);
  } else {
    const load = async () => normalise(await candidatesQuery(db, model).where('abilities.group', '=', group).execute());
    rows = cache ? cache.channels(group, model, load) : load();
  }
  return rows instanceof Promise ? rows.then((loaded) => pick(loaded, exclude, random)) : pick(rows, exclude, random);
}

/** The highest priority among the rows not excluded, then by weight at random. */
function pick(rows: CandidateChannel[], exclude: number[], random: () => number): RoutedChannel | undefined {
  if (exclude.length) rows = rows.filter((row) => !exclude.includes(row.id));
  if (!rows.length) return undefined;
  if (rows.length === 1) return rows[0];
  let top = -Infinity;
  for (const row of rows) if (row.priority > top) top = row.priority;
  const candidates = rows.filter((row, index) => row.priority === top && rows.findIndex((other) => other.id === row.id) === index);
  let ticket = random() * candidates.reduce((sum, row) => sum + row.weight, 0);
  for (const candidate of candidates) {
    ticket -= candidate.weight;
    if (ticket < 0) return candidate;
  }
  return candidates[candidates.length - 1];
}
