// The ledger's movements of quota on users, tokens and channels (billing/quota.ts,
// billing/leaseLedger.ts): a hold taken off a balance and counted in held_quota,
// given back, or replaced by its charge; a batch's totals; and what a dead
// process held given back at start. Each function runs in the caller's
// transaction (or on its own where one statement is atomic); the caller keeps
// the lock order: reservation rows, then users, then tokens, ascending ids each.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database';
import { taskHeldOf } from './tasks';

/** A hold on a user's quota and, for a limited token, on the token's. */
export interface HeldAmount {
  userId: number;
  tokenId: number;
  limitedToken: boolean;
  amount: number;
}

/** What a batch gives back to (refund) and takes from (charge) one balance, and the requests it counts. */
export interface BalanceTotals {
  refund: number;
  charge: number;
  requests: number;
}

/** The charges a batch adds to one budget's spend: those of its latest period (an earlier period's are over and done). */
export interface BudgetSpend {
  start: number;
  charge: number;
}

/** What a batch adds to a member's spend in an organisation: all its charges, and those of the latest period of a period cap. */
export interface MemberSpend {
  organizationId: number;
  userId: number;
  charge: number;
  period?: BudgetSpend;
}

/** A batch of settlements summed per user, token and channel, each list in ascending id order (billing/quota.ts settlementTotals). */
export interface LedgerTotals {
  users: Array<[number, BalanceTotals]>;
  tokens: Array<{ tokenId: number; used: number; limited: BalanceTotals | undefined }>;
  channels: Array<[number, number]>;
  userSpends: Array<[number, BudgetSpend]>;
  tokenSpends: Array<[number, BudgetSpend]>;
  /** By organisation, then member, ascending. */
  memberSpends: MemberSpend[];
}

// ---- holds --------------------------------------------------------------------

/** `quota -= amount` if the user has it (and held_quota += amount, in the same UPDATE); whether it did. */
export async function takeFromUser(db: Kysely<Database>, userId: number, amount: number): Promise<boolean> {
  const result =
    await sql`update users set quota = quota - ${amount}, held_quota = held_quota + ${amount} where id = ${userId} and quota >= ${amount}`.execute(
      db,
    );
  return Number(result.numAffectedRows ?? 0) === 1;
}

/** `remain_quota -= amount` if the token has it (and held_quota += amount); whether it did. */
export async function takeFromToken(db: Kysely<Database>, tokenId: number, amount: number): Promise<boolean> {
  const token =
    await sql`update tokens set remain_quota = remain_quota - ${amount}, held_quota = held_quota + ${amount} where id = ${tokenId} and remain_quota >= ${amount}`.execute(
      db,
    );
  return Number(token.numAffectedRows ?? 0) === 1;
}

/** Undoes takeFromUser (a token shortfall after the user's part was taken). */
export async function returnToUser(db: Kysely<Database>, userId: number, amount: number): Promise<void> {
  await sql`update users set quota = quota + ${amount}, held_quota = held_quota - ${amount} where id = ${userId}`.execute(db);
}

/** Gives a hold back to the user and, for a limited token, to the token: off held_quota, onto the balance. */
export async function giveBackHold(executor: Kysely<Database>, hold: HeldAmount): Promise<void> {
  if (hold.amount <= 0) return;
  await executor
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', hold.amount), held_quota: eb('held_quota', '-', hold.amount) }))
    .where('id', '=', hold.userId)
    .execute();
  if (!hold.limitedToken) return;
  await executor
    .updateTable('tokens')
    .set((eb) => ({ remain_quota: eb('remain_quota', '+', hold.amount), held_quota: eb('held_quota', '-', hold.amount) }))
    .where('id', '=', hold.tokenId)
    .execute();
}

// ---- leases (billing/leaseLedger.ts) ------------------------------------------

/** Locks the users' rows (ascending id, FOR UPDATE) and reads their balances, by id. */
export async function lockUserQuotas(transaction: Kysely<Database>, userIds: readonly number[]): Promise<Map<number, number>> {
  const users = new Map<number, number>();
  for (const row of await transaction
    .selectFrom('users')
    .select(['id', 'quota'])
    .where('id', 'in', userIds)
    .orderBy('id')
    .forUpdate()
    .execute())
    users.set(Number(row.id), Number(row.quota));
  return users;
}

/** Locks the tokens' rows (ascending id, FOR UPDATE) and reads their remaining quota, by id. */
export async function lockTokenQuotas(transaction: Kysely<Database>, tokenIds: readonly number[]): Promise<Map<number, number>> {
  const tokens = new Map<number, number>();
  for (const row of await transaction
    .selectFrom('tokens')
    .select(['id', 'remain_quota'])
    .where('id', 'in', tokenIds)
    .orderBy('id')
    .forUpdate()
    .execute())
    tokens.set(Number(row.id), Number(row.remain_quota));
  return tokens;
}

