// The keys of multi-key channels (channel_keys). Like a channel's own key, a
// key leaves this module whole only for the relay and the channel checks; the
// console reads it masked (toChannelKeyRecord).
import type { Kysely, Selectable } from 'kysely';
import { ChannelKeyStatus, type ChannelKeyRecord } from '../../common/records';
import type { Database } from '../db/database';
import type { ChannelKeysTable } from '../db/schema/channels';

export type ChannelKeyRow = Selectable<ChannelKeysTable>;
type Executor = Kysely<Database>;

/** The longest error kept on a key (the column is varchar(1024)). */
const LAST_ERROR_MAX = 1000;
/** At most this many keys are read from one text or upload, so a wrong file cannot flood the table. */
export const MAX_KEYS_PER_ADD = 1000;

/**
 * The keys of a text: one per line, or a JSON array of strings (new-api's
 * upload of keys, and service-account files that span lines), trimmed,
 * without blanks or repeats.
 */
export function splitKeys(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) {
        return [...new Set(parsed.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)).trim()).filter(Boolean))];
      }
    } catch {
      // not JSON: read as lines
    }
  }
  return [
    ...new Set(
      trimmed
        .split('\n')
        .map((key) => key.trim())
        .filter(Boolean),
    ),
  ];
}

/** Adds the keys a channel does not hold yet, enabled; answers how many were new. */
export async function addChannelKeys(
  db: Executor,
  channelId: number,
  keys: readonly string[],
  status: number = ChannelKeyStatus.enabled,
): Promise<number> {
  const held = new Set(
    (await db.selectFrom('channel_keys').select('key').where('channel_id', '=', channelId).execute()).map((row) => row.key),
  );
  const fresh = keys.filter((key) => !held.has(key));
  if (!fresh.length) return 0;
  const now = Math.floor(Date.now() / 1000);
  await db
    .insertInto('channel_keys')
    .values(fresh.map((key) => ({ channel_id: channelId, key, status, created_time: now })))
    .execute();
  return fresh.length;
}

/**
 * Keys added to a channel in one transaction: `replace` drops every key it
 * held first (an edit that repoints the channel), `carried` is a key to keep
 * before the new ones (a single-key channel's own, when it becomes multi-key).
 */
export async function storeChannelKeys(
  db: Kysely<Database>,
  channelId: number,
  keys: readonly string[],
  how: { replace: boolean; carried?: string },
): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    if (how.replace) await transaction.deleteFrom('channel_keys').where('channel_id', '=', channelId).execute();
    else if (how.carried) await addChannelKeys(transaction, channelId, [how.carried]);
    await addChannelKeys(transaction, channelId, keys);
  });
}

/** Every key of a channel, oldest first (whole: for the checks and the masked list). */
export function listChannelKeys(db: Executor, channelId: number): Promise<ChannelKeyRow[]> {
  return db.selectFrom('channel_keys').selectAll().where('channel_id', '=', channelId).orderBy('id').execute();
}

/** The keys the relay may use now, oldest first: only their ids and secrets. */
export async function liveChannelKeys(db: Executor, channelId: number): Promise<Array<{ id: number; key: string }>> {
  const rows = await db
    .selectFrom('channel_keys')
    .select(['id', 'key'])
    .where('channel_id', '=', channelId)
    .where('status', '=', ChannelKeyStatus.enabled)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ id: Number(row.id), key: row.key }));
}

export function findChannelKey(db: Executor, channelId: number, keyId: number): Promise<ChannelKeyRow | undefined> {
  return db.selectFrom('channel_keys').selectAll().where('channel_id', '=', channelId).where('id', '=', keyId).executeTakeFirst();
}

/** The keys the system set aside, of channels still in its hands (enabled, or disabled by the system), for the health pass. */
export function listAutoDisabledKeys(db: Executor): Promise<ChannelKeyRow[]> {
  return db
    .selectFrom('channel_keys')
    .innerJoin('channels', 'channels.id', 'channel_keys.channel_id')
    .selectAll('channel_keys')
    .where('channel_keys.status', '=', ChannelKeyStatus.autoDisabled)
    .where('channels.multi_key', '=', 1)
    .where((eb) => eb.or([eb('channels.status', '=', 1), eb.and([eb('channels.status', '=', 2), eb('channels.auto_disabled', '=', 1)])]))
    .orderBy('channel_keys.id')
    .execute();
}

