// Writes the usage rollups (migration 0008) beside the consume logs. A batch
// is summed in memory first, once per table, so each rollup row is touched
// once per batch, by one upsert: ON CONFLICT DO UPDATE on SQLite and
// PostgreSQL, ON DUPLICATE KEY UPDATE on MySQL. Callers run it in the
// transaction that writes the logs, so the logs and their rollups commit
// together (a crash or a retried batch never counts a log twice).
//
// The channels' rows also carry a latency sketch (migration 0016), which no
// dialect can add up inside an upsert. It is read, merged and written back
// after the counters' upsert, in the same transaction: that upsert has
// created or write-locked every row of the batch (SQLite's writer holds the
// whole database), so no other node can change the row before this
// transaction ends, and a plain read shows this transaction its own version
// of the row, which it wrote over the last committed one. Two nodes writing
// one row take turns instead of losing each other's counts. No FOR UPDATE:
// the lock is already held, and on MySQL a locking range read would also lock
// the next row, which another batch may be inserting (a deadlock). For the
// same reason MySQL writes each row back by its whole key (a lock on that row
// alone); the others in one statement per table.
import { CompiledQuery, MysqlAdapter, PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import { LogType } from '../../common/roles';
import type { Database } from '../db/database';
import type { UsageCounters, UsageRollupsSchema } from '../db/schema/usageRollups';
import { addToSketch, decodeSketch, encodeSketch, mergeSketch, type LatencySketch } from './latencySketch';
import type { NewLog } from './logs';

export type RollupKeyColumn = 'user_id' | 'token_id' | 'model' | 'channel_id';

export interface RollupTable {
  name: keyof UsageRollupsSchema;
  /** The period: 3600 (hourly) or 86400 (daily). */
  seconds: number;
  key: readonly RollupKeyColumn[];
  /** Whether its rows carry a latency sketch (the channels' tables: key model, channel_id). */
  sketched?: boolean;
}

const FULL_KEY: readonly RollupKeyColumn[] = ['user_id', 'token_id', 'model', 'channel_id'];

/**
 * The rollup tables, as migration 0009 made them, at each period in the order
 * of their rows' number on a real install (models × channels ≪ users < tokens
 * < the whole key): a question reads the first that holds its columns.
 */
export const ROLLUP_TABLES: readonly RollupTable[] = [
  { name: 'usage_hourly_channels', seconds: 3600, key: ['model', 'channel_id'], sketched: true },
  { name: 'usage_hourly_tokens', seconds: 3600, key: ['user_id', 'token_id'] },
  { name: 'usage_hourly', seconds: 3600, key: FULL_KEY },
  { name: 'usage_daily_channels', seconds: 86_400, key: ['model', 'channel_id'], sketched: true },
  { name: 'usage_daily_users', seconds: 86_400, key: ['user_id'] },
  { name: 'usage_daily_tokens', seconds: 86_400, key: ['user_id', 'token_id'] },
  { name: 'usage_daily', seconds: 86_400, key: FULL_KEY },
];

/**
 * The latency counters' bucket upper bounds, ms (the last counter holds
 * everything slower). Still kept, as migration 0009 made them; percentiles
 * come from the channels' sketches instead, as a bucket's bound is no
 * duration anyone measured.
 */
const LATENCY_BUCKETS_MS = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;

export const LATENCY_COLUMNS = [...LATENCY_BUCKETS_MS.map((bound) => `latency_le_${bound}`), 'latency_over'] as Array<
  keyof UsageCounters & `latency_${string}`
>;

/** The columns that add up, in the order a row's values give them after its key. */
export const ROLLUP_COUNTERS: ReadonlyArray<keyof UsageCounters> = [
  'requests',
  'errors',
  'prompt_tokens',
  'completion_tokens',
  'quota',
  'latency_ms_sum',
  ...LATENCY_COLUMNS,
];

/** A table's columns in the order its rows' values give them: period, key, counters. */
export const rollupColumns = (table: RollupTable): string[] => ['period', ...table.key, ...ROLLUP_COUNTERS];

/** One row's values, as rollupColumns lists them. */
export type RollupValues = Array<number | string>;

export interface RollupWrite {
  table: RollupTable;
  rows: RollupValues[];
  /** For a sketched table: each row's durations, in the order of `rows`. */
  sketches?: LatencySketch[];
}

/** Which latency column (by index in LATENCY_COLUMNS) a duration falls in. */
export function latencyBucket(elapsedMs: number): number {
  for (let index = 0; index < LATENCY_BUCKETS_MS.length; index += 1) if (elapsedMs <= LATENCY_BUCKETS_MS[index]) return index;
  return LATENCY_BUCKETS_MS.length;
}

interface Counted {
  hour: number;
  key: Record<RollupKeyColumn, number | string>;
  counters: number[];
  sketch: LatencySketch;
}

/** Ascending order of the rollup rows' ids, as plain string comparison (no locale). */
const byText = (left: string, right: string) => {
  if (left === right) return 0;
  return left < right ? -1 : 1;
};

const counted = (log: NewLog) => log.type === LogType.consume || log.type === LogType.error;

/**
 * A batch's consume logs (requests) and error logs (errors: one per relayed
 * request refused or failed, so the dashboard's errors are exactly the error
 * rows) summed per row of each rollup table, rows in key order (the same on
 * every node, so two batches' upserts cannot deadlock). Empty when the batch
 * has neither: nothing to write.
 */
export function rollupsOf(logs: readonly NewLog[]): RollupWrite[] {
  if (!logs.some(counted)) return [];
  const hourly = new Map<string, Counted>();
  const add = (createdAt: number, userId: number, tokenId: number, model: string, channelId: number, elapsedMs: number) => {
    const hour = createdAt - (createdAt % 3600);
    const id = `${hour}|${userId}|${tokenId}|${channelId}|${model}`;
    let counted = hourly.get(id);
    if (!counted) {
      counted = {
        hour,
        key: { user_id: userId, token_id: tokenId, model, channel_id: channelId },
        counters: ROLLUP_COUNTERS.map(() => 0),
        sketch: new Map(),
      };
      hourly.set(id, counted);
    }
    counted.counters[5] += elapsedMs;
    counted.counters[6 + latencyBucket(elapsedMs)] += 1;
    // failed attempts too, as the counters above: a channel that fails slowly is slow
    addToSketch(counted.sketch, elapsedMs);
    return counted.counters;
  };
  const now = Math.floor(Date.now() / 1000);
  for (const log of logs) {
    if (!counted(log)) continue;
    const counters = add(log.createdAt ?? now, log.userId, log.tokenId ?? 0, log.modelName ?? '', log.channelId ?? 0, log.elapsedMs ?? 0);
    if (log.type === LogType.error) {
      counters[1] += 1;
      continue;
    }
    counters[0] += 1;
    counters[2] += log.promptTokens ?? 0;
    counters[3] += log.completionTokens ?? 0;
    counters[4] += log.quota ?? 0;
  }
  return ROLLUP_TABLES.map((table) => {
    const rows = new Map<string, { row: RollupValues; sketch: LatencySketch }>();
    for (const { hour, key, counters, sketch } of hourly.values()) {
      const period = hour - (hour % table.seconds);
      const keyValues = table.key.map((column) => key[column]);
      const id = `${period}|${keyValues.join('|')}`;
      const found = rows.get(id);
      if (!found)
        rows.set(id, { row: [period, ...keyValues, ...counters], sketch: table.sketched ? mergeSketch(new Map(), sketch) : sketch });
      else {
        for (let index = 0; index < counters.length; index += 1) (found.row[1 + keyValues.length + index] as number) += counters[index];
        if (table.sketched) mergeSketch(found.sketch, sketch);
      }
    }
    const sorted = [...rows.entries()].sort(([left], [right]) => byText(left, right)).map(([, found]) => found);
    return { table, rows: sorted.map(({ row }) => row), ...(table.sketched ? { sketches: sorted.map(({ sketch }) => sketch) } : {}) };
  });
}

/** A statement with `?` placeholders, for Kysely (numbered for PostgreSQL) and the SQLite ledger alike. */
export interface PlainStatement {
  text: string;
  parameters: Array<number | string>;
}

/** Rows per sketch statement: a few thousand parameters, under every dialect's limit. */
const SKETCH_ROWS_PER_STATEMENT = 1_000;

/** A sketched write's rows in chunks: [period, model, channel_id] and the batch's sketch of each. */
function sketchChunks(write: RollupWrite): Array<Array<{ key: [number, string, number]; sketch: LatencySketch }>> {
  const rows = write.rows.map((row, index) => ({
    key: [Number(row[0]), String(row[1]), Number(row[2])] as [number, string, number],
    sketch: write.sketches![index],
  }));
  const chunks = [];
  for (let index = 0; index < rows.length; index += SKETCH_ROWS_PER_STATEMENT)
    chunks.push(rows.slice(index, index + SKETCH_ROWS_PER_STATEMENT));
  return chunks;
}

const keyId = (period: unknown, model: unknown, channelId: unknown) => `${Number(period)}|${Number(channelId)}|${String(model)}`;

/**
 * A sketched write's merge: read the stored sketches, then write each back
 * with the batch's added (`rowByRow`: one statement per row). Run after the
 * write's upsert, in its transaction (see the top).
 */
export function sketchMerges(
  write: RollupWrite,
  rowByRow: boolean,
): Array<{ read: PlainStatement; write(stored: ReadonlyArray<Record<string, unknown>>): PlainStatement[] }> {
  if (!write.table.sketched || !write.sketches || write.rows.length === 0) return [];
  const name = write.table.name;
  return sketchChunks(write).map((chunk) => {
    const tuples = chunk.map(() => '(?, ?, ?)').join(', ');
    const keys = chunk.flatMap(({ key }) => key);
    return {
      read: {
        text: `select period, model, channel_id, latency_sketch from ${name} where (period, model, channel_id) in (${tuples})`,
        parameters: keys,
      },
      write: (stored) => {
        const before = new Map(stored.map((row) => [keyId(row.period, row.model, row.channel_id), row.latency_sketch as string | null]));
        const merged = chunk.map(({ key, sketch }) => ({
          key,
          text: encodeSketch(mergeSketch(decodeSketch(before.get(keyId(...key))), sketch)),
        }));
        if (rowByRow)
          return merged.map(({ key, text }) => ({
            text: `update ${name} set latency_sketch = ? where period = ? and model = ? and channel_id = ?`,
            parameters: [text, ...key],
          }));
        const cases = chunk.map(() => 'when period = ? and model = ? and channel_id = ? then ?').join(' ');
        return [
          {
            text: `update ${name} set latency_sketch = case ${cases} end where (period, model, channel_id) in (${tuples})`,
            parameters: [...merged.flatMap(({ key, text }) => [...key, text]), ...keys],
          },
        ];
      },
    };
  });
}

/** What an upsert does with a row already there: adds the new row's counters to it, in the dialect's words. */
function onConflict(table: RollupTable, mysql: boolean): string {
  return mysql
    ? `on duplicate key update ${ROLLUP_COUNTERS.map((column) => `${column} = ${column} + values(${column})`).join(', ')}`
    : `on conflict (${['period', ...table.key].join(', ')}) do update set ${ROLLUP_COUNTERS.map((column) => `${column} = ${table.name}.${column} + excluded.${column}`).join(', ')}`;
}

/** A table's upsert of one row, with positional parameters (the SQLite ledger prepares it once). */
export function upsertStatement(table: RollupTable): string {
  const columns = rollupColumns(table);
  return `insert into ${table.name} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')}) ${onConflict(table, false)}`;
}

/** Values per statement: far below every dialect's bound-parameter limit (65,535 on PostgreSQL and MySQL). */
const VALUES_PER_STATEMENT = 30_000;

/**
 * Adds a batch's rollups, inside the caller's transaction (the one writing
 * the batch's logs). PostgreSQL takes every table's upsert in one statement
 * (data-modifying WITH): the settlement's transaction, which holds rows every
 * reservation waits for, pays one round trip for them, not six (then the
 * channels' sketches, two per channel table).
 */
export async function upsertRollups(db: Kysely<Database>, writes: readonly RollupWrite[]): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const mysql = adapter instanceof MysqlAdapter;
  const postgres = adapter instanceof PostgresAdapter;
  const statements = writes.flatMap(({ table, rows }) => {
    const head = sql.raw(`insert into ${table.name} (${rollupColumns(table).join(', ')}) values`);
    const conflict = sql.raw(onConflict(table, mysql));
    const perStatement = Math.floor(VALUES_PER_STATEMENT / rollupColumns(table).length);
    const chunks: Array<{ statement: RawBuilder<unknown>; values: number }> = [];
    for (let index = 0; index < rows.length; index += perStatement) {
      const chunk = rows.slice(index, index + perStatement);
      chunks.push({
        statement: sql`${head} ${sql.join(chunk.map((row) => sql`(${sql.join(row)})`))} ${conflict}`,
        values: chunk.length * rollupColumns(table).length,
      });
    }
    return chunks;
  });
  if (postgres) await upsertTogether(db, statements);
  else for (const { statement } of statements) await statement.execute(db);
  const compiled = ({ text, parameters }: PlainStatement) => {
    let number = 0;
    return CompiledQuery.raw(postgres ? text.replace(/\?/g, () => `$${(number += 1)}`) : text, parameters);
  };
  for (const write of writes) {
    for (const merge of sketchMerges(write, mysql)) {
      const stored = await db.executeQuery<Record<string, unknown>>(compiled(merge.read));
      for (const statement of merge.write(stored.rows)) await db.executeQuery(compiled(statement));
    }
  }
}

/** PostgreSQL's upserts, as few statements as the parameter limit allows (data-modifying WITH). */
async function upsertTogether(
  db: Kysely<Database>,
  statements: ReadonlyArray<{ statement: RawBuilder<unknown>; values: number }>,
): Promise<void> {
  let group: Array<(typeof statements)[number]> = [];
  let values = 0;
  const flush = async () => {
    if (group.length === 0) return;
    const [last, ...before] = [...group].reverse();
    const withs = before.reverse().map(({ statement }, index) => sql`${sql.raw(`w${index}`)} as (${statement})`);
    await (withs.length === 0 ? last.statement : sql`with ${sql.join(withs)} ${last.statement}`).execute(db);
    group = [];
    values = 0;
  };
  for (const statement of statements) {
    if (values + statement.values > VALUES_PER_STATEMENT) await flush();
    group.push(statement);
    values += statement.values;
  }
  await flush();
}
