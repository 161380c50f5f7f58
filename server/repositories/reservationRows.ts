// The ledger's rows on PostgreSQL and MySQL (migrations 0004 and 0017): a
// reservation's row, or a quota lease's (billing/quota.ts,
// billing/leaseLedger.ts), and the ids of the settlement batches written. Each
// function runs in the caller's transaction; rows are locked in ascending id
// order, before any user's or token's row.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import type { ReservationsTable } from '../db/schema/reservations';

export type NewReservationRow = Insertable<ReservationsTable>;
/** A locked reservation row as a settlement reads it. */
export type HeldReservationRow = Pick<Selectable<ReservationsTable>, 'id' | 'state' | 'amount'>;
/** A locked lease row as a settlement batch reads it: what it holds, and whose. */
export type LeaseRow = Pick<Selectable<ReservationsTable>, 'id' | 'state' | 'amount' | 'user_id' | 'token_id' | 'limited'>;

export async function insertReservation(db: Kysely<Database>, row: NewReservationRow): Promise<void> {
  await db.insertInto('reservations').values(row).execute();
}

export async function insertReservations(db: Kysely<Database>, rows: readonly NewReservationRow[]): Promise<void> {
  await db.insertInto('reservations').values(rows).execute();
}

/** Locks these reservations' rows (FOR UPDATE, ascending id); a row missing (settled, released) is not among them. */
export function lockReservations(transaction: Kysely<Database>, ids: readonly string[]): Promise<HeldReservationRow[]> {
  return transaction
    .selectFrom('reservations')
    .select(['id', 'state', 'amount'])
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Locks one reservation's row (FOR UPDATE); undefined when there is none. */
export function lockReservation(transaction: Kysely<Database>, id: string): Promise<Omit<HeldReservationRow, 'id'> | undefined> {
  return transaction.selectFrom('reservations').select(['state', 'amount']).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Locks these leases' rows (FOR UPDATE, ascending id); a row swept and given back by another node is not among them. */
export function lockLeaseRows(transaction: Kysely<Database>, ids: readonly string[]): Promise<LeaseRow[]> {
  return transaction
    .selectFrom('reservations')
    .select(['id', 'state', 'amount', 'user_id', 'token_id', 'limited'])
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function deleteReservation(transaction: Kysely<Database>, id: string): Promise<void> {
  await transaction.deleteFrom('reservations').where('id', '=', id).execute();
}

export async function deleteReservations(transaction: Kysely<Database>, ids: readonly string[]): Promise<void> {
  await transaction.deleteFrom('reservations').where('id', 'in', ids).execute();
}

/** Takes a settled charge off a lease's row. */
export async function chargeLeaseRow(transaction: Kysely<Database>, id: string, charge: number): Promise<void> {
  await transaction
    .updateTable('reservations')
    .set((eb) => ({ amount: eb('amount', '-', charge) }))
    .where('id', '=', id)
    .execute();
}

// ---- settlement batches -----------------------------------------------------

/** Records a settlement batch's id in its transaction (a retry of the batch then finds it). */
export async function insertBatchId(transaction: Kysely<Database>, id: string, createdAt: number): Promise<void> {
  await transaction.insertInto('ledger_batches').values({ id, created_at: createdAt }).execute();
}

/** Inserts a batch id unless it is there (committed by an earlier attempt); whether it did. */
export async function claimBatchId(
  transaction: Kysely<Database>,
  dialect: Exclude<DatabaseConfig['dialect'], 'sqlite'>,
  id: string,
  createdAt: number,
): Promise<boolean> {
  const values = { id, created_at: createdAt };
  const result =
    dialect === 'mysql'
      ? await transaction.insertInto('ledger_batches').ignore().values(values).executeTakeFirst()
      : await transaction
          .insertInto('ledger_batches')
          .values(values)
          .onConflict((conflict) => conflict.column('id').doNothing())
          .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}
