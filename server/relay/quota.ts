// Quota movements of one relayed request, each atomic in the database:
// reserve before the call (refused when the user or a limited token cannot
// cover it), settle with the real charge after, release on failure. Balances
// of limited tokens and of users never go below zero.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database';

export interface Reservation {
  userId: number;
  tokenId: number;
  limitedToken: boolean;
  amount: number;
}

export type ReserveResult = { ok: true } | { ok: false; reason: 'user' | 'token' };

export async function reserveQuota(db: Kysely<Database>, reservation: Reservation): Promise<ReserveResult> {
  const { amount } = reservation;
  if (amount <= 0) return { ok: true };
  // one conditional UPDATE is atomic on its own: no BEGIN/COMMIT round trips on the hot path
  if (!reservation.limitedToken) {
    const user = await takeFromUser(db, reservation.userId, amount);
    return Number(user.numUpdatedRows) === 1 ? { ok: true } : { ok: false, reason: 'user' };
  }
  return db.transaction().execute(async (transaction) => {
    const user = await takeFromUser(transaction, reservation.userId, amount);
    if (Number(user.numUpdatedRows) !== 1) return { ok: false, reason: 'user' } as const;
    const token = await transaction
      .updateTable('tokens')
      .set((eb) => ({ remain_quota: eb('remain_quota', '-', amount) }))
      .where('id', '=', reservation.tokenId)
      .where('remain_quota', '>=', amount)
      .executeTakeFirst();
    if (Number(token.numUpdatedRows) !== 1) throw new TokenShortfall();
    return { ok: true } as const;
  }).catch((error) => {
    if (error instanceof TokenShortfall) return { ok: false, reason: 'token' } as const;
    throw error;
  });
}

class TokenShortfall extends Error {}

/** `quota -= amount` only if the user has it. */
const takeFromUser = (db: Kysely<Database>, userId: number, amount: number) =>
  db
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '-', amount) }))
    .where('id', '=', userId)
    .where('quota', '>=', amount)
    .executeTakeFirst();

/** `column + refund - charge`, floored at zero. */
const settled = (column: string, refund: number, charge: number) =>
  sql<number>`case when ${sql.ref(column)} + ${refund} >= ${charge} then ${sql.ref(column)} + ${refund} - ${charge} else 0 end`;

/**
 * Replaces the reservation by the real charge: the reserved amount goes back,
 * the charge is taken (down to zero at most), and the counters move. A
 * request that used nothing releases everything and counts nothing.
 */
export async function settleQuota(db: Kysely<Database>, reservation: Reservation, charge: number, channelId: number, countRequest: boolean): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction
      .updateTable('users')
      .set((eb) => ({
        quota: settled('quota', reservation.amount, charge),
        used_quota: eb('used_quota', '+', charge),
        request_count: eb('request_count', '+', countRequest ? 1 : 0),
      }))
      .where('id', '=', reservation.userId)
      .execute();
    await transaction
      .updateTable('tokens')
      .set((eb) => ({
        ...(reservation.limitedToken ? { remain_quota: settled('remain_quota', reservation.amount, charge) } : {}),
        used_quota: eb('used_quota', '+', charge),
      }))
      .where('id', '=', reservation.tokenId)
      .execute();
    if (charge > 0) {
      await transaction.updateTable('channels').set((eb) => ({ used_quota: eb('used_quota', '+', charge) })).where('id', '=', channelId).execute();
    }
  });
}

export async function releaseQuota(db: Kysely<Database>, reservation: Reservation): Promise<void> {
  if (reservation.amount <= 0) return;
  const giveBackToUser = (executor: Kysely<Database>) =>
    executor.updateTable('users').set((eb) => ({ quota: eb('quota', '+', reservation.amount) })).where('id', '=', reservation.userId).execute();
  if (!reservation.limitedToken) {
    await giveBackToUser(db);
    return;
  }
  await db.transaction().execute(async (transaction) => {
    await giveBackToUser(transaction);
    await transaction.updateTable('tokens').set((eb) => ({ remain_quota: eb('remain_quota', '+', reservation.amount) })).where('id', '=', reservation.tokenId).execute();
  });
}
