// The databases the server suites run on: SQLite always, PostgreSQL and
// MySQL/MariaDB when their local servers answer. Each suite gets a fresh,
// uniquely named database that is dropped afterwards. A server that is down
// makes its suites skip with a clear line, or fail when CI demands every suite
// (SWITCHBOARD_REQUIRE_SERVICES=1).
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DatabaseConfig } from '../../server/config';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

export interface TestDatabase {
  name: 'sqlite' | 'postgres' | 'mysql';
  config: DatabaseConfig;
  drop(): Promise<void>;
}

export interface DatabaseTarget {
  name: TestDatabase['name'];
  /** Whether the server answered; undefined until probed. */
  available: boolean;
  create(): Promise<TestDatabase>;
}

const required = process.env.SWITCHBOARD_REQUIRE_SERVICES === '1';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function mysqlReachable(): Promise<boolean> {
  try {
    const connection = await createConnection({ uri: MYSQL_ADMIN_URL, connectTimeout: 3000 });
    await connection.query('select 1');
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

function uniqueName(): string {
  return `sb_test_${randomBytes(6).toString('hex')}`;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

const sqliteTarget: DatabaseTarget = {
  name: 'sqlite',
  available: true,
  async create() {
    return { name: 'sqlite', config: { dialect: 'sqlite', path: ':memory:' }, drop: async () => undefined };
  },
};

function postgresTarget(available: boolean): DatabaseTarget {
  return {
    name: 'postgres',
    available,
    async create() {
      const database = uniqueName();
      const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await admin.connect();
      await admin.query(`create database ${database}`);
      await admin.end();
      return {
        name: 'postgres',
        config: { dialect: 'postgres', connectionString: withDatabase(POSTGRES_ADMIN_URL, database) },
        async drop() {
          const cleaner = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
          await cleaner.connect();
          await cleaner.query(`drop database if exists ${database} with (force)`);
          await cleaner.end();
        },
      };
    },
  };
}

function mysqlTarget(available: boolean): DatabaseTarget {
  return {
    name: 'mysql',
    available,
    async create() {
      const database = uniqueName();
      const admin = await createConnection({ uri: MYSQL_ADMIN_URL });
      await admin.query(`create database ${database} character set utf8mb4`);
      await admin.end();
      return {
        name: 'mysql',
        config: { dialect: 'mysql', connectionString: withDatabase(MYSQL_ADMIN_URL, database) },
        async drop() {
          const cleaner = await createConnection({ uri: MYSQL_ADMIN_URL });
          await cleaner.query(`drop database if exists ${database}`);
          await cleaner.end();
        },
      };
    },
  };
}

/**
 * Which databases a suite runs on. `'every'` (the default): SQLite, PostgreSQL and MariaDB, for the suites that
 * test the ledger, leases, limits, migrations or SQL that differs by dialect. `{ besideSqlite }`: SQLite and the one
 * server named, for suites whose SQL is the same everywhere; the files alternate between the two servers so both
 * stay covered, and SWITCHBOARD_DB_MATRIX=every runs them on all three as well.
 */
export type MatrixScope = 'every' | { besideSqlite: 'postgres' | 'mysql' };

const everyDatabase = process.env.SWITCHBOARD_DB_MATRIX === 'every';

/**
 * The targets of `scope`, probed once. A target that is down is reported here; the caller uses
 * describe.runIf(target.available) so the skip is visible.
 */
export async function databaseTargets(suite: string, scope: MatrixScope = 'every'): Promise<DatabaseTarget[]> {
  const wanted = (name: TestDatabase['name']) => scope === 'every' || everyDatabase || name === 'sqlite' || name === scope.besideSqlite;
  const [postgresUp, mysqlUp] = await Promise.all([
    wanted('postgres') ? postgresReachable() : false,
    wanted('mysql') ? mysqlReachable() : false,
  ]);
  const targets = [sqliteTarget, postgresTarget(postgresUp), mysqlTarget(mysqlUp)].filter((target) => wanted(target.name));
  for (const target of targets) {
    if (target.available) continue;
    const where = target.name === 'postgres' ? POSTGRES_ADMIN_URL : MYSQL_ADMIN_URL;
    if (required) throw new Error(`${target.name} is not reachable at ${where} and SWITCHBOARD_REQUIRE_SERVICES=1`);
    console.warn(`[switchboard] ${target.name} not reachable at ${where}: suite "${suite}" left out on ${target.name}`);
  }
  return targets;
}

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * This test file's prefix for every Redis key its gateways write (REDIS_KEY_PREFIX): files run at once on the one
 * Redis, and each fresh database numbers its users and keys from 1 again, so without it one file's requests in
 * flight, rate limits and sign-in failures would count against another's. A suite whose describes each start
 * gateways on a fresh database takes one per describe (`redisTestPrefix()`).
 */
export const redisTestPrefix = () => `test:${randomBytes(6).toString('hex')}:`;
const filePrefixes = new Map<string, string>();
// Vitest's own state, inside a test run only (the benches load this module too)
const vitest = process.env.VITEST ? await import('vitest') : undefined;
/**
 * The prefix of the test file running now, made at its first use. Keyed by the file rather than made once per module
 * load, so it stays apart from other files' even where files share their worker's modules (isolate: false).
 */
export function fileRedisPrefix(): string {
  const file = vitest?.expect.getState().testPath ?? '';
  let prefix = filePrefixes.get(file);
  if (!prefix) {
    prefix = redisTestPrefix();
    filePrefixes.set(file, prefix);
  }
  return prefix;
}

/**
 * Whether Redis answers at REDIS_URL. Like the databases above, a Redis that is
 * down fails the run under SWITCHBOARD_REQUIRE_SERVICES=1 and is otherwise
 * reported as a left-out suite.
 */
export async function redisAvailable(suite: string): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let up: boolean;
  try {
    await client.connect();
    up = (await client.ping()) === 'PONG';
  } catch {
    up = false;
  } finally {
    client.disconnect();
  }
  if (!up) {
    if (required) throw new Error(`Redis is not reachable at ${REDIS_URL} and SWITCHBOARD_REQUIRE_SERVICES=1`);
    console.warn(`[switchboard] Redis not reachable at ${REDIS_URL}: suite "${suite}" left out on Redis`);
  }
  return up;
}
