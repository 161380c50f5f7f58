// Frozen: the audit log (server/audit/). One append-only row per
// state-changing console call, linked into a hash chain: `seq` counts 1, 2,
// 3... with no gap, and `hash` is sha256(prev_hash + the row's canonical
// JSON). The one-row audit_chain table holds the chain's head (the last
// row's seq and hash), updated with a compare-and-set in each append's
// transaction, so nodes sharing the database append one at a time; and its
// anchor, the seq and hash of the last row retention pruned ('' and 0 until
// then), where a walk of the chain starts.
import { MysqlAdapter, PostgresAdapter, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  if (adapter instanceof MysqlAdapter) return table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  return table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
}

const required = (column: ColumnDefinitionBuilder) => column.notNull();
const empty = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo('');
const zero = (column: ColumnDefinitionBuilder) => column.notNull().defaultTo(0);

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('audit_log'))
    .addColumn('seq', 'bigint', required)
    .addColumn('created_at', 'bigint', required)
    // for the organisations: the one a call acted in
    .addColumn('organization_id', 'bigint')
    .addColumn('user_id', 'bigint')
    .addColumn('username', 'varchar(64)', empty)
    .addColumn('role', 'integer', zero)
    .addColumn('ip', 'varchar(64)', empty)
    .addColumn('user_agent', 'varchar(512)', empty)
    .addColumn('request_id', 'varchar(128)', empty)
    .addColumn('method', 'varchar(8)', required)
    .addColumn('route', 'varchar(255)', required)
    .addColumn('action', 'varchar(64)', required)
    .addColumn('target_type', 'varchar(32)', empty)
    .addColumn('target_id', 'varchar(64)', empty)
    .addColumn('status', 'integer', required)
    .addColumn('success', 'integer', required)
    // JSON: { before, after }, secrets masked
    .addColumn('changes', 'text')
    .addColumn('prev_hash', 'varchar(64)', required)
    .addColumn('hash', 'varchar(64)', required)
    .execute();
  await db.schema.createIndex('audit_log_seq_idx').on('audit_log').column('seq').unique().execute();
  await db.schema.createIndex('audit_log_created_idx').on('audit_log').column('created_at').execute();
  await db.schema.createIndex('audit_log_user_idx').on('audit_log').columns(['user_id', 'seq']).execute();
  await db.schema.createIndex('audit_log_action_idx').on('audit_log').columns(['action', 'seq']).execute();
  await db.schema.createIndex('audit_log_target_idx').on('audit_log').columns(['target_type', 'target_id']).execute();

  await db.schema
    .createTable('audit_chain')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('head_seq', 'bigint', zero)
    .addColumn('head_hash', 'varchar(64)', empty)
    .addColumn('anchor_seq', 'bigint', zero)
    .addColumn('anchor_hash', 'varchar(64)', empty)
    .execute();
  await db.insertInto('audit_chain').values({ id: 1, head_seq: 0, head_hash: '', anchor_seq: 0, anchor_hash: '' }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_chain').execute();
  await db.schema.dropTable('audit_log').execute();
}
