// Frozen: single sign-on. One row per OpenID Connect identity (the provider's
// issuer and its subject, which the specification makes unique and stable
// together) linked to the account it signs in to.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oidc_identities')
    // 255 characters each keep the composite key within MariaDB's 3072-byte index limit in utf8mb4
    .addColumn('issuer', 'varchar(255)', (column) => column.notNull())
    .addColumn('subject', 'varchar(255)', (column) => column.notNull())
    .addColumn('user_id', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('oidc_identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('oidc_identities_user_idx').on('oidc_identities').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oidc_identities').ifExists().execute();
}
