// Reads the hourly usage rollups (migration 0008) for the dashboard and the
// log stats: sums over a range of whole hours, narrowed to a user, token,
// model or channel. Never the logs: a rollup row stands for every consume
// log of its hour, so a range of 90 days reads a few rows per hour and key.
import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import { LATENCY_BUCKETS_MS, type UsageTotals } from '../../common/dashboard';
import type { Database } from '../db/database';
import { LATENCY_COLUMNS } from './usageRollups';

export interface UsageScope {
  userId?: number;
  tokenId?: number;
  model?: string;
  channelId?: number;
}

/** Hours from `from` (inclusive) to `to` (exclusive), unix seconds; `from` is aligned to the hour by the caller. */
export interface HourRange {
  from?: number;
  to?: number;
}

type Rollups<O> = SelectQueryBuilder<Database, 'usage_hourly', O>;

export function scoped<O>(query: Rollups<O>, scope: UsageScope, range: HourRange): Rollups<O> {
  let result = query;
  if (range.from !== undefined) result = result.where('hour', '>=', range.from);
  if (range.to !== undefined) result = result.where('hour', '<', range.to);
  if (scope.userId !== undefined) result = result.where('user_id', '=', scope.userId);
  if (scope.tokenId !== undefined) result = result.where('token_id', '=', scope.tokenId);
  if (scope.model !== undefined) result = result.where('model', '=', scope.model);
  if (scope.channelId !== undefined) result = result.where('channel_id', '=', scope.channelId);
  return result;
}

const TOTAL_COLUMNS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'quota'] as const;

/** sum(column) for each total, 0 on no rows. */
const totalSums = (eb: ExpressionBuilder<Database, 'usage_hourly'>) => TOTAL_COLUMNS.map((column) => eb.fn.coalesce(eb.fn.sum<number>(column), eb.lit(0)).as(column));

/** A row of sums as UsageTotals (PostgreSQL and MySQL answer sums of bigints as strings). */
export function totalsOf(row: Record<string, unknown> | undefined): UsageTotals {
  return {
    requests: Number(row?.requests ?? 0),
    errors: Number(row?.errors ?? 0),
    prompt_tokens: Number(row?.prompt_tokens ?? 0),
    completion_tokens: Number(row?.completion_tokens ?? 0),
    quota: Number(row?.quota ?? 0),
  };
}

export async function usageTotals(db: Kysely<Database>, scope: UsageScope, range: HourRange): Promise<UsageTotals> {
  return totalsOf(await scoped(db.selectFrom('usage_hourly').select(totalSums), scope, range).executeTakeFirst());
}

/**
 * Several windows that all end now, in one pass over the widest: each
 * window's totals are sums of the rows from its start on.
 */
export async function windowTotals(db: Kysely<Database>, scope: UsageScope, starts: readonly number[], to: number): Promise<UsageTotals[]> {
  const from = Math.min(...starts);
  const row = await scoped(
    db.selectFrom('usage_hourly').select(() =>
      starts.flatMap((start, index) => TOTAL_COLUMNS.map((column) => sql<number>`coalesce(sum(case when hour >= ${start} then ${sql.ref(column)} else 0 end), 0)`.as(`${column}_${index}`))),
    ),
    scope,
    { from, to },
  ).executeTakeFirst();
  const values = (row ?? {}) as Record<string, unknown>;
  return starts.map((_, index) => totalsOf(Object.fromEntries(TOTAL_COLUMNS.map((column) => [column, values[`${column}_${index}`]]))));
}

/** Totals per bucket of `bucketSeconds` (3600 or 86400), only the buckets that have rows, in order. */
export async function usageSeries(db: Kysely<Database>, scope: UsageScope, range: HourRange, bucketSeconds: number) {
  const bucket = bucketSeconds === 3600 ? sql<number>`hour` : sql<number>`hour - hour % ${sql.lit(bucketSeconds)}`;
  const rows = await scoped(
    db.selectFrom('usage_hourly').select((eb) => [bucket.as('bucket'), ...totalSums(eb)]),
    scope,
    range,
  )
    .groupBy(bucket)
    .orderBy(bucket)
    .execute();
  return rows.map((row) => ({ bucket: Number(row.bucket), ...totalsOf(row) }));
}

type GroupColumn = 'model' | 'token_id' | 'user_id' | 'channel_id';

/** The `limit` biggest groups by quota (ties by key), each with its totals and, when asked, its latency buckets. */
export async function topUsage(
  db: Kysely<Database>,
  scope: UsageScope,
  range: HourRange,
  column: GroupColumn,
  limit: number,
  withLatency = false,
): Promise<Array<UsageTotals & { key: string | number; latency: number[] }>> {
  let query = scoped(
    db.selectFrom('usage_hourly').select((eb) => [
      sql.ref<string | number>(column).as('key'),
      ...totalSums(eb),
      ...(withLatency ? [eb.fn.sum<number>('latency_ms_sum').as('latency_ms_sum'), ...LATENCY_COLUMNS.map((bucket) => eb.fn.sum<number>(bucket).as(bucket))] : []),
    ]),
    scope,
    range,
  );
  // the channel 0 of failures no channel could take is nobody's to list
  if (column === 'channel_id') query = query.where('channel_id', '<>', 0);
  const rows = await query
    .groupBy(column)
    .orderBy(sql`sum(quota)`, 'desc')
    .orderBy(column)
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const values = row as Record<string, unknown>;
    return {
      key: column === 'model' ? String(values.key) : Number(values.key),
      ...totalsOf(values),
      latency: withLatency ? LATENCY_COLUMNS.map((bucket) => Number(values[bucket] ?? 0)) : [],
    };
  });
}

/** The upper bound of the latency bucket the `fraction` rank falls in (the slowest bucket reads as its lower bound); 0 on no request. */
export function latencyPercentile(counts: readonly number[], fraction: number): number {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(total * fraction));
  let seen = 0;
  for (let index = 0; index < counts.length; index += 1) {
    seen += counts[index];
    if (seen >= rank) return LATENCY_BUCKETS_MS[Math.min(index, LATENCY_BUCKETS_MS.length - 1)];
  }
  return LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 1];
}
