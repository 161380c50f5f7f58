// Frozen: the settlement batches a relay node has written on PostgreSQL and
// MySQL, by id. A batch inserts its id in its own transaction, first; a retry
// after a COMMIT whose answer was lost finds the id there and applies nothing
// twice (billing/leaseLedger.ts). Rows older than a day are deleted by the
// dead-node sweep. SQLite writes no rows here: its commits are never ambiguous.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('ledger_batches')
    .addColumn('id', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('ledger_batches_created_at').on('ledger_batches').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ledger_batches').execute();
}
