// Frozen: passkeys (WebAuthn credentials) and the challenges handed out for
// them. A credential is found by the SHA-256 of its id (ids reach 1,023 bytes,
// too long for a portable unique index); its public key is the COSE key as
// base64url; `counter` is the authenticator's signature counter, which only
// ever grows. A challenge row lives a few minutes and is deleted by its one use;
// a registration's keeps the user handle the new credential is made for.
import { MysqlAdapter, PostgresAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  let table = db.schema.createTable('passkeys');
  if (adapter instanceof PostgresAdapter) table = table.addColumn('id', 'bigserial', (column) => column.primaryKey());
  else if (adapter instanceof MysqlAdapter) table = table.addColumn('id', 'bigint', (column) => column.primaryKey().autoIncrement());
  else table = table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement());
  await table
    .addColumn('user_id', 'integer', (column) => column.notNull())
    .addColumn('credential_hash', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('credential_id', 'text', (column) => column.notNull())
    .addColumn('user_handle', 'varchar(128)', (column) => column.notNull())
    .addColumn('public_key', 'text', (column) => column.notNull())
    .addColumn('counter', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('transports', 'varchar(255)', (column) => column.notNull().defaultTo(''))
    .addColumn('name', 'varchar(64)', (column) => column.notNull())
    .addColumn('backed_up', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_used_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('passkeys_user_idx').on('passkeys').column('user_id').execute();

  await db.schema
    .createTable('passkey_challenges')
    .addColumn('challenge_hash', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('purpose', 'varchar(16)', (column) => column.notNull())
    .addColumn('user_id', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('user_handle', 'varchar(128)', (column) => column.notNull().defaultTo(''))
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('passkey_challenges_expiry_idx').on('passkey_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkey_challenges').ifExists().execute();
  await db.schema.dropTable('passkeys').ifExists().execute();
}
