// npm run bench:dashboard: the dashboard's queries against a big install.
// Loads BENCH_DASHBOARD_ROWS consume logs (default 10 million) with their
// hourly rollups into SQLite (a temp file) and PostgreSQL (a temp database),
// spread as real traffic is: 1,000 users, 5,000 tokens (a few busy ones do
// most of the calls), 30 models, 50 channels, 90 days up to now. Then times
// every dashboard query through the app (user and admin; the default range,
// 30 days by day, 24 hours by hour, each filter) and the rollup log stats:
// the median of BENCH_DASHBOARD_RUNS runs each, target under 200 ms.
//
// Each database gets its fastest bulk path, its log indexes dropped during the
// load and rebuilt after: SQLite, generated in order of time, 50-row prepared
// INSERTs in big transactions, each hour's rollups summed in memory as it
// goes; PostgreSQL, generate_series in INSERT ... SELECT, the rollups by the
// migration's own back-fill query (INSERT ... SELECT ... GROUP BY).
//
//   BENCH_DASHBOARD_ROWS=1000000 BENCH_DASHBOARD_DATABASES=sqlite npm run bench:dashboard
//
// Loading 10 million rows takes minutes; BENCH_DASHBOARD_KEEP=<folder> keeps
// the SQLite file there and the PostgreSQL database (sb_bench_dashboard_<rows>)
// after the run, and a later run with the same folder and row count times the
// queries again without loading (on a quiet machine, say).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../server/config';
import type { Database } from '../server/db/database';
import type { NewLog } from '../server/repositories/logs';
import { rollupColumns, rollupsOf, ROLLUP_TABLES, upsertStatement } from '../server/repositories/usageRollups';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../tests/support/app';
import { POSTGRES_ADMIN_URL } from '../tests/support/databases';

const ROWS = Number(process.env.BENCH_DASHBOARD_ROWS ?? 10_000_000);
const RUNS = Number(process.env.BENCH_DASHBOARD_RUNS ?? 7);
const DATABASES = (process.env.BENCH_DASHBOARD_DATABASES ?? 'sqlite,postgres').split(',');
const USERS = 1_000;
const TOKENS = 5_000;
const MODELS = 30;
const CHANNELS = 50;
const DAYS = 90;
const HOUR = 3600;
const DAY = 86_400;
const TARGET_MS = 200;
const KEEP = process.env.BENCH_DASHBOARD_KEEP;
const LOG_INDEXES = ['user_id', 'created_at', 'type', 'username', 'token_name', 'model_name'];

const now = Math.floor(Date.now() / 1000);
const first = now - DAYS * DAY;

/** A small fast PRNG (mulberry32), seeded: every run loads the same data. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const modelName = (model: number) => `model-${String(model).padStart(2, '0')}`;

/**
 * One call: a token by a skewed draw (u^3: the busiest 1% of tokens make a
 * fifth of the calls), its owner, mostly the token's own model, one of that
 * model's two channels, a lognormal-ish latency.
 */
function call(next: () => number) {
  const u = next();
  const token = Math.floor(TOKENS * u * u * u);
  const roll = next();
  const model = roll < 0.8 ? token % MODELS : (token + 1 + Math.floor(next() * 3)) % MODELS;
  const channel = ((model * 5 + (next() < 0.5 ? 0 : 1)) % CHANNELS) + 1;
  const promptTokens = 10 + Math.floor(next() * 2000);
  const completionTokens = Math.floor(next() * 1000);
  return {
    userId: (token % USERS) + 1,
    tokenId: token + 1,
    model: modelName(model),
    channelId: channel,
    promptTokens,
    completionTokens,
    quota: promptTokens + 2 * completionTokens,
    elapsedMs: Math.floor(Math.exp(3 + next() * 7.5)),
  };
}

async function seedNames(db: Kysely<Database>): Promise<void> {
  // root is user 1; the other users, every token and channel by id
  for (let start = 2; start <= USERS; start += 500) {
    const rows = [];
    for (let id = start; id < Math.min(start + 500, USERS + 1); id += 1)
      rows.push({ id, username: `user${id}`, password_hash: 'x', quota: 1_000_000 });
    await db
      .insertInto('users')
      .values(rows as never)
      .execute();
  }
  for (let start = 1; start <= TOKENS; start += 500) {
    const rows = [];
    for (let id = start; id < Math.min(start + 500, TOKENS + 1); id += 1)
      rows.push({ id, user_id: ((id - 1) % USERS) + 1, key: `benchkey${id}`, name: `token${id}` });
    await db
      .insertInto('tokens')
      .values(rows as never)
      .execute();
  }
  const channels = [];
  for (let id = 1; id <= CHANNELS; id += 1) {
    channels.push({
      id,
      name: `channel${id}`,
      key: 'sk-x',
      status: id % 10 === 0 ? 2 : 1,
      auto_disabled: id % 20 === 0 ? 1 : 0,
      test_time: id % 3 === 0 ? 0 : now - id,
      response_time: id * 37,
      models: 'x',
      model_mapping: '{}',
    });
  }
  await db
    .insertInto('channels')
    .values(channels as never)
    .execute();
}

