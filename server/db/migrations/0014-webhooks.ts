// Frozen: webhooks and their deliveries. A delivery row is one event for one
// webhook; it is written beside the change that caused the event and sent by
// a loop that claims due rows with a conditional UPDATE (claimed_by,
// claim_expires_at), so nodes sharing a database send each row once and a row
// a dead node had claimed is taken over when its claim expires.
import { MysqlAdapter, PostgresAdapter, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  if (adapter instanceof MysqlAdapter) return table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  return table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
}

const required = (column: ColumnDefinitionBuilder) => column.notNull();
const zero = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo(0);

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('webhooks'))
    .addColumn('name', 'varchar(64)', required)
    .addColumn('url', 'varchar(1024)', required)
    .addColumn('secret', 'varchar(128)', required)
    // comma-separated event types
    .addColumn('events', 'varchar(512)', required)
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('created_time', 'bigint', zero)
    .execute();

  await withId(db, db.schema.createTable('webhook_deliveries'))
    .addColumn('webhook_id', 'bigint', required)
    .addColumn('event_id', 'varchar(64)', required)
    .addColumn('event_type', 'varchar(64)', required)
    .addColumn('payload', 'text', required)
    .addColumn('status', 'varchar(16)', required)
    .addColumn('attempts', 'integer', zero)
    .addColumn('next_attempt_at', 'bigint', zero)
    .addColumn('last_status_code', 'integer', zero)
    .addColumn('last_error', 'varchar(512)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('claim_expires_at', 'bigint', zero)
    .addColumn('created_time', 'bigint', zero)
    .addColumn('delivered_time', 'bigint', zero)
    .execute();
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhooks').execute();
}
