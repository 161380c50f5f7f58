// Writes the hourly usage rollups (migration 0008) beside the consume logs.
// A batch is summed in memory first, so each (hour, user, token, model,
// channel) row is touched once per batch, by one upsert: ON CONFLICT DO UPDATE
// on SQLite and PostgreSQL, ON DUPLICATE KEY UPDATE on MySQL. Callers run it in
// the transaction that writes the logs, so the logs and their rollups commit
// together (a crash or a retried batch never counts a log twice).
import { MysqlAdapter, sql, type Kysely } from 'kysely';
import { LATENCY_BUCKETS_MS } from '../../common/dashboard';
import { LogType } from '../../common/roles';
import type { Database } from '../db/database';
import type { UsageHourlyTable } from '../db/schema/usageHourly';
import type { NewLog } from './logs';

/** A relayed request that failed after dispatch: no consume log, one error in the rollups of its channel. */
export interface FailedRelay {
  userId: number;
  tokenId: number;
  model: string;
  /** The channel that failed last (0 when no channel could be tried). */
  channelId: number;
  /** Unix seconds. */
  createdAt: number;
  elapsedMs: number;
}

export const LATENCY_COLUMNS = [...LATENCY_BUCKETS_MS.map((bound) => `latency_le_${bound}`), 'latency_over'] as Array<keyof UsageHourlyTable & `latency_${string}`>;

/** The rollup columns that add up, in the order rollupValues gives them after the key. */
export const ROLLUP_COUNTERS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'quota', 'latency_ms_sum', ...LATENCY_COLUMNS] as const;
export const ROLLUP_KEY = ['hour', 'user_id', 'token_id', 'model', 'channel_id'] as const;
export const ROLLUP_COLUMNS = [...ROLLUP_KEY, ...ROLLUP_COUNTERS];

/** One row's worth of a batch: the key, then the counters, as ROLLUP_COLUMNS lists them. */
export type RollupValues = Array<number | string>;

/** Which latency column (by index in LATENCY_COLUMNS) a duration falls in. */
export function latencyBucket(elapsedMs: number): number {
  for (let index = 0; index < LATENCY_BUCKETS_MS.length; index += 1) if (elapsedMs <= LATENCY_BUCKETS_MS[index]) return index;
  return LATENCY_BUCKETS_MS.length;
}

const FIRST_BUCKET = ROLLUP_KEY.length + 6;

/**
 * A batch's consume logs and failed requests summed per rollup row, in key
 * order (the same on every node, so two batches' upserts cannot deadlock).
 * Empty when the batch has neither: nothing to write.
 */
export function rollupsOf(logs: readonly NewLog[], failures: readonly FailedRelay[] = []): RollupValues[] {
  if (failures.length === 0 && !logs.some((log) => log.type === LogType.consume)) return [];
  const rows = new Map<string, RollupValues>();
  const add = (createdAt: number, userId: number, tokenId: number, model: string, channelId: number, elapsedMs: number) => {
    const hour = createdAt - (createdAt % 3600);
    const key = `${hour}|${userId}|${tokenId}|${channelId}|${model}`;
    let row = rows.get(key);
    if (!row) {
      row = [hour, userId, tokenId, model, channelId, ...ROLLUP_COUNTERS.map(() => 0)];
      rows.set(key, row);
    }
    (row[FIRST_BUCKET - 1] as number) += elapsedMs;
    (row[FIRST_BUCKET + latencyBucket(elapsedMs)] as number) += 1;
    return row;
  };
  const now = Math.floor(Date.now() / 1000);
  for (const log of logs) {
    if (log.type !== LogType.consume) continue;
    const row = add(log.createdAt ?? now, log.userId, log.tokenId ?? 0, log.modelName ?? '', log.channelId ?? 0, log.elapsedMs ?? 0);
    (row[5] as number) += 1;
    (row[7] as number) += log.promptTokens ?? 0;
    (row[8] as number) += log.completionTokens ?? 0;
    (row[9] as number) += log.quota ?? 0;
  }
  for (const failure of failures) {
    const row = add(failure.createdAt, failure.userId, failure.tokenId, failure.model, failure.channelId, failure.elapsedMs);
    (row[6] as number) += 1;
  }
  return [...rows.entries()].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)).map(([, row]) => row);
}

/** The upsert's SET list: each counter plus what the new row brings (`incoming` names the new row's values). */
export function rollupIncrements(incoming: (column: string) => string): string {
  return ROLLUP_COUNTERS.map((column) => `${column} = usage_hourly.${column} + ${incoming(column)}`).join(', ');
}

/** Rows per statement: 21 values each, far below every dialect's bound-parameter limit. */
const ROWS_PER_UPSERT = 200;

/** Adds a batch's rollups, inside the caller's transaction (the one writing the batch's logs). */
export async function upsertRollups(db: Kysely<Database>, rows: readonly RollupValues[]): Promise<void> {
  if (rows.length === 0) return;
  const mysql = db.getExecutor().adapter instanceof MysqlAdapter;
  const conflict = mysql
    ? `on duplicate key update ${ROLLUP_COUNTERS.map((column) => `${column} = ${column} + values(${column})`).join(', ')}`
    : `on conflict (${ROLLUP_KEY.join(', ')}) do update set ${rollupIncrements((column) => `excluded.${column}`)}`;
  for (let index = 0; index < rows.length; index += ROWS_PER_UPSERT) {
    const chunk = rows.slice(index, index + ROWS_PER_UPSERT);
    const values = sql.join(chunk.map((row) => sql`(${sql.join(row)})`));
    await sql`insert into usage_hourly (${sql.raw(ROLLUP_COLUMNS.join(', '))}) values ${values} ${sql.raw(conflict)}`.execute(db);
  }
}
