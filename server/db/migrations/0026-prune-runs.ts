// Frozen: the last prune of each kind of stored rows (logs, error logs, audit
// rows), one row per kind, written by whichever node ran it, so the Settings
// panel on every node says when it ran and what it removed. The hourly
// schedule reads it too: a prune that ran less than an hour ago is not run
// again. Times are unix seconds; `manual` is 1 for "Prune now".
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('prune_runs')
    .addColumn('kind', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .addColumn('finished_at', 'bigint', (column) => column.notNull())
    .addColumn('removed', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('cutoff', 'bigint', (column) => column.notNull())
    .addColumn('manual', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('prune_runs').execute();
}
