// The database servers a benchmarked gateway can run on besides its own SQLite file: a fresh, uniquely named
// database per gateway on the local PostgreSQL or MySQL/MariaDB, dropped afterwards, and the server's count of
// the transactions committed, read from outside the gateway, so the commits a relayed request costs can be told.
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';

export type BenchDatabaseKind = 'postgres' | 'mysql';

const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_ADMIN_URL = process.env.BENCH_MYSQL_URL ?? process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

export const DATABASE_LABELS: Record<BenchDatabaseKind, string> = { postgres: 'PostgreSQL', mysql: 'MySQL' };

/** BENCH_DB's value: postgres, mysql (mariadb is taken for mysql), or nothing for SQLite alone. */
export function benchDatabaseKind(value: string | undefined): BenchDatabaseKind | undefined {
  const word = value?.trim().toLowerCase();
  if (!word || word === 'sqlite') return undefined;
  if (word === 'postgres' || word === 'postgresql') return 'postgres';
  if (word === 'mysql' || word === 'mariadb') return 'mysql';
  throw new Error(`BENCH_DB must be postgres or mysql, got ${value}`);
}

export interface BenchDatabase {
  kind: BenchDatabaseKind;
  label: string;
  /** The gateway's SQL_DSN. */
  dsn: string;
  /** What commits() counts, for the report. */
  counted: string;
  /**
   * How long the gateway must have been idle before commits() includes all its work: PostgreSQL's backends
   * hand their counts to the statistics only every so often (at once when a second has passed since the last
   * time, else when they have been idle for ten seconds); MySQL's counters move at once.
   */
  settleMs: number;
  /**
   * Whether commits() counts this database alone. A server-wide count takes in whatever other clients of the
   * server commit meanwhile, so the rate measured while the gateway idles says nothing about another moment.
   */
  perDatabase: boolean;
  /** The server's count of committed transactions, for this database alone where the server tells it apart. */
  commits(): Promise<number>;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function postgresAdmin<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** InnoDB's counters of committed transactions: read-write, read-only, and autocommitted non-locking reads. */
const INNODB_COMMIT_COUNTERS = ['trx_rw_commits', 'trx_ro_commits', 'trx_nl_ro_commits'];

async function mysqlAdmin<Row>(text: string): Promise<Row[]> {
  const connection = await createConnection({ uri: MYSQL_ADMIN_URL });
  try {
    return (await connection.query(text))[0] as Row[];
  } finally {
    await connection.end();
  }
}

/** A fresh database of `kind` on the local server. */
export async function createBenchDatabase(kind: BenchDatabaseKind): Promise<BenchDatabase> {
  const name = `sb_bench_${randomBytes(6).toString('hex')}`;
  if (kind === 'postgres') {
    await postgresAdmin(`create database ${name}`);
    return {
      kind,
      label: DATABASE_LABELS[kind],
      dsn: withDatabase(POSTGRES_ADMIN_URL, name),
      counted: `pg_stat_database.xact_commit of the gateway's database (every committed transaction, read-only ones included), read after the gateway sat idle 11 s`,
      // ten seconds is PostgreSQL's idle flush interval for statistics; one more for the timer's slack.
      // Checked against 1,000 single-row inserts and 400 selects from a pool of 8: 721 counted after 1.7 to
      // 11 s, 1,408 after 13 s (the 8 above 1,400 are the pool's new connections)
      settleMs: 11_000,
      perDatabase: true,
      // read from the maintenance database, so the reading itself commits nothing in the counted one
      commits: async () =>
        Number(
          (await postgresAdmin<{ xact_commit: string }>('select xact_commit from pg_stat_database where datname = $1', [name]))[0]
            ?.xact_commit ?? Number.NaN,
        ),
      drop: async () => void (await postgresAdmin(`drop database if exists ${name} with (force)`).catch(() => undefined)),
    };
  }
  await mysqlAdmin(`create database ${name}`);
  // MariaDB tells commits per server, not per database, in three counters that were checked against a pool of
  // 8 connections. Handler_commit counts statements rather than transactions: one per autocommitted statement
  // on an InnoDB table, but inside a transaction one per statement plus one for the COMMIT (BEGIN, INSERT,
  // UPDATE, COMMIT: 3), so it makes a gateway that batches its writes in transactions look worse than one that
  // does not. Com_commit counts explicit COMMITs only and misses every autocommitted statement. InnoDB's own
  // transaction counters count what PostgreSQL's xact_commit counts: 1,000 autocommitted inserts 1,001 (one of
  // InnoDB's own), 400 autocommitted selects 400, 100 transactions of an INSERT and an UPDATE 100, 100 of two
  // selects 100. They are the ones read here: trx_rw_commits + trx_ro_commits + trx_nl_ro_commits. They are off
  // by default (innodb_monitor_enable); the bench turns on those that are off and turns them off again when it
  // drops its database. Reading them commits nothing.
  const enabled = await mysqlAdmin<{ name: string; enabled: number }>(
    `select name, enabled from information_schema.INNODB_METRICS where name in (${INNODB_COMMIT_COUNTERS.map((counter) => `'${counter}'`).join(', ')})`,
  );
  const turnedOn = enabled.filter((row) => Number(row.enabled) !== 1).map((row) => row.name);
  for (const counter of turnedOn) await mysqlAdmin(`set global innodb_monitor_enable = '${counter}'`);
  return {
    kind,
    label: DATABASE_LABELS[kind],
    dsn: withDatabase(MYSQL_ADMIN_URL, name),
    counted: `InnoDB's committed transactions (INNODB_METRICS ${INNODB_COMMIT_COUNTERS.join(' + ')}, read-only ones included), server-wide, read around each of the gateway's own runs`,
    settleMs: 0,
    perDatabase: false,
    commits: async () =>
      (
        await mysqlAdmin<{ count: string }>(
          `select count from information_schema.INNODB_METRICS where name in (${INNODB_COMMIT_COUNTERS.map((counter) => `'${counter}'`).join(', ')})`,
        )
      ).reduce((sum, row) => sum + Number(row.count), 0),
    drop: async () => {
      await mysqlAdmin(`drop database if exists ${name}`).catch(() => undefined);
      for (const counter of turnedOn) await mysqlAdmin(`set global innodb_monitor_disable = '${counter}'`).catch(() => undefined);
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

/** The commits a gateway's database counted over a scenario's window, the window's length, and the rate it commits at while idle. */
export interface CommitCount {
  commits: number;
  seconds: number;
  idlePerSecond: number;
}

/**
 * Counts the commits of the gateways on database servers, scenario by scenario. A server that counts per
 * database but late (PostgreSQL) is read at the ends of the whole scenario, each time after its gateway sat idle
 * long enough for every commit to be counted; its window holds all the load its gateway served in the scenario.
 * A server that counts at once but for the whole server (MySQL) is read around each of its gateway's own runs,
 * so no other gateway's work falls in the window. Either way, the rate at which the idle gateway commits
 * (background work: option sync, channel checks) is measured once at the start; the report takes it off where
 * the counter is the database's own.
 */
/**
 * How long a run's window stays open after its load stops: the gateway writes its logs and settlements in
 * batches a moment behind the answers (every 50 ms, longer when the database lags behind), and those commits
 * belong to the run.
 */
const TRAILING_WRITES_MS = 2000;

export class CommitWindows {
  private readonly late: number[];
  private lateReadings: number[] = [];
  private lateReadAt = 0;
  private readonly counts: CommitCount[];
  private readonly runStart = new Map<number, { commits: number; at: number }>();

  /** `databases`: by target, the database of a gateway whose commits are counted, or undefined. */
  constructor(private readonly databases: ReadonlyArray<BenchDatabase | undefined>) {
    this.late = databases.flatMap((database, which) => (database !== undefined && database.settleMs > 0 ? [which] : []));
    this.counts = databases.map(() => ({ commits: 0, seconds: 0, idlePerSecond: 0 }));
  }

  private async readLate(): Promise<number[]> {
    await sleep(Math.max(...this.late.map((which) => this.databases[which]!.settleMs)));
    this.lateReadAt = Date.now();
    return Promise.all(this.late.map((which) => this.databases[which]!.commits()));
  }

  /** Measures the idle rates (the gateways must be idle), then opens the first scenario's window. */
  async start(): Promise<void> {
    const counted = this.databases.flatMap((database, which) => (database === undefined ? [] : [which]));
    if (counted.length === 0) return;
    // for a late server the idle reading is as late as any other: settle, read, settle again, read
    const settle = Math.max(5000, ...counted.map((which) => this.databases[which]!.settleMs));
    await sleep(settle);
    const first = await Promise.all(counted.map((which) => this.databases[which]!.commits()));
    const from = Date.now();
    await sleep(settle);
    const second = await Promise.all(counted.map((which) => this.databases[which]!.commits()));
    const seconds = (Date.now() - from) / 1000;
    counted.forEach((which, at) => (this.counts[which].idlePerSecond = (second[at] - first[at]) / seconds));
    this.lateReadings = second.filter((_, at) => this.late.includes(counted[at]));
    this.lateReadAt = Date.now();
  }

  /** Before a run of target `which` (its warm-up second included). */
  async beforeRun(which: number): Promise<void> {
    const database = this.databases[which];
    if (database !== undefined && database.settleMs === 0) this.runStart.set(which, { commits: await database.commits(), at: Date.now() });
  }

  /** After that run, once the writes the gateway batches behind its answers had time to land. */
  async afterRun(which: number): Promise<void> {
    const start = this.runStart.get(which);
    if (start === undefined) return;
    this.runStart.delete(which);
    await sleep(TRAILING_WRITES_MS);
    this.counts[which].commits += (await this.databases[which]!.commits()) - start.commits;
    this.counts[which].seconds += (Date.now() - start.at) / 1000;
  }

  /** Closes the scenario's window: the count of each target (undefined for a target not counted), and opens the next. */
  async endScenario(): Promise<Array<CommitCount | undefined>> {
    if (this.late.length > 0) {
      const openedAt = this.lateReadAt;
      const readings = await this.readLate();
      this.late.forEach((which, at) => {
        this.counts[which].commits = readings[at] - this.lateReadings[at];
        this.counts[which].seconds = (this.lateReadAt - openedAt) / 1000;
      });
      this.lateReadings = readings;
    }
    const counts = this.counts.map((count, which) => (this.databases[which] === undefined ? undefined : { ...count }));
    for (const count of this.counts) Object.assign(count, { commits: 0, seconds: 0 });
    return counts;
  }
}
