// Frozen: two-factor sign-in. One row per account that has started or finished
// TOTP enrolment (its secret sealed with a key derived from SESSION_SECRET, the
// last time step a code was accepted at, so no code works twice), its one-time
// recovery codes (SHA-256 only), and a mark on sessions that still wait for the
// second factor.
import { MysqlAdapter, PostgresAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('two_factor')
    .addColumn('user_id', 'integer', (column) => column.primaryKey())
    .addColumn('secret_sealed', 'varchar(255)', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('last_step', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('enabled_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();

  const adapter = db.getExecutor().adapter;
  let table = db.schema.createTable('two_factor_recovery_codes');
  if (adapter instanceof PostgresAdapter) table = table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  else if (adapter instanceof MysqlAdapter) table = table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  else table = table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
  await table
    .addColumn('user_id', 'integer', (column) => column.notNull())
    .addColumn('code_hash', 'varchar(64)', (column) => column.notNull())
    .addColumn('used_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('two_factor_recovery_user_idx').on('two_factor_recovery_codes').columns(['user_id', 'code_hash']).execute();

  await db.schema
    .alterTable('sessions')
    .addColumn('partial', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('partial').execute();
  await db.schema.dropTable('two_factor_recovery_codes').ifExists().execute();
  await db.schema.dropTable('two_factor').ifExists().execute();
}