/** Sets a key's state, as the admin or the system decides; `from` makes it conditional (only a key in that state flips). Whether it changed. */
export async function setChannelKeyStatus(
  db: Executor,
  keyId: number,
  status: number,
  options: { from?: number; lastError?: string } = {},
): Promise<boolean> {
  let query = db
    .updateTable('channel_keys')
    .set({ status, ...(options.lastError === undefined ? {} : { last_error: [...options.lastError].slice(0, LAST_ERROR_MAX).join('') }) })
    .where('id', '=', keyId);
  if (options.from !== undefined) query = query.where('status', '=', options.from);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Saves why a key's test failed ('' when it passed). */
export async function recordChannelKeyError(db: Executor, keyId: number, error: string): Promise<void> {
  await db
    .updateTable('channel_keys')
    .set({ last_error: [...error].slice(0, LAST_ERROR_MAX).join('') })
    .where('id', '=', keyId)
    .execute();
}

export async function deleteChannelKey(db: Executor, channelId: number, keyId: number): Promise<boolean> {
  const result = await db.deleteFrom('channel_keys').where('channel_id', '=', channelId).where('id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countLiveChannelKeys(db: Executor, channelId: number): Promise<number> {
  const row = await db
    .selectFrom('channel_keys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('channel_id', '=', channelId)
    .where('status', '=', ChannelKeyStatus.enabled)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** A multi-key channel's keys at a glance: how many, how many live, and the last error of its worst key. Never a key. */
export interface ChannelKeyHealth {
  total: number;
  live: number;
  /** The last error of the worst key that has one: set aside by the system, else by an admin, else a live one; '' when none. */
  worstError: string;
}

/** The key health of each of these channels (only channels holding keys are in the map). */
export async function channelKeyHealth(db: Executor, channelIds: readonly number[]): Promise<Map<number, ChannelKeyHealth>> {
  const health = new Map<number, ChannelKeyHealth>();
  if (channelIds.length === 0) return health;
  const counts = await db
    .selectFrom('channel_keys')
    .select((eb) => [
      'channel_id',
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('status', '=', ChannelKeyStatus.enabled).then(1).else(0).end()).as('live'),
    ])
    .where('channel_id', 'in', [...channelIds])
    .groupBy('channel_id')
    .execute();
  for (const row of counts) health.set(Number(row.channel_id), { total: Number(row.total), live: Number(row.live ?? 0), worstError: '' });
  // the keys with an error, worst state first (3 set aside by the system, 2 by an admin, 1 live)
  const errored = await db
    .selectFrom('channel_keys')
    .select(['channel_id', 'last_error'])
    .where('channel_id', 'in', [...channelIds])
    .where('last_error', '<>', '')
    .orderBy('status', 'desc')
    .orderBy('id')
    .execute();
  for (const row of errored) {
    const entry = health.get(Number(row.channel_id));
    if (entry && !entry.worstError) entry.worstError = row.last_error;
  }
  return health;
}

/** A key's place among its channel's keys, oldest first, from 1 (as the key list shows them). */
export async function channelKeyPosition(db: Executor, channelId: number, keyId: number): Promise<number> {
  const row = await db
    .selectFrom('channel_keys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('channel_id', '=', channelId)
    .where('id', '<=', keyId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Adds calls, failures and the last use to a key's counters (the relay's batched tallies). */
export async function addChannelKeyUsage(
  db: Executor,
  keyId: number,
  usage: { used: number; failed: number; lastUsedAt: number },
): Promise<void> {
  await db
    .updateTable('channel_keys')
    .set((eb) => ({
      used_count: eb('used_count', '+', usage.used),
      failed_count: eb('failed_count', '+', usage.failed),
      last_used_at: usage.lastUsedAt,
    }))
    .where('id', '=', keyId)
    .execute();
}

/**
 * What the key list shows of a key: its first 3 and last 4 characters when it
 * is long enough that those give nothing away (12 or more), else its last 2.
 */
export function maskKey(key: string): string {
  if (key.length >= 12) return `${key.slice(0, 3)}****${key.slice(-4)}`;
  return `****${key.slice(-2)}`;
}

/** A key as the console sees it: masked. */
export function toChannelKeyRecord(row: ChannelKeyRow): ChannelKeyRecord {
  return {
    id: Number(row.id),
    channel_id: Number(row.channel_id),
    key: maskKey(row.key),
    status: Number(row.status),
    last_error: row.last_error ?? '',
    last_used_at: Number(row.last_used_at),
    used_count: Number(row.used_count),
    failed_count: Number(row.failed_count),
    created_time: Number(row.created_time),
  };
}
