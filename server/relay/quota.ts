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

export interface Settlement {
  reservation: Reservation;
  /** The real cost of the request. */
  charge: number;
  channelId: number;
  /** Whether the request counts in the user's request_count. */
  countRequest: boolean;
}

interface Totals {
  refund: number;
  charge: number;
  requests: number;
}

const addTo = <K>(totals: Map<K, Totals>, key: K, refund: number, charge: number) => {
  const current = totals.get(key) ?? { refund: 0, charge: 0, requests: 0 };
  current.refund += refund;
  current.charge += charge;
  totals.set(key, current);
};

/**
 * Replaces reservations by the real charges, for one request or many at once
 * (the relay settles in batches after answering): each reserved amount goes
 * back, each charge is taken, down to zero at most, and the counters move, in
 * one transaction with one UPDATE per user, token and channel concerned. A
 * request that used nothing releases everything and counts nothing.
 */
export async function settleQuota(db: Kysely<Database>, settlements: readonly Settlement[]): Promise<void> {
  const users = new Map<number, Totals>();
  const limitedTokens = new Map<number, Totals>();
  const tokensUsed = new Map<number, number>();
  const channels = new Map<number, number>();
  for (const { reservation, charge, channelId, countRequest } of settlements) {
    addTo(users, reservation.userId, reservation.amount, charge);
    if (countRequest) users.get(reservation.userId)!.requests += 1;
    if (reservation.limitedToken) addTo(limitedTokens, reservation.tokenId, reservation.amount, charge);
    tokensUsed.set(reservation.tokenId, (tokensUsed.get(reservation.tokenId) ?? 0) + charge);
    if (charge > 0) channels.set(channelId, (channels.get(channelId) ?? 0) + charge);
  }
  await db.transaction().execute(async (transaction) => {
    for (const [userId, totals] of users) {
      await transaction
        .updateTable('users')
        .set((eb) => ({
          quota: settled('quota', totals.refund, totals.charge),
          used_quota: eb('used_quota', '+', totals.charge),
          request_count: eb('request_count', '+', totals.requests),
        }))
        .where('id', '=', userId)
        .execute();
    }
    for (const [tokenId, used] of tokensUsed) {
      const limited = limitedTokens.get(tokenId);
      await transaction
        .updateTable('tokens')
        .set((eb) => ({
          ...(limited ? { remain_quota: settled('remain_quota', limited.refund, limited.charge) } : {}),
          used_quota: eb('used_quota', '+', used),
        }))
        .where('id', '=', tokenId)
        .execute();
    }
    for (const [channelId, charge] of channels) {
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
