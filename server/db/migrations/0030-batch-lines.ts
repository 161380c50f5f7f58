// Frozen: the lines of a batch the gateway runs itself (a `tasks` row of kind
// 'batch' owns them). One row per line of the input file, in its order
// (`line`, from 0): the request (custom_id, body), its bound (what the task
// holds for it), its status (queued, running, completed, failed, cancelled,
// expired), the lease of the node running it (lease_owner, lease_until: a
// node that dies mid-line loses it when it runs out), what it was charged and
// the output line it left. A line is settled by a conditional UPDATE on its
// status and lease owner in the transaction that charges it, so it is billed
// once whichever node ran it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('batch_lines')
    .addColumn('task_id', 'varchar(64)', (column) => column.notNull())
    .addColumn('line', 'integer', (column) => column.notNull())
    .addColumn('custom_id', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('bound', 'bigint', (column) => column.notNull())
    .addColumn('status', 'varchar(16)', (column) => column.notNull())
    .addColumn('lease_owner', 'varchar(64)')
    .addColumn('lease_until', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('charged_quota', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('status_code', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('result', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('batch_lines_pk', ['task_id', 'line'])
    .execute();
  await db.schema.createIndex('batch_lines_queue_idx').on('batch_lines').columns(['status', 'updated_at', 'task_id', 'line']).execute();
  await db.schema.createIndex('batch_lines_lease_idx').on('batch_lines').columns(['status', 'lease_until']).execute();
  await db.schema.createIndex('batch_lines_task_idx').on('batch_lines').columns(['task_id', 'status']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('batch_lines').ifExists().execute();
}
