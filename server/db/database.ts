// Opens the configured database with Kysely and migrates it to the latest schema.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, MysqlDialect, PostgresDialect, SqliteDialect, sql, type InsertQueryBuilder, type InsertResult } from 'kysely';
import { DEFAULT_SQL_CONNECT_TIMEOUT_MS, type DatabaseConfig } from '../config';
import { startCheckpointer, WAL_SIZE_LIMIT_BYTES, type Checkpointer } from './checkpointer';
import { tagDatabaseFaults } from './faults';
import { migrationProvider } from './migrations';
import type { Database } from './schema';
import { sqliteAddon } from './sqliteAddon';

export type { Database } from './schema';
export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  dialect: DatabaseConfig['dialect'];
  /** SQLite only: the connection under Kysely, for the relay's prepared statements (billing/sqliteLedger.ts). */
  sqlite?: SQLite.Database;
  /** SQLite files only: the worker that checkpoints the WAL; stop it before closing the database. */
  checkpointer?: Checkpointer;
  /**
   * SQLite files only: set when this process holds the file's instance lock, so
   * no other live process relays on it (see holdInstanceLock); let go on close.
   */
  instanceLock?: { release(): void };
  /** PostgreSQL and MySQL: the pool's connections right now (open, idle, and requests waiting for one), for the metrics. */
  poolState?: () => PoolState;
}

export interface PoolState {
  total: number;
  idle: number;
  waiting: number;
}

/** mysql2's pool keeps its counts in fields it does not type. */
interface MysqlPoolInternals {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

/** Opens the database; the PostgreSQL and MySQL drivers load only when configured (a SQLite gateway never pays for them). */
export async function openDatabase(config: DatabaseConfig): Promise<OpenedDatabase> {
  switch (config.dialect) {
    case 'postgres': {
      const { default: pg } = await import('pg');
      // PostgreSQL sends int8 and numeric as strings to keep precision; our quotas fit
      // in a double (2^53), and the code everywhere expects numbers.
      pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
      pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));
      const pool = new pg.Pool({
        connectionString: config.connectionString,
        max: 20,
        connectionTimeoutMillis: config.connectTimeoutMs ?? DEFAULT_SQL_CONNECT_TIMEOUT_MS,
        // a server that vanished without closing the socket is noticed
        keepAlive: true,
      });
      // A connection the server closes (restart, failover, pg_terminate_backend)
      // emits 'error' on its client. The pool listens only while the client is
      // idle; a checked-out client without a listener crashed the process. Every
      // client gets one for its whole life: the query it was running fails (a
      // 503 for the request), and the pool drops the broken client on release.
      pool.on('connect', (client) => {
        client.on('error', (error) => console.warn(`[switchboard] PostgreSQL connection lost: ${error.message}`));
      });
      pool.on('error', (error) => console.warn(`[switchboard] PostgreSQL connection lost: ${error.message}`));
      return {
        dialect: 'postgres',
        db: new Kysely<Database>({ dialect: tagDatabaseFaults(new PostgresDialect({ pool })) }),
        poolState: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      };
    }
    case 'mysql': {
      const { createPool: createMysqlPool } = await import('mysql2');
      const pool = createMysqlPool({
        uri: config.connectionString,
        connectionLimit: 20,
        connectTimeout: config.connectTimeoutMs ?? DEFAULT_SQL_CONNECT_TIMEOUT_MS,
        enableKeepAlive: true,
        supportBigNumbers: true,
        bigNumberStrings: false,
        decimalNumbers: true,
      });
      // mysql2 removes a broken connection from the pool on its first 'error'
      // only; a second one (a write after the server closed it) had no listener.
      pool.on('connection', (connection) => {
        connection.on('error', (error: Error) => console.warn(`[switchboard] MySQL connection lost: ${error.message}`));
      });
      const internals = pool as unknown as MysqlPoolInternals;
      return {
        dialect: 'mysql',
        db: new Kysely<Database>({ dialect: tagDatabaseFaults(new MysqlDialect({ pool })) }),
        poolState: () => ({
          total: internals._allConnections?.length ?? 0,
          idle: internals._freeConnections?.length ?? 0,
          waiting: internals._connectionQueue?.length ?? 0,
        }),
      };
    }
    default: {
      if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
      const database = new SQLite(config.path, sqliteAddon());
      database.pragma('journal_mode = WAL');
      // In WAL mode NORMAL loses no committed transaction when the process dies,
      // only (at worst) the last ones on a power cut, and spares an fsync per commit.
      database.pragma('synchronous = NORMAL');
      database.pragma('busy_timeout = 5000');
      database.pragma('foreign_keys = ON');
      // A statement that may need undoing inside a transaction (a batch of log
      // rows, say) keeps a journal of its own, which spills to a temporary file
      // past 64 KiB: a file made and deleted in /var/tmp on every flush, seen
      // ten times a second under load. Memory holds it instead.
      database.pragma('temp_store = MEMORY');
      let checkpointer: Checkpointer | undefined;
      if (config.path !== ':memory:' && config.path !== '') {
        // checkpoints run in a worker (checkpointer.ts), not inside the relay's commits
        database.pragma('wal_autocheckpoint = 0');
        database.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
        checkpointer = startCheckpointer(config.path, (message) => console.warn(`[switchboard] WAL checkpoint failed: ${message}`));
      }
      const instanceLock = config.path !== ':memory:' && config.path !== '' ? holdInstanceLock(config.path) : undefined;
      cachePreparedStatements(database);
      return {
        dialect: 'sqlite',
        sqlite: database,
        checkpointer,
        instanceLock,
        db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }),
      };
    }
  }
}

