// Frozen: the first schema. Portable SQL only (SQLite, PostgreSQL, MySQL/MariaDB):
// 64-bit integers for every quota and counter, booleans as 0/1 integers, no
// defaults on TEXT columns (older MySQL refuses them), indexed strings <= 191
// characters so utf8mb4 keys fit.
import { MysqlAdapter, PostgresAdapter, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres' | 'mysql';

function dialectOf(db: Kysely<any>): Dialect {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof MysqlAdapter) return 'mysql';
  return 'sqlite';
}

function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  switch (dialectOf(db)) {
    case 'postgres':
      return table.addColumn('id', 'bigserial', (column) => column.primaryKey());
    case 'mysql':
      return table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
    default:
      return table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
  }
}

const required = (column: ColumnDefinitionBuilder) => column.notNull();
const zero = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo(0);
const emptyText = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo('');

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('users'))
    .addColumn('username', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('password_hash', 'varchar(100)', required)
    .addColumn('display_name', 'varchar(64)', emptyText)
    .addColumn('role', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('status', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('email', 'varchar(128)', emptyText)
    .addColumn('github_id', 'varchar(64)', emptyText)
    .addColumn('wechat_id', 'varchar(64)', emptyText)
    .addColumn('access_token_hash', 'varchar(64)', (column) => column.unique())
    .addColumn('quota', 'bigint', zero)
    .addColumn('used_quota', 'bigint', zero)
    .addColumn('request_count', 'bigint', zero)
    .addColumn('group', 'varchar(64)', (column) => column.notNull().defaultTo('default'))
    .addColumn('aff_code', 'varchar(32)', (column) => column.unique())
    .addColumn('inviter_id', 'bigint', zero)
    .addColumn('session_version', 'integer', zero)
    .addColumn('created_at', 'bigint', zero)
    .execute();
  await db.schema.createIndex('users_email_idx').on('users').column('email').execute();
  await db.schema.createIndex('users_github_id_idx').on('users').column('github_id').execute();
  await db.schema.createIndex('users_wechat_id_idx').on('users').column('wechat_id').execute();
  await db.schema.createIndex('users_inviter_id_idx').on('users').column('inviter_id').execute();

  await withId(db, db.schema.createTable('tokens'))
    .addColumn('user_id', 'bigint', required)
    .addColumn('key', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('status', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('name', 'varchar(64)', emptyText)
    .addColumn('created_time', 'bigint', zero)
    .addColumn('accessed_time', 'bigint', zero)
    .addColumn('expired_time', 'bigint', (column) => column.notNull().defaultTo(-1))
    .addColumn('remain_quota', 'bigint', zero)
    .addColumn('unlimited_quota', 'integer', zero)
    .addColumn('used_quota', 'bigint', zero)
    .addColumn('models', 'text')
    .addColumn('allowed_ips', 'text')
    .execute();
  await db.schema.createIndex('tokens_user_id_idx').on('tokens').column('user_id').execute();
  await db.schema.createIndex('tokens_name_idx').on('tokens').column('name').execute();

  await withId(db, db.schema.createTable('channels'))
    .addColumn('type', 'integer', zero)
    .addColumn('key', 'text', required)
    .addColumn('status', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('name', 'varchar(128)', emptyText)
    .addColumn('weight', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('priority', 'integer', zero)
    .addColumn('auto_disabled', 'integer', zero)
    .addColumn('created_time', 'bigint', zero)
    .addColumn('test_time', 'bigint', zero)
    .addColumn('response_time', 'integer', zero)
    .addColumn('base_url', 'varchar(512)', emptyText)
    .addColumn('other', 'varchar(512)', emptyText)
    .addColumn('balance', 'double precision', zero)
    .addColumn('balance_updated_time', 'bigint', zero)
    .addColumn('models', 'text', required)
    .addColumn('group', 'varchar(512)', (column) => column.notNull().defaultTo('default'))
    .addColumn('used_quota', 'bigint', zero)
    .addColumn('model_mapping', 'text', required)
    .execute();
  await db.schema.createIndex('channels_name_idx').on('channels').column('name').execute();

  await db.schema
    .createTable('abilities')
    .addColumn('group', 'varchar(64)', required)
    .addColumn('model', 'varchar(128)', required)
    .addColumn('channel_id', 'bigint', required)
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('priority', 'integer', zero)
    .addColumn('weight', 'integer', (column) => column.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('abilities_pk', ['group', 'model', 'channel_id'])
    .execute();
  await db.schema.createIndex('abilities_channel_id_idx').on('abilities').column('channel_id').execute();

  await withId(db, db.schema.createTable('redemptions'))
    .addColumn('user_id', 'bigint', zero)
    .addColumn('key', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('status', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('name', 'varchar(64)', emptyText)
    .addColumn('quota', 'bigint', (column) => column.notNull().defaultTo(100))
    .addColumn('created_time', 'bigint', zero)
    .addColumn('redeemed_time', 'bigint', zero)
    .addColumn('redeemed_by', 'bigint', zero)
    .execute();
  await db.schema.createIndex('redemptions_name_idx').on('redemptions').column('name').execute();

  await withId(db, db.schema.createTable('logs'))
    .addColumn('user_id', 'bigint', zero)
    .addColumn('created_at', 'bigint', zero)
    .addColumn('type', 'integer', zero)
    .addColumn('content', 'text', required)
    .addColumn('username', 'varchar(64)', emptyText)
    .addColumn('token_name', 'varchar(64)', emptyText)
    .addColumn('token_id', 'bigint', zero)
    .addColumn('model_name', 'varchar(128)', emptyText)
    .addColumn('channel_id', 'bigint', zero)
    .addColumn('quota', 'bigint', zero)
    .addColumn('prompt_tokens', 'integer', zero)
    .addColumn('completion_tokens', 'integer', zero)
    .addColumn('elapsed_ms', 'integer', zero)
    .addColumn('is_stream', 'integer', zero)
    .addColumn('estimated', 'integer', zero)
    .execute();
  await db.schema.createIndex('logs_user_id_idx').on('logs').column('user_id').execute();
  await db.schema.createIndex('logs_created_at_idx').on('logs').column('created_at').execute();
  await db.schema.createIndex('logs_type_idx').on('logs').column('type').execute();
  await db.schema.createIndex('logs_username_idx').on('logs').column('username').execute();
  await db.schema.createIndex('logs_token_name_idx').on('logs').column('token_name').execute();
  await db.schema.createIndex('logs_model_name_idx').on('logs').column('model_name').execute();

  await db.schema
    .createTable('options')
    .addColumn('key', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('value', 'text', required)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['options', 'logs', 'redemptions', 'abilities', 'channels', 'tokens', 'users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