/** Moves `amount` of the user's quota into held_quota (a lease taken; its row already checked what is left). */
export async function holdUserQuota(transaction: Kysely<Database>, userId: number, amount: number): Promise<void> {
  await transaction
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '-', amount), held_quota: eb('held_quota', '+', amount) }))
    .where('id', '=', userId)
    .execute();
}

/** Moves `amount` of the token's remaining quota into held_quota. */
export async function holdTokenQuota(transaction: Kysely<Database>, tokenId: number, amount: number): Promise<void> {
  await transaction
    .updateTable('tokens')
    .set((eb) => ({ remain_quota: eb('remain_quota', '-', amount), held_quota: eb('held_quota', '+', amount) }))
    .where('id', '=', tokenId)
    .execute();
}

// ---- settlements ----------------------------------------------------------------

/** `column + refund - charge`, below zero if a provider overran the reservation (see the top of billing/quota.ts). */
const settled = (column: string, refund: number, charge: number) => sql<number>`${sql.ref(column)} + ${refund - charge}`;

/**
 * A budget's spend with a batch's charges of the period that began at
 * `start`: added when the row's spend is of that period, in place of it when
 * the row's is older, dropped when the row's is newer (the charges belong to a
 * period that is over). period_spent comes first: MySQL reads a column set
 * earlier in the same UPDATE as its new value.
 */
export const spentSql = (start: number, charge: number) =>
  sql<number>`case when period_start = ${start} then period_spent + ${charge} when period_start < ${start} then ${charge} else period_spent end`;
export const periodStartSql = (start: number) => sql<number>`case when period_start < ${start} then ${start} else period_start end`;

/** The user, token and channel UPDATEs of a batch's totals, inside the caller's transaction. */
export async function applyTotals(transaction: Kysely<Database>, totals: LedgerTotals): Promise<void> {
  for (const [userId, user] of totals.users) {
    await transaction
      .updateTable('users')
      .set((eb) => ({
        quota: settled('quota', user.refund, user.charge),
        held_quota: eb('held_quota', '-', user.refund),
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
        ...(limited
          ? { remain_quota: settled('remain_quota', limited.refund, limited.charge), held_quota: eb('held_quota', '-', limited.refund) }
          : {}),
        used_quota: eb('used_quota', '+', used),
      }))
      .where('id', '=', tokenId)
      .execute();
  }
  for (const [table, spends] of [
    ['users', totals.userSpends],
    ['tokens', totals.tokenSpends],
  ] as const) {
    for (const [id, { start, charge }] of spends) {
      await transaction
        .updateTable(table)
        .set({ period_spent: spentSql(start, charge), period_start: periodStartSql(start) })
        .where('id', '=', id)
        .execute();
    }
  }
  for (const { organizationId, userId, charge, period } of totals.memberSpends) {
    await transaction
      .updateTable('organization_members')
      .set((eb) => ({
        spent_quota: eb('spent_quota', '+', charge),
        ...(period ? { period_spent: spentSql(period.start, period.charge), period_start: periodStartSql(period.start) } : {}),
      }))
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  }
  for (const [channelId, charge] of totals.channels) {
    await transaction
      .updateTable('channels')
      .set((eb) => ({ used_quota: eb('used_quota', '+', charge) }))
      .where('id', '=', channelId)
      .execute();
  }
}

// ---- what a dead process held (SQLite, at start) ----------------------------------

/** The users with quota held beyond their tasks' holds, ascending id: who returnAllHeldQuota pays back, and how much. */
export function usersHoldingQuota(transaction: Kysely<Database>) {
  return transaction
    .selectFrom('users')
    .select((eb) => ['id', 'username', eb(eb.ref('held_quota'), '-', taskHeldOf('users')).as('held_quota')])
    .where((eb) => eb('held_quota', '>', taskHeldOf('users')))
    .orderBy('id')
    .execute();
}

/**
 * Every user's and token's held_quota back onto its balance, but what asynchronous tasks hold (their holds outlive
 * any process: relay/tasks/); a held amount below zero (a bookkeeping fault) set to zero.
 */
export async function returnAllHeldQuota(transaction: Kysely<Database>): Promise<void> {
  await transaction
    .updateTable('users')
    .set((eb) => ({ quota: eb(eb('quota', '+', eb.ref('held_quota')), '-', taskHeldOf('users')), held_quota: taskHeldOf('users') }))
    .where((eb) => eb('held_quota', '>', taskHeldOf('users')))
    .execute();
  await transaction
    .updateTable('tokens')
    .set((eb) => ({
      remain_quota: eb(eb('remain_quota', '+', eb.ref('held_quota')), '-', taskHeldOf('tokens')),
      held_quota: taskHeldOf('tokens'),
    }))
    .where((eb) => eb('held_quota', '>', taskHeldOf('tokens')))
    .execute();
  // a held amount below zero would be a bookkeeping fault; start from zero rather than carry it on
  await transaction.updateTable('users').set({ held_quota: 0 }).where('held_quota', '<', 0).execute();
  await transaction.updateTable('tokens').set({ held_quota: 0 }).where('held_quota', '<', 0).execute();
}