/**
 * One gateway process per SQLite file is the rule, but nothing stops a second
 * one. The first process takes an exclusive lock on `<file>.lock` (a tiny
 * SQLite file of its own, locked with SQLite's own file locks, which the
 * operating system drops when the process dies, however it dies) and keeps
 * it while it runs; a process that finds it taken knows another one is live,
 * says so, and gets undefined.
 */
function holdInstanceLock(path: string): { release(): void } | undefined {
  const lock = new SQLite(`${path}.lock`, { timeout: 0, ...sqliteAddon() });
  try {
    // in EXCLUSIVE locking mode the lock of the first write transaction is kept until the connection closes;
    // the file holds no data, so no journal file of its own either
    lock.pragma('journal_mode = MEMORY');
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    console.warn(
      '[switchboard] another gateway process is using this SQLite file; use one process per file (PostgreSQL or MySQL for several)',
    );
    return undefined;
  }
  return { release: () => lock.close() };
}

const MAX_CACHED_STATEMENTS = 500;

/**
 * Kysely's SQLite driver prepares every query anew, which was an eighth of the
 * relay's CPU. The same SQL text always gets the same prepared statement here
 * (better-sqlite3 runs one statement at a time, so sharing is safe; SQLite
 * re-prepares a statement itself after a schema change). The cache starts over
 * when full, so SQL with varying IN-lists cannot grow it without bound.
 */
function cachePreparedStatements(database: SQLite.Database): void {
  const prepare = database.prepare.bind(database);
  const statements = new Map<string, SQLite.Statement>();
  database.prepare = ((source: string) => {
    let statement = statements.get(source);
    if (!statement) {
      if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
      statement = prepare(source);
      statements.set(source, statement);
    }
    return statement;
  }) as SQLite.Database['prepare'];
}

/** Applies every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a migration may throw anything; String() is the last resort for what is not an Error
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** The tables whose rows have an `id` column. */
type TableWithId = { [Table in keyof Database]: 'id' extends keyof Database[Table] ? Table : never }[keyof Database];

/**
 * Inserts one row and returns its id on every dialect: PostgreSQL needs
 * RETURNING, MySQL and SQLite report the insert id.
 */
export async function insertReturningId<Table extends TableWithId>(
  dialect: DatabaseConfig['dialect'],
  query: InsertQueryBuilder<Database, Table, InsertResult>,
): Promise<number> {
  if (dialect === 'postgres') {
    const row = await query.returning(sql.ref<number>('id').as('id')).executeTakeFirstOrThrow();
    return Number(row.id);
  }
  const result = await query.executeTakeFirstOrThrow();
  return Number(result.insertId);
}
