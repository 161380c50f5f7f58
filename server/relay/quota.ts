// Quota movements of one relayed request, each atomic in the database:
// reserve before the call (refused when the user or a limited token cannot
// cover it), settle with the real charge after, release on failure. Balances
// of limited tokens and of users never go below zero.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database';
import { insertLogs, type NewLog } from '../repositories/logs';

export interface Reservation {
  userId: number;
  tokenId: number;
  limitedToken: boolean;
  amount: number;
}

export type ReserveResult = { ok: true } | { ok: false; reason: 'user' | 'token' };

/**
 * Holds `amount` on the user and, for a limited token, on the token: both or
 * neither, and only if each has it. Every reservation is its own conditional
 * UPDATE, so no two can spend the same quota, on one node or many.
 */
export async function reserveQuota(db: Kysely<Database>, reservation: Reservation): Promise<ReserveResult> {
  if (reservation.amount <= 0) return { ok: true };
  // one conditional UPDATE is atomic on its own: no BEGIN/COMMIT round trips on the hot path
  if (!reservation.limitedToken) return (await takeFromUser(db, reservation)) ? { ok: true } : { ok: false, reason: 'user' };
  return db.transaction().execute((transaction) => takeFromUserAndToken(transaction, reservation));
}

/** `quota -= amount` if the user has it; whether it did. */
async function takeFromUser(db: Kysely<Database>, { userId, amount }: Reservation): Promise<boolean> {
  const result = await sql`update users set quota = quota - ${amount} where id = ${userId} and quota >= ${amount}`.execute(db);
  return Number(result.numAffectedRows ?? 0) === 1;
}

/** Inside a transaction: the user's part, then the token's; a token shortfall gives the user's part back. */
async function takeFromUserAndToken(transaction: Kysely<Database>, reservation: Reservation): Promise<ReserveResult> {
  const { userId, tokenId, amount } = reservation;
  if (!(await takeFromUser(transaction, reservation))) return { ok: false, reason: 'user' };
  if (!reservation.limitedToken) return { ok: true };
  const token = await sql`update tokens set remain_quota = remain_quota - ${amount} where id = ${tokenId} and remain_quota >= ${amount}`.execute(transaction);
  if (Number(token.numAffectedRows ?? 0) === 1) return { ok: true };
  await sql`update users set quota = quota + ${amount} where id = ${userId}`.execute(transaction);
  return { ok: false, reason: 'token' };
}

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

const byId = <T>(left: [number, T], right: [number, T]) => left[0] - right[0];

/** A batch of settlements summed per user, token and channel, each list in ascending id order. */
export function settlementTotals(settlements: readonly Settlement[]) {
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
  // rows in ascending id order, the same on every node, so two batches cannot deadlock
  return {
    users: [...users].sort(byId),
    tokens: [...tokensUsed].sort(byId).map(([tokenId, used]) => ({ tokenId, used, limited: limitedTokens.get(tokenId) })),
    channels: [...channels].sort(byId),
  };
}

/**
 * Replaces reservations by the real charges, for one request or many at once
 * (the relay settles in batches after answering): each reserved amount goes
 * back, each charge is taken, down to zero at most, and the counters move, in
 * one transaction with one UPDATE per user, token and channel concerned. A
 * request that used nothing releases everything and counts nothing.
 */
export async function settleQuota(db: Kysely<Database>, settlements: readonly Settlement[]): Promise<void> {
  const totals = settlementTotals(settlements);
  await db.transaction().execute(async (transaction) => {
    for (const [userId, user] of totals.users) {
      await transaction
        .updateTable('users')
        .set((eb) => ({
          quota: settled('quota', user.refund, user.charge),
          used_quota: eb('used_quota', '+', user.charge),
          request_count: eb('request_count', '+', user.requests),
        }))
        .where('id', '=', userId)
        .execute();
    }
    for (const { tokenId, used, limited } of totals.tokens) {
      await transaction
        .updateTable('tokens')
        .set((eb) => ({
          ...(limited ? { remain_quota: settled('remain_quota', limited.refund, limited.charge) } : {}),
          used_quota: eb('used_quota', '+', used),
        }))
        .where('id', '=', tokenId)
        .execute();
    }
    for (const [channelId, charge] of totals.channels) {
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

/**
 * Where the relay's own writes go: reservations, releases, batched
 * settlements and batched consume logs. PostgreSQL and MySQL go through
 * Kysely (kyselyLedger); SQLite has a faster ledger of its own (sqliteLedger.ts).
 */
export interface QuotaLedger {
  /** `alone`: no other relayed request is in flight, so none could share this reservation's transaction. */
  reserve(reservation: Reservation, hint?: { alone?: boolean }): Promise<ReserveResult>;
  release(reservation: Reservation): Promise<void>;
  settle(settlements: readonly Settlement[]): Promise<void>;
  insertLogs(rows: readonly NewLog[]): Promise<void>;
}

/**
 * Each reservation its own transaction: a batch of them could take row locks
 * in an order that deadlocks with another node's batch.
 */
export function kyselyLedger(db: Kysely<Database>): QuotaLedger {
  return {
    reserve: (reservation) => reserveQuota(db, reservation),
    release: (reservation) => releaseQuota(db, reservation),
    settle: (settlements) => settleQuota(db, settlements),
    insertLogs: (rows) => insertLogs(db, rows),
  };
}