async function dropLogIndexes(db: Kysely<Database>): Promise<void> {
  for (const column of LOG_INDEXES) await db.schema.dropIndex(`logs_${column}_idx`).execute();
}

async function createLogIndexes(db: Kysely<Database>): Promise<void> {
  for (const column of LOG_INDEXES) await db.schema.createIndex(`logs_${column}_idx`).on('logs').column(column).execute();
}

/** SQLite (a connection of its own beside the app's): the calls in order of time, a day at a time, each day's rollups summed as it goes. */
function loadSqlite(path: string): void {
  const database = new SQLite(path);
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = OFF');
  const logColumns = [
    'user_id',
    'created_at',
    'type',
    'content',
    'username',
    'token_name',
    'token_id',
    'model_name',
    'channel_id',
    'quota',
    'prompt_tokens',
    'completion_tokens',
    'elapsed_ms',
    'is_stream',
    'estimated',
  ];
  const PER = 50;
  const placeholders = `(${logColumns.map(() => '?').join(', ')})`;
  const insertLogs = database.prepare(`insert into logs (${logColumns.join(', ')}) values ${Array(PER).fill(placeholders).join(', ')}`);
  const insertLog = database.prepare(`insert into logs (${logColumns.join(', ')}) values ${placeholders}`);
  // a UTC day spans two of the load's days: its daily rows are upserted, as the relay does
  const insertRollups = new Map(ROLLUP_TABLES.map((table) => [table.name, database.prepare(upsertStatement(table))]));
  const next = random(15);
  const perSecond = ROWS / (DAYS * DAY);
  let written = 0;
  const loadDay = database.transaction((day: number) => {
    const from = Math.round(perSecond * day * DAY);
    const to = Math.round(perSecond * (day + 1) * DAY);
    const logs: NewLog[] = [];
    let batch: unknown[] = [];
    for (let index = from; index < to; index += 1) {
      const made = call(next);
      const createdAt = first + Math.floor(index / perSecond);
      logs.push({
        userId: made.userId,
        username: '',
        type: 2,
        content: '',
        tokenId: made.tokenId,
        modelName: made.model,
        channelId: made.channelId,
        quota: made.quota,
        promptTokens: made.promptTokens,
        completionTokens: made.completionTokens,
        elapsedMs: made.elapsedMs,
        createdAt,
      });
      batch.push(
        made.userId,
        createdAt,
        2,
        'model ratio 1.00, group ratio 1.00',
        `user${made.userId}`,
        `token${made.tokenId}`,
        made.tokenId,
        made.model,
        made.channelId,
        made.quota,
        made.promptTokens,
        made.completionTokens,
        made.elapsedMs,
        0,
        0,
      );
      if (batch.length === PER * logColumns.length) {
        insertLogs.run(batch);
        batch = [];
      }
    }
    for (let offset = 0; offset < batch.length; offset += logColumns.length) insertLog.run(batch.slice(offset, offset + logColumns.length));
    for (const { table, rows } of rollupsOf(logs)) for (const row of rows) insertRollups.get(table.name)!.run(row);
    written += to - from;
  });
  for (let day = 0; day < DAYS; day += 1) {
    loadDay(day);
    process.stdout.write(`\r  sqlite: ${written.toLocaleString('en')} rows`);
  }
  process.stdout.write('\n');
  database.close();
}

