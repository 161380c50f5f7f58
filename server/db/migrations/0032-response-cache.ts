// Frozen: the exact response cache's entries when no Redis is configured
// (server/relay/responseCacheStore.ts). One row per cache key (a SHA-256 of
// the scope and the request as sent upstream, hex): the stored answer as
// JSON (LONGTEXT on MySQL/MariaDB, whose TEXT stops at 64 KiB), its size in
// bytes (the total cap evicts the oldest rows first), and when it was made
// and when it expires (milliseconds).
import { MysqlAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const long = adapter instanceof MysqlAdapter ? sql`longtext` : sql`text`;
  await db.schema
    .createTable('response_cache')
    .addColumn('cache_key', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('entry', long, (column) => column.notNull())
    .addColumn('size', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('response_cache_created_idx').on('response_cache').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('response_cache').ifExists().execute();
}
