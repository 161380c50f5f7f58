// Routing: among enabled channels serving (group, model), take the highest
// priority, then pick by weight at random. Retries exclude tried channels.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import type { CandidateChannel, RelayCache } from './relayCache';

export type RoutedChannel = CandidateChannel;

function candidatesQuery(db: Kysely<Database>, model: string) {
  return db
    .selectFrom('abilities')
    .innerJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['channels.id', 'channels.type', 'channels.key', 'channels.base_url', 'channels.other', 'channels.model_mapping', 'abilities.priority', 'abilities.weight'])
    .where('abilities.model', '=', model)
    .where('abilities.enabled', '=', 1)
    .where('channels.status', '=', 1);
}

const normalise = (rows: Array<Omit<CandidateChannel, never>>): CandidateChannel[] =>
  rows.map((row) => ({ ...row, id: Number(row.id), type: Number(row.type), priority: Number(row.priority), weight: Math.max(1, Number(row.weight)) }));

export async function selectChannel(
  db: Kysely<Database>,
  group: string,
  model: string,
  exclude: number[],
  pinnedChannelId?: number,
  random: () => number = Math.random,
  cache?: RelayCache,
): Promise<RoutedChannel | undefined> {
  let rows: CandidateChannel[];
  if (pinnedChannelId !== undefined) {
    rows = normalise(await candidatesQuery(db, model).where('channels.id', '=', pinnedChannelId).execute());
  } else {
    const load = async () => normalise(await candidatesQuery(db, model).where('abilities.group', '=', group).execute());
    rows = cache ? await cache.channels(group, model, load) : await load();
  }
  if (exclude.length) rows = rows.filter((row) => !exclude.includes(row.id));
  if (!rows.length) return undefined;
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