/** PostgreSQL: generate_series into logs, a million rows per statement; then the rollups by the back-fill query. */
async function loadPostgres(db: Kysely<Database>): Promise<void> {
  const CHUNK = 1_000_000;
  for (let start = 0; start < ROWS; start += CHUNK) {
    const end = Math.min(start + CHUNK, ROWS);
    // volatile random() in a subquery is drawn once per row, so u is the same draw in u^3
    await sql`
      insert into logs (user_id, created_at, type, content, username, token_name, token_id, model_name, channel_id, quota, prompt_tokens, completion_tokens, elapsed_ms, is_stream, estimated)
      select token % ${sql.lit(USERS)} + 1, ${sql.lit(first)} + (i::bigint * ${sql.lit(DAYS * DAY)}) / ${sql.lit(ROWS)}, 2, 'model ratio 1.00, group ratio 1.00', 'user' || (token % ${sql.lit(USERS)} + 1), 'token' || (token + 1), token + 1,
             'model-' || lpad(model::text, 2, '0'), (model * 5 + case when r3 < 0.5 then 0 else 1 end) % ${sql.lit(CHANNELS)} + 1,
             prompt + 2 * completion, prompt, completion, floor(exp(3 + r4 * 7.5))::int, 0, 0
      from (
        select i, token, case when r1 < 0.8 then token % ${sql.lit(MODELS)} else (token + 1 + floor(r2 * 3)::int) % ${sql.lit(MODELS)} end as model, r3, r4,
               10 + floor(r5 * 2000)::int as prompt, floor(r6 * 1000)::int as completion
        from (select i, floor(${sql.lit(TOKENS)} * u * u * u)::int as token, r1, r2, r3, r4, r5, r6
              from (select i, random() as u, random() as r1, random() as r2, random() as r3, random() as r4, random() as r5, random() as r6
                    from generate_series(${sql.lit(start)}, ${sql.lit(end - 1)}) as i) as draws) as tokens
      ) as calls`.execute(db);
    process.stdout.write(`\r  postgres: ${end.toLocaleString('en')} rows`);
  }
  process.stdout.write('\n');
  const bounds = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];
  const buckets = bounds.map(
    (bound, index) =>
      `sum(case when ${index === 0 ? '' : `elapsed_ms > ${bounds[index - 1]} and `}elapsed_ms <= ${bound} then 1 else 0 end)`,
  );
  buckets.push(`sum(case when elapsed_ms > 60000 then 1 else 0 end)`);
  const fromLogs: Record<string, string> = { user_id: 'user_id', token_id: 'token_id', model: 'model_name', channel_id: 'channel_id' };
  for (const table of ROLLUP_TABLES) {
    const key = [`created_at - created_at % ${table.seconds}`, ...table.key.map((column) => fromLogs[column])];
    await sql
      .raw(
        `insert into ${table.name} (${rollupColumns(table).join(', ')})
         select ${key.join(', ')}, count(*), 0, sum(prompt_tokens), sum(completion_tokens), sum(quota), sum(elapsed_ms), ${buckets.join(', ')}
         from logs where type = 2 group by ${key.join(', ')}`,
      )
      .execute(db);
  }
  await sql`analyze`.execute(db);
}

interface Timed {
  name: string;
  medianMs: number;
}

async function timeQueries(app: FastifyInstance): Promise<Timed[]> {
  const cookie = await login(app, 'root', ROOT_PASSWORD);
  const heavyToken = 1;
  const range30 = `start=${now - 30 * DAY}&end=${now}&granularity=day`;
  const range24 = `start=${now - DAY}&end=${now}&granularity=hour`;
  const hourAligned = now - (now % HOUR);
  const queries: Array<[string, string]> = [
    ['user: default (7 days by day)', '/api/dashboard'],
    ['user: 30 days by day', `/api/dashboard?${range30}`],
    ['user: 24 h by hour', `/api/dashboard?${range24}`],
    ['user: token filter', `/api/dashboard?token_id=${heavyToken}`],
    ['user: model filter', `/api/dashboard?model=${modelName(0)}`],
    ['admin: default (7 days by day)', '/api/dashboard/admin'],
    ['admin: 30 days by day', `/api/dashboard/admin?${range30}`],
    ['admin: 24 h by hour', `/api/dashboard/admin?${range24}`],
    ['admin: user filter', '/api/dashboard/admin?user_id=2'],
    ['admin: token filter', `/api/dashboard/admin?token_id=${heavyToken}`],
    ['admin: model filter', `/api/dashboard/admin?model=${modelName(0)}`],
    ['admin: channel filter', '/api/dashboard/admin?channel_id=1'],
    ['admin: 30 days, model filter', `/api/dashboard/admin?${range30}&model=${modelName(3)}`],
    ['log stat: everything (rollups)', '/api/log/stat'],
    [
      'log stat: model, 30 whole days (rollups)',
      `/api/log/stat?model_name=${modelName(0)}&start_timestamp=${hourAligned - 30 * DAY}&end_timestamp=${hourAligned - 1}`,
    ],
    ['log self stat (rollups)', '/api/log/self/stat'],
  ];
  const results: Timed[] = [];
  for (const [name, url] of queries) {
    const times: number[] = [];
    for (let run = 0; run <= RUNS; run += 1) {
      const started = process.hrtime.bigint();
      const response = await asBrowser(app, cookie, { method: 'GET', url });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (!response.json<{ success: boolean }>().success) throw new Error(`${url}: ${response.body}`);
      // the first run warms the caches and is not counted
      if (run > 0) times.push(ms);
    }
    times.sort((left, right) => left - right);
    results.push({ name, medianMs: times[Math.floor(times.length / 2)] });
  }
  return results;
}

