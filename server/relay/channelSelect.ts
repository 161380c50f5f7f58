// Routing: among enabled channels serving (group, model), take the highest
// priority, then pick by weight at random. Retries exclude tried channels.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

export interface RoutedChannel {
  id: number;
  type: number;
  key: string;
  base_url: string;
  other: string;
  model_mapping: string;
  priority: number;
  weight: number;
}

export async function selectChannel(
  db: Kysely<Database>,
  group: string,
  model: string,
  exclude: number[],
  pinnedChannelId?: number,
  random: () => number = Math.random,
): Promise<RoutedChannel | undefined> {
  let query = db
    .selectFrom('abilities')
    .innerJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['channels.id', 'channels.type', 'channels.key', 'channels.base_url', 'channels.other', 'channels.model_mapping', 'abilities.priority', 'abilities.weight'])
    .where('abilities.model', '=', model)
    .where('abilities.enabled', '=', 1)
    .where('channels.status', '=', 1);
  if (pinnedChannelId !== undefined) query = query.where('channels.id', '=', pinnedChannelId);
  else query = query.where('abilities.group', '=', group);
  if (exclude.length) query = query.where('channels.id', 'not in', exclude);
  const rows = (await query.execute()).map((row) => ({ ...row, id: Number(row.id), type: Number(row.type), priority: Number(row.priority), weight: Math.max(1, Number(row.weight)) }));
  if (!rows.length) return undefined;
  const top = Math.max(...rows.map((row) => row.priority));
  const candidates = rows.filter((row, index) => row.priority === top && rows.findIndex((other) => other.id === row.id) === index);
  let ticket = random() * candidates.reduce((sum, row) => sum + row.weight, 0);
  for (const candidate of candidates) {
    ticket -= candidate.weight;
    if (ticket < 0) return candidate;
  }
  return candidates[candidates.length - 1];
}
