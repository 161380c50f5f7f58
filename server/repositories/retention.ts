// The retention panel's queries (billing/retentionKinds.ts and retentionReport.ts):
// the rows of a table by its time column, a table's room on disk (each
// dialect keeps its own catalogue of that) and the last prune of each kind
// (prune_runs, migration 0026).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import type { PruneRunsTable } from '../db/schema/pruneRuns';

type Executor = Kysely<Database>;
type Dialect = DatabaseConfig['dialect'];

export type PruneRunRow = Selectable<PruneRunsTable>;

/** Rows of `table`, or (with `before`) those whose `column` is under `before`. */
export async function countTableRows(db: Executor, table: string, before?: { column: string; value: number }): Promise<number> {
  const query = before
    ? sql<{ count: number | string }>`select count(*) as count from ${sql.table(table)} where ${sql.ref(before.column)} < ${before.value}`
    : sql<{ count: number | string }>`select count(*) as count from ${sql.table(table)}`;
  return Number((await query.execute(db)).rows[0]?.count ?? 0);
}

/** A table's bytes on disk, rows and indexes together; `estimated` when only a share of the file could be guessed. */
export interface TableSize {
  bytes: number;
  estimated: boolean;
}

async function postgresTableBytes(db: Executor, table: string): Promise<number> {
  const { rows } = await sql<{ bytes: number | string }>`select pg_total_relation_size(cast(${table} as regclass)) as bytes`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}

async function mysqlTableBytes(db: Executor, table: string): Promise<number> {
  // InnoDB's own figures, refreshed by its statistics: a little behind the rows just written or deleted
  const { rows } = await sql<{ bytes: number | string }>`
    select coalesce(data_length, 0) + coalesce(index_length, 0) as bytes
    from information_schema.tables where table_schema = database() and table_name = ${table}`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}

/** The table and its indexes, as sqlite_master names them. */
async function sqliteObjectNames(db: Executor, table: string): Promise<string[]> {
  const { rows } = await sql<{
    name: string;
  }>`select name from sqlite_master where tbl_name = ${table} and type in ('table', 'index')`.execute(db);
  return rows.map((row) => row.name);
}

/** The pages of the table and its indexes, read from dbstat one b-tree at a time (a name filter keeps it to that tree). */
async function sqliteDbstatBytes(db: Executor, table: string): Promise<number> {
  let bytes = 0;
  for (const name of await sqliteObjectNames(db, table)) {
    const { rows } = await sql<{
      bytes: number | null;
    }>`select sum(pgsize) as bytes from dbstat where name = ${name} and aggregate = 1`.execute(db);
    bytes += Number(rows[0]?.bytes ?? 0);
  }
  return bytes;
}

/**
 * Without dbstat (a SQLite built without it): the file's pages in use, shared
 * out among its tables by their rows. Rough, as rows differ in width, so marked
 * as an estimate.
 */
export async function sqlitePageShareBytes(db: Executor, table: string): Promise<number> {
  const pragma = async (name: 'page_count' | 'freelist_count' | 'page_size') =>
    Number(
      (await sql<{ value: number }>`select ${sql.raw(name)} as value from ${sql.raw(`pragma_${name}()`)}`.execute(db)).rows[0]?.value ?? 0,
    );
  const used = ((await pragma('page_count')) - (await pragma('freelist_count'))) * (await pragma('page_size'));
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(
    db,
  );
  let all = 0;
  let mine = 0;
  for (const { name } of rows) {
    const count = await countTableRows(db, name);
    all += count;
    if (name === table) mine = count;
  }
  return all === 0 ? 0 : Math.round((used * mine) / all);
}

async function sqliteTableSize(db: Executor, table: string): Promise<TableSize> {
  try {
    return { bytes: await sqliteDbstatBytes(db, table), estimated: false };
  } catch (error) {
    if (!/no such table: dbstat/i.test(String(error))) throw error;
    return { bytes: await sqlitePageShareBytes(db, table), estimated: true };
  }
}

/** The room `table` takes on disk, with its indexes. */
export async function tableSize(db: Executor, dialect: Dialect, table: string): Promise<TableSize> {
  if (dialect === 'postgres') return { bytes: await postgresTableBytes(db, table), estimated: false };
  if (dialect === 'mysql') return { bytes: await mysqlTableBytes(db, table), estimated: false };
  return sqliteTableSize(db, table);
}

/** The last prune of every kind that has been pruned. */
export function lastPruneRuns(db: Executor): Promise<PruneRunRow[]> {
  return db.selectFrom('prune_runs').selectAll().execute();
}

/** When the latest prune of any kind started (unix seconds); 0 before the first. */
export async function latestPruneStart(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('prune_runs')
    .select((eb) => eb.fn.max('started_at').as('started_at'))
    .executeTakeFirst();
  return Number(row?.started_at ?? 0);
}

/**
 * Keeps `run` as its kind's last prune. Only the holder of the retention lease
 * writes here, so the UPDATE-else-INSERT meets no other writer; the INSERT
 * still gives way to a row already there rather than fail the prune.
 */
export async function recordPruneRun(db: Executor, dialect: Dialect, run: PruneRunRow): Promise<void> {
  const { kind, ...rest } = run;
  const updated = await db.updateTable('prune_runs').set(rest).where('kind', '=', kind).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  const insert = db.insertInto('prune_runs').values(run);
  // MySQL has no ON CONFLICT; INSERT IGNORE skips the duplicate key the same way
  await (dialect === 'mysql' ? insert.ignore() : insert.onConflict((conflict) => conflict.column('kind').doNothing())).execute();
}
