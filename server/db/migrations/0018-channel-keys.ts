// Frozen: multi-key channels. A channel with multi_key = 1 takes its keys from
// channel_keys, one row per key, each with its own state (1 enabled, 2
// disabled by an admin, 3 disabled by the system, which the health pass may
// bring back), last error, last use and counters; its own `key` column is
// left empty. key_strategy says how calls spread over the live keys:
// 'random' or 'round_robin'.
import { MysqlAdapter, PostgresAdapter, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  if (adapter instanceof MysqlAdapter) return table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  return table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
}

const zero = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo(0);

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').addColumn('multi_key', 'integer', zero).execute();
  await db.schema
    .alterTable('channels')
    .addColumn('key_strategy', 'varchar(16)', (column) => column.notNull().defaultTo('random'))
    .execute();
  await withId(db, db.schema.createTable('channel_keys'))
    .addColumn('channel_id', 'bigint', (column) => column.notNull())
    .addColumn('key', 'text', (column) => column.notNull())
    .addColumn('status', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('last_error', 'varchar(1024)', (column) => column.notNull().defaultTo(''))
    .addColumn('last_used_at', 'bigint', zero)
    .addColumn('used_count', 'bigint', zero)
    .addColumn('failed_count', 'bigint', zero)
    .addColumn('created_time', 'bigint', zero)
    .execute();
  await db.schema.createIndex('channel_keys_channel_idx').on('channel_keys').columns(['channel_id', 'status']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('channel_keys').execute();
  await db.schema.alterTable('channels').dropColumn('key_strategy').execute();
  await db.schema.alterTable('channels').dropColumn('multi_key').execute();
}
