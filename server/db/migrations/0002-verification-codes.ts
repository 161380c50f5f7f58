// Frozen: one-time codes (e-mail verification, password reset) kept in the
// database so every node of a cluster can check a code another node sent.
import { MysqlAdapter, PostgresAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  let table = db.schema.createTable('verification_codes');
  if (adapter instanceof PostgresAdapter) table = table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  else if (adapter instanceof MysqlAdapter) table = table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  else table = table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
  await table
    .addColumn('purpose', 'varchar(16)', (column) => column.notNull())
    .addColumn('target', 'varchar(128)', (column) => column.notNull())
    .addColumn('code_hash', 'varchar(64)', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('verification_codes_target_idx').on('verification_codes').columns(['purpose', 'target']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('verification_codes').ifExists().execute();
}
