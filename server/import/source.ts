// The database being moved from: a one-api or new-api SQLite file, MySQL DSN
// or PostgreSQL DSN, opened for reading only. Nothing here writes to it: the
// SQLite file is opened read-only, and the SQL servers only ever see SELECTs.
import SQLite from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import { sqliteAddon } from '../db/sqliteAddon';

/** The source's tables and columns are known only once it is open (see `columns`): every row is read as untyped. */
export type SourceSchema = Record<string, Record<string, unknown>>;

export interface SourceDatabase {
  /** Where it is, without a password (for the report). */
  label: string;
  dialect: 'sqlite' | 'mysql' | 'postgres';
  db: Kysely<SourceSchema>;
  /** Each table's column names (lower case). */
  columns: Map<string, Set<string>>;
  close(): Promise<void>;
}

/** A DSN without its password, fit for a report or a log line. */
export function redactedLocation(location: string): string {
  if (!/^(mysql|postgres(ql)?):\/\//.test(location)) return location;
  try {
    const url = new URL(location);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return location.replace(/:\/\/[^@]*@/, '://***@');
  }
}

export async function openSource(location: string): Promise<SourceDatabase> {
  let db: Kysely<SourceSchema>;
  let dialect: SourceDatabase['dialect'];
  if (/^postgres(ql)?:\/\//.test(location)) {
    const { default: pg } = await import('pg');
    dialect = 'postgres';
    db = new Kysely<SourceSchema>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location, max: 2 }) }) });
  } else if (/^mysql:\/\//.test(location)) {
    const { createPool } = await import('mysql2');
    dialect = 'mysql';
    db = new Kysely<SourceSchema>({
      dialect: new MysqlDialect({
        pool: createPool({ uri: location, connectionLimit: 2, supportBigNumbers: true, bigNumberStrings: false, decimalNumbers: true }),
      }),
    });
  } else {
    dialect = 'sqlite';
    const database = new SQLite(location, { readonly: true, fileMustExist: true, ...sqliteAddon() });
    db = new Kysely<SourceSchema>({ dialect: new SqliteDialect({ database }) });
  }
  try {
    const tables = await db.introspection.getTables();
    const columns = new Map<string, Set<string>>();
    for (const table of tables) columns.set(table.name.toLowerCase(), new Set(table.columns.map((column) => column.name.toLowerCase())));
    return { label: redactedLocation(location), dialect, db, columns, close: () => db.destroy() };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
