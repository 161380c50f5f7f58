// Queries on redemption codes, and the one-shot top-up.
import type { Kysely, Selectable } from 'kysely';
import type { RedemptionRecord } from '../../common/records';
import { LogType, RedemptionStatus } from '../../common/roles';
import type { Database } from '../db/database';
import type { RedemptionsTable } from '../db/schema/redemptions';
import { maskSecret } from '../secrets';
import { insertLog } from './logs';
import { idOf, orderedBy, SEARCH_LIMIT, startsWith, wholeKeyOf, type ListSort, type PageWindow } from './pagination';

export type RedemptionRow = Selectable<RedemptionsTable>;
type Executor = Kysely<Database>;

/** The code list's facet: unused, disabled or used. */
export interface RedemptionFilter {
  status?: number;
}

const codes = (db: Executor, filter: RedemptionFilter) => {
  const query = db.selectFrom('redemptions').selectAll();
  return filter.status === undefined ? query : query.where('status', '=', filter.status);
};

export function listRedemptions(db: Executor, window: PageWindow, sort: ListSort, filter: RedemptionFilter = {}): Promise<RedemptionRow[]> {
  return orderedBy(codes(db, filter), sort).limit(window.limit).offset(window.offset).execute();
}

export function searchRedemptions(db: Executor, keyword: string, sort: ListSort, filter: RedemptionFilter = {}): Promise<RedemptionRow[]> {
  const id = idOf(keyword);
  const key = wholeKeyOf(keyword);
  const query = codes(db, filter).where((eb) =>
    eb.or([
      startsWith('name', keyword),
      ...(id === undefined ? [] : [eb('id', '=', id)]),
      ...(key === undefined ? [] : [eb('key', '=', key)]),
    ]),
  );
  return orderedBy(query, sort).limit(SEARCH_LIMIT).execute();
}

export function findRedemption(db: Executor, id: number): Promise<RedemptionRow | undefined> {
  return db.selectFrom('redemptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A new batch of unused codes, all or none. */
export async function createRedemptions(
  db: Executor,
  creator: number,
  fields: { name: string; quota: number },
  keys: readonly string[],
  now: number,
): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    for (const key of keys) {
      await transaction
        .insertInto('redemptions')
        .values({
          user_id: creator,
          name: fields.name,
          key,
          status: RedemptionStatus.unused,
          quota: fields.quota,
          created_time: now,
          redeemed_time: 0,
          redeemed_by: 0,
        })
        .execute();
    }
  });
}

/** Enables or disables a code; false when there is none or it was redeemed meanwhile (a used code stays used). */
export async function setRedemptionStatus(db: Executor, id: number, status: number): Promise<boolean> {
  const changed = await db
    .updateTable('redemptions')
    .set({ status })
    .where('id', '=', id)
    .where('status', '!=', RedemptionStatus.used)
    .executeTakeFirst();
  return Number(changed.numUpdatedRows) > 0;
}

export async function updateRedemption(db: Executor, id: number, patch: Pick<RedemptionRow, 'name' | 'quota'>): Promise<void> {
  await db.updateTable('redemptions').set(patch).where('id', '=', id).execute();
}

/** False when there was no such code. */
export async function deleteRedemption(db: Executor, id: number): Promise<boolean> {
  const deleted = await db.deleteFrom('redemptions').where('id', '=', id).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

export function toRedemptionRecord(row: RedemptionRow, revealKey = false): RedemptionRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    name: row.name,
    key: revealKey ? row.key : maskSecret(row.key),
    status: Number(row.status),
    quota: Number(row.quota),
    created_time: Number(row.created_time),
    redeemed_time: Number(row.redeemed_time),
    redeemed_by: Number(row.redeemed_by),
  };
}

export type TopUpResult = { quota: number } | { error: string };

/**
 * Redeems a code for a user in one transaction. The code is claimed with a
 * conditional UPDATE (status 1 → 3), so of any number of concurrent attempts
 * exactly one changes the row and credits the quota, on every database.
 */
export async function redeemCode(db: Executor, user: { id: number; username: string }, key: string): Promise<TopUpResult> {
  return db.transaction().execute(async (transaction) => {
    const code = await transaction.selectFrom('redemptions').select(['id', 'quota', 'status']).where('key', '=', key).executeTakeFirst();
    if (!code) return { error: 'invalid redemption code' };
    if (Number(code.status) !== RedemptionStatus.unused) {
      return { error: Number(code.status) === RedemptionStatus.used ? 'this code has already been used' : 'this code is disabled' };
    }
    const claimed = await transaction
      .updateTable('redemptions')
      .set({ status: RedemptionStatus.used, redeemed_time: Math.floor(Date.now() / 1000), redeemed_by: user.id })
      .where('id', '=', Number(code.id))
      .where('status', '=', RedemptionStatus.unused)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return { error: 'this code has already been used' };
    const quota = Number(code.quota);
    await transaction
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '+', quota) }))
      .where('id', '=', user.id)
      .execute();
    await insertLog(transaction, {
      userId: user.id,
      username: user.username,
      type: LogType.topup,
      content: `top-up with a redemption code: ${quota} quota`,
      quota,
    });
    return { quota };
  });
}
