// Frozen: OpenAI's Files API (/v1/files). A file's metadata is one `files` row,
// owned by one user; its bytes are `file_chunks` rows of at most 256 KiB each,
// numbered from 0, so every node reads what any node stored and no file is ever
// whole in memory. `seq` orders a user's files for the list's cursor; `id` is
// the public "file-..." name. A row is `uploading` until its last chunk is
// written (the list and the reads skip it; its bytes count against the quota
// meanwhile). The chunk column is each dialect's binary type (LONGBLOB on
// MySQL/MariaDB, whose default max_allowed_packet of 16 MiB holds a chunk).
import { MysqlAdapter, PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  let table = db.schema.createTable('files');
  if (adapter instanceof PostgresAdapter) table = table.addColumn('seq', 'bigserial', (column) => column.primaryKey());
  else if (adapter instanceof MysqlAdapter) table = table.addColumn('seq', 'bigint', (column) => column.primaryKey().autoIncrement());
  else table = table.addColumn('seq', 'integer', (column) => column.primaryKey().autoIncrement());
  await table
    .addColumn('id', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('user_id', 'integer', (column) => column.notNull())
    .addColumn('filename', 'varchar(255)', (column) => column.notNull())
    .addColumn('purpose', 'varchar(32)', (column) => column.notNull())
    .addColumn('bytes', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('status', 'varchar(16)', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('files_user_idx').on('files').columns(['user_id', 'seq']).execute();

  let binary = sql`blob`;
  if (adapter instanceof PostgresAdapter) binary = sql`bytea`;
  else if (adapter instanceof MysqlAdapter) binary = sql`longblob`;
  await db.schema
    .createTable('file_chunks')
    .addColumn('file_id', 'varchar(64)', (column) => column.notNull())
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('data', binary, (column) => column.notNull())
    .addPrimaryKeyConstraint('file_chunks_pk', ['file_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('file_chunks').ifExists().execute();
  await db.schema.dropTable('files').ifExists().execute();
}
