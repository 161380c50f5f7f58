// Frozen: asynchronous jobs relayed to a vendor (a video now, a batch later).
// A task is one row from its submission to its settlement: who pays (user,
// key, whether the key's own quota was held too), the channel and key that
// took it, the vendor's id, its status, what it holds and what it was
// charged. The hold is taken off the balances in the transaction that writes
// the row, so it survives any restart; a poller on any node leases the row
// (lease_owner, lease_until) before asking the vendor, and settles it once,
// guarded by its status. `seq` orders a user's tasks for the list's cursor;
// `id` is the public name ("video_...").
import { MysqlAdapter, PostgresAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  let table = db.schema.createTable('tasks');
  if (adapter instanceof PostgresAdapter) table = table.addColumn('seq', 'bigserial', (column) => column.primaryKey());
  else if (adapter instanceof MysqlAdapter) table = table.addColumn('seq', 'bigint', (column) => column.primaryKey().autoIncrement());
  else table = table.addColumn('seq', 'integer', (column) => column.primaryKey().autoIncrement());
  await table
    .addColumn('id', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('kind', 'varchar(16)', (column) => column.notNull())
    .addColumn('user_id', 'integer', (column) => column.notNull())
    .addColumn('token_id', 'integer', (column) => column.notNull())
    .addColumn('limited', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('channel_id', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('key_id', 'integer')
    .addColumn('model', 'varchar(255)', (column) => column.notNull())
    .addColumn('upstream_id', 'varchar(255)')
    .addColumn('status', 'varchar(16)', (column) => column.notNull())
    .addColumn('progress', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('held_quota', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('charged_quota', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('request', 'text', (column) => column.notNull())
    .addColumn('error', 'text')
    .addColumn('request_id', 'varchar(128)', (column) => column.notNull().defaultTo(''))
    .addColumn('lease_owner', 'varchar(64)')
    .addColumn('lease_until', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('next_poll_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('polls', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addColumn('completed_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('tasks_user_idx').on('tasks').columns(['user_id', 'kind', 'seq']).execute();
  await db.schema.createIndex('tasks_due_idx').on('tasks').columns(['status', 'next_poll_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tasks').ifExists().execute();
}
