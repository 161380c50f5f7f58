// The queries behind the first-run checklist (common/setupChecklist.ts): each
// step is read from the rows it leaves behind, never from a flag of its own.
import type { Kysely } from 'kysely';
import { LogType } from '../../common/roles';
import type { SetupStep } from '../../common/setupChecklist';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** Whether any row of `table` exists. */
async function anyRow(db: Executor, table: 'channels' | 'tokens'): Promise<boolean> {
  return (await db.selectFrom(table).select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * The password is no longer the one set at first start (bootstrap.ts: generated or INITIAL_ROOT_PASSWORD).
 * Only its hash is stored, and every way of changing a password (the user's own, a reset by e-mail, an
 * admin's edit) bumps session_version from the 0 it was created with, so that is the mark.
 */
async function passwordChanged(db: Executor, userId: number): Promise<boolean> {
  const row = await db.selectFrom('users').select('session_version').where('id', '=', userId).executeTakeFirst();
  return Number(row?.session_version ?? 0) > 0;
}

/** A channel whose last test passed: tested at some time, with no failure recorded. */
async function channelTested(db: Executor): Promise<boolean> {
  const row = await db
    .selectFrom('channels')
    .select('id')
    .where('test_time', '>', 0)
    .where('test_error', '=', '')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** A relayed request went through: a consume log, or (when consume logging is off) a user's request count. */
async function requestSent(db: Executor): Promise<boolean> {
  const log = await db.selectFrom('logs').select('id').where('type', '=', LogType.consume).limit(1).executeTakeFirst();
  if (log) return true;
  const counted = await db.selectFrom('users').select('id').where('request_count', '>', 0).limit(1).executeTakeFirst();
  return counted !== undefined;
}

/** Whether any channel exists, enabled or not. */
export function anyChannel(db: Executor): Promise<boolean> {
  return anyRow(db, 'channels');
}

/** The models of one channel for the sample request: the channel tested last, else the first one added. */
export async function sampleChannelModels(db: Executor): Promise<string> {
  const row = await db
    .selectFrom('channels')
    .select('models')
    .where('models', '!=', '')
    .orderBy('test_time', 'desc')
    .orderBy('id', 'asc')
    .limit(1)
    .executeTakeFirst();
  return row?.models ?? '';
}

/** Each step's state for the root account `userId`. */
export async function setupStepStates(db: Executor, userId: number): Promise<Record<SetupStep, boolean>> {
  const [password_changed, channel_added, channel_tested, token_created, request_sent] = await Promise.all([
    passwordChanged(db, userId),
    anyRow(db, 'channels'),
    channelTested(db),
    anyRow(db, 'tokens'),
    requestSent(db),
  ]);
  return { password_changed, channel_added, channel_tested, token_created, request_sent };
}
