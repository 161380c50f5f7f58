// The system's own switches of a channel's status (channels/autoDisable.ts):
// each flips only from the status it expects, so concurrent failures or tests
// flip a channel (and tell about it) once.
import type { Kysely } from 'kysely';
import { ChannelStatus } from '../../common/roles';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** Disables an enabled channel on behalf of the system (auto_disabled = 1); whether it flipped. */
export async function autoDisableChannel(db: Executor, channelId: number): Promise<boolean> {
  const flipped = await db
    .updateTable('channels')
    .set({ status: ChannelStatus.disabled, auto_disabled: 1 })
    .where('id', '=', channelId)
    .where('status', '=', ChannelStatus.enabled)
    .executeTakeFirst();
  return Number(flipped.numUpdatedRows) === 1;
}

/** Re-enables a channel the system had disabled (never one an admin disabled); whether it flipped. */
export async function autoReenableChannel(db: Executor, channelId: number): Promise<boolean> {
  const flipped = await db
    .updateTable('channels')
    .set({ status: ChannelStatus.enabled, auto_disabled: 0 })
    .where('id', '=', channelId)
    .where('status', '=', ChannelStatus.disabled)
    .where('auto_disabled', '=', 1)
    .executeTakeFirst();
  return Number(flipped.numUpdatedRows) === 1;
}

/** A channel's name and type, for the notices about it. */
export function channelNameAndType(db: Executor, channelId: number) {
  return db.selectFrom('channels').select(['name', 'type']).where('id', '=', channelId).executeTakeFirst();
}