async function rowCounts(db: Kysely<Database>): Promise<{ logs: number; rollups: string }> {
  const count = async (table: 'logs' | (typeof ROLLUP_TABLES)[number]['name']) =>
    Number(
      (
        await db
          .selectFrom(table as 'logs')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
  const rollups: string[] = [];
  for (const table of ROLLUP_TABLES) rollups.push(`${table.name} ${(await count(table.name)).toLocaleString('en')}`);
  return { logs: await count('logs'), rollups: rollups.join(', ') };
}

async function benchOne(
  name: string,
  config: DatabaseConfig,
  drop: () => Promise<void>,
): Promise<{ name: string; counts: { logs: number; rollups: string }; loadSeconds: number; results: Timed[] }> {
  const app = await buildTestApp({}, config);
  try {
    const kept = await app.ctx.db
      .selectFrom('logs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(kept.count) === ROWS) {
      const counts = await rowCounts(app.ctx.db);
      console.log(
        `${name}: the kept database already holds ${ROWS.toLocaleString('en')} logs (rollup rows: ${counts.rollups}); timing only`,
      );
      return { name, counts, loadSeconds: 0, results: await timeQueries(app) };
    }
    if (Number(kept.count) > 0)
      throw new Error(`${name}: the kept database holds ${kept.count} logs, not ${ROWS}: remove it or change BENCH_DASHBOARD_ROWS`);
    console.log(`${name}: loading ${ROWS.toLocaleString('en')} logs`);
    const started = Date.now();
    await seedNames(app.ctx.db);
    await dropLogIndexes(app.ctx.db);
    if (config.dialect === 'sqlite') loadSqlite(config.path);
    else await loadPostgres(app.ctx.db);
    await createLogIndexes(app.ctx.db);
    if (name === 'sqlite') await sql`analyze`.execute(app.ctx.db);
    const loadSeconds = (Date.now() - started) / 1000;
    const counts = await rowCounts(app.ctx.db);
    console.log(`${name}: ${counts.logs.toLocaleString('en')} logs, rollup rows: ${counts.rollups}, loaded in ${loadSeconds.toFixed(0)} s`);
    return { name, counts, loadSeconds, results: await timeQueries(app) };
  } finally {
    await app.close();
    await drop();
  }
}

async function main(): Promise<void> {
  const runs = [];
  if (DATABASES.includes('sqlite')) {
    if (KEEP) mkdirSync(KEEP, { recursive: true });
    const folder = KEEP ?? mkdtempSync(join(tmpdir(), 'sb-bench-dashboard-'));
    const path = join(folder, `bench-${ROWS}.db`);
    runs.push(
      await benchOne('sqlite', { dialect: 'sqlite', path }, () =>
        Promise.resolve(KEEP ? undefined : rmSync(folder, { recursive: true, force: true })),
      ),
    );
  }
  if (DATABASES.includes('postgres')) {
    const name = KEEP ? `sb_bench_dashboard_${ROWS}` : `sb_bench_dashboard_${process.pid}`;
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    const exists = (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
    if (!exists) await admin.query(`create database ${name}`);
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    runs.push(
      await benchOne('postgres', { dialect: 'postgres', connectionString: url.toString() }, async () => {
        if (!KEEP) await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }),
    );
  }
  const names = runs[0]?.results.map((result) => result.name) ?? [];
  const width = Math.max(...names.map((name) => name.length));
  console.log(`\nmedian of ${RUNS} runs, ms (target < ${TARGET_MS}); ${ROWS.toLocaleString('en')} logs`);
  console.log(`${'query'.padEnd(width)}  ${runs.map((run) => run.name.padStart(9)).join('  ')}`);
  for (const [index, name] of names.entries()) {
    console.log(
      `${name.padEnd(width)}  ${runs.map((run) => `${run.results[index].medianMs.toFixed(1)}${run.results[index].medianMs > TARGET_MS ? '!' : ' '}`.padStart(9)).join('  ')}`,
    );
  }
  for (const run of runs)
    console.log(
      `${run.name}: ${run.counts.logs.toLocaleString('en')} logs, rollup rows: ${run.counts.rollups}, load ${run.loadSeconds.toFixed(0)} s`,
    );
}

await main();
