// Frozen: each relayed request's reservation on PostgreSQL and MySQL, and the
// relay nodes' leases. A reservation row lives while its request is in flight
// (its settlement or release deletes it, in the same transaction as the
// balances), so a settlement retried after an ambiguous commit finds no row and
// applies nothing twice; the rows a node holds when it stops renewing its lease
// are given back by another node (relay/nodeLease.ts). SQLite keeps no rows:
// one process per file, its instance lock is the lease.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('reservations')
    .addColumn('id', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('node_id', 'varchar(64)', (column) => column.notNull())
    .addColumn('user_id', 'integer', (column) => column.notNull())
    .addColumn('token_id', 'integer', (column) => column.notNull())
    .addColumn('limited', 'smallint', (column) => column.notNull().defaultTo(0))
    .addColumn('amount', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('state', 'smallint', (column) => column.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('reservations_state_node').on('reservations').columns(['state', 'node_id']).execute();
  await db.schema
    .createTable('relay_nodes')
    .addColumn('id', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('lease_expires_at', 'bigint', (column) => column.notNull())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('relay_nodes').execute();
  await db.schema.dropTable('reservations').execute();
}
