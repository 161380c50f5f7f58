// The channels the relay may route a model to: enabled abilities of enabled
// channels, with what a call needs of each (relay/channelSelect.ts picks).
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

function candidatesQuery(db: Executor, model: string) {
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

/** The enabled channels of a group that serve a model, as rows (one per ability). */
export function groupChannelCandidates(db: Executor, group: string, model: string) {
  return candidatesQuery(db, model).where('abilities.group', '=', group).execute();
}

/** The one channel a key is pinned to, when enabled and serving the model (a row per ability of it). */
export function pinnedChannelCandidates(db: Executor, channelId: number, model: string) {
  return candidatesQuery(db, model).where('channels.id', '=', channelId).execute();
}
