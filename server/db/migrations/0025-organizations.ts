// Frozen: organisations (teams), apart from one-api's groups (users.group).
// A member belongs to an organisation with a role in it (owner, admin or
// member); one user may belong to several. An organisation's money is an
// account row in users marked by organization_id (it never signs in), so the
// ledger stays per account; tokens.member_user_id says which member a key of
// that account belongs to (null: a service key of the organisation itself).
import { MysqlAdapter, PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely';

function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  if (adapter instanceof MysqlAdapter) return table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  return table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
}

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('organizations'))
    .addColumn('name', 'varchar(64)', (column) => column.notNull())
    .addColumn('status', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('created_time', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('organizations_name_idx').on('organizations').column('name').unique().execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'bigint', (column) => column.notNull())
    .addColumn('user_id', 'bigint', (column) => column.notNull())
    .addColumn('role', 'varchar(8)', (column) => column.notNull())
    .addColumn('created_time', 'bigint', (column) => column.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('organization_members_user_idx').on('organization_members').column('user_id').execute();

  await db.schema.alterTable('users').addColumn('organization_id', 'bigint').execute();
  await db.schema.createIndex('users_organization_idx').on('users').column('organization_id').execute();
  await db.schema.alterTable('tokens').addColumn('member_user_id', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('member_user_id').execute();
  // MySQL names the table of an index it drops; SQLite and PostgreSQL refuse the clause
  const dropIndex = db.schema.dropIndex('users_organization_idx');
  await (db.getExecutor().adapter instanceof MysqlAdapter ? dropIndex.on('users') : dropIndex).execute();
  await db.schema.alterTable('users').dropColumn('organization_id').execute();
  await db.schema.dropTable('organization_members').execute();
  await db.schema.dropTable('organizations').execute();
}
