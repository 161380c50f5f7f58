// The relay nodes' leases (relay_nodes) and the sweep of what dead nodes held
// (reservations, and the users' and tokens' held quota they stand for). The
// relay's nodeLease.ts decides when and what; these are its queries.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** Moves a node's lease on to `expiresAt`; whether its row was there to move. */
export async function renewNodeRow(db: Executor, nodeId: string, expiresAt: number): Promise<boolean> {
  const renewed = await db.updateTable('relay_nodes').set({ lease_expires_at: expiresAt }).where('id', '=', nodeId).executeTakeFirst();
  return Number(renewed.numUpdatedRows) > 0;
}

/** Registers a node with a lease until `expiresAt`. */
export async function insertNodeRow(db: Executor, nodeId: string, expiresAt: number, startedAt: number): Promise<void> {
  await db.insertInto('relay_nodes').values({ id: nodeId, lease_expires_at: expiresAt, started_at: startedAt }).execute();
}

/** Removes a node's row (a clean stop). */
export async function deleteNodeRow(db: Executor, nodeId: string): Promise<void> {
  await db.deleteFrom('relay_nodes').where('id', '=', nodeId).execute();
}

/** Runs a sweep in one transaction at READ COMMITTED, so a sweep that waited on a lock reads what the other committed. */
export function inSweepTransaction<Result>(db: Executor, work: (transaction: Transaction<Database>) => Promise<Result>): Promise<Result> {
  return db.transaction().setIsolationLevel('read committed').execute(work);
}

/**
 * The reservations in state `held`, older than `before`, of nodes without a
 * lease live at `now`: locked in id order, as settlements lock them.
 */
export function heldReservationsOfDeadNodes(
  transaction: Transaction<Database>,
  { now, before, held }: { now: number; before: number; held: number },
) {
  const live = transaction.selectFrom('relay_nodes').select('id').where('lease_expires_at', '>=', now);
  return transaction
    .selectFrom('reservations')
    .select(['id', 'node_id', 'user_id', 'token_id', 'limited', 'amount'])
    .where('state', '=', held)
    .where('created_at', '<', before)
    .where('node_id', 'not in', live)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Forgets the rows of expired leases, and ledger batches and swept reservations (state `swept`) older than `keptSince`. */
export async function forgetExpiredRows(
  transaction: Transaction<Database>,
  { now, keptSince, swept }: { now: number; keptSince: number; swept: number },
): Promise<void> {
  await transaction.deleteFrom('relay_nodes').where('lease_expires_at', '<', now).execute();
  await transaction.deleteFrom('ledger_batches').where('created_at', '<', keptSince).execute();
  await transaction.deleteFrom('reservations').where('state', '=', swept).where('created_at', '<', keptSince).execute();
}

/** Moves the reservations still in state `from` to state `to`; how many moved. */
export async function markReservations(transaction: Transaction<Database>, ids: string[], from: number, to: number): Promise<number> {
  const marked = await transaction
    .updateTable('reservations')
    .set({ state: to })
    .where('id', 'in', ids)
    .where('state', '=', from)
    .executeTakeFirst();
  return Number(marked.numUpdatedRows);
}

/** Gives a user back what was held of its quota (an overrun, negative, comes off the balance). */
export async function returnUserHold(transaction: Transaction<Database>, userId: number, amount: number): Promise<void> {
  await transaction
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', amount), held_quota: eb('held_quota', '-', amount) }))
    .where('id', '=', userId)
    .execute();
}

/** Gives a limited token back what was held of its quota. */
export async function returnTokenHold(transaction: Transaction<Database>, tokenId: number, amount: number): Promise<void> {
  await transaction
    .updateTable('tokens')
    .set((eb) => ({ remain_quota: eb('remain_quota', '+', amount), held_quota: eb('held_quota', '-', amount) }))
    .where('id', '=', tokenId)
    .execute();
}

/** The usernames of some users, by id (for the logs of a sweep). */
export function usernamesOf(transaction: Transaction<Database>, userIds: number[]) {
  return transaction.selectFrom('users').select(['id', 'username']).where('id', 'in', userIds).execute();
}
