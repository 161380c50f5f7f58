// Reads the usage rollups (migration 0009) for the dashboard and the log
// stats: sums over a range of whole hours or days, narrowed to a user, token,
// model or channel. Never the logs: each question reads the narrowest rollup
// table whose key holds every column it filters or groups by (the channels',
// the users' or the tokens' when they can, else the whole key), at the period
// asked.
import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { UsageTotals } from '../../common/dashboard';
import type { Database } from '../db/database';
import { decodeSketch, mergeSketch, type LatencySketch } from './latencySketch';
import { ROLLUP_TABLES, type RollupKeyColumn, type RollupTable } from './usageRollups';

export interface UsageScope {
  userId?: number;
  tokenId?: number;
  model?: string;
  channelId?: number;
}

/** Periods from `from` (inclusive) to `to` (exclusive), unix seconds, of `seconds` each (3600 or 86400); `from` is aligned by the caller. */
export interface PeriodRange {
  seconds: number;
  from?: number;
  to?: number;
}

/** Kysely sees every rollup table as the whole-key one: the table picked always has the columns used. */
type Rollups<O> = SelectQueryBuilder<Database, 'usage_hourly', O>;

const SCOPE_COLUMNS: Array<[keyof UsageScope, RollupKeyColumn]> = [
  ['userId', 'user_id'],
  ['tokenId', 'token_id'],
  ['model', 'model'],
  ['channelId', 'channel_id'],
];

/** The narrowest table of the range's period that holds the scope's columns and `groupBy`. */
function rollupTableFor(scope: UsageScope, range: PeriodRange, groupBy?: RollupKeyColumn | readonly RollupKeyColumn[]): RollupTable {
  const needed = SCOPE_COLUMNS.filter(([field]) => scope[field] !== undefined).map(([, column]) => column);
  if (groupBy) needed.push(...(typeof groupBy === 'string' ? [groupBy] : groupBy));
  // ROLLUP_TABLES lists each period's tables fewest rows first
  return ROLLUP_TABLES.find(
    (candidate) => candidate.seconds === range.seconds && needed.every((column) => candidate.key.includes(column)),
  )!;
}

/** The rollups of the range's period narrowed to the scope: from the narrowest table that holds the scope's columns and `groupBy`. */
export function rollupsIn(
  db: Kysely<Database>,
  scope: UsageScope,
  range: PeriodRange,
  groupBy?: RollupKeyColumn | readonly RollupKeyColumn[],
): Rollups<object> {
  const table = rollupTableFor(scope, range, groupBy);
  let query = db.selectFrom(table.name as 'usage_hourly') as unknown as Rollups<object>;
  if (range.from !== undefined) query = query.where('period', '>=', range.from);
  if (range.to !== undefined) query = query.where('period', '<', range.to);
  if (scope.userId !== undefined) query = query.where('user_id', '=', scope.userId);
  if (scope.tokenId !== undefined) query = query.where('token_id', '=', scope.tokenId);
  if (scope.model !== undefined) query = query.where('model', '=', scope.model);
  if (scope.channelId !== undefined) query = query.where('channel_id', '=', scope.channelId);
  return query;
}

const TOTAL_COLUMNS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'quota'] as const;

/** sum(column) for each total, 0 on no rows. */
const totalSums = (eb: ExpressionBuilder<Database, 'usage_hourly'>) =>
  TOTAL_COLUMNS.map((column) => eb.fn.coalesce(eb.fn.sum<number>(column), eb.lit(0)).as(column));

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

export async function usageTotals(db: Kysely<Database>, scope: UsageScope, range: PeriodRange): Promise<UsageTotals> {
  return totalsOf(await rollupsIn(db, scope, range).select(totalSums).executeTakeFirst());
}

/**
 * Several windows of whole days that all end now, in one pass over the
 * widest: each window's totals are sums of the rows from its start on.
 */
export async function windowTotals(db: Kysely<Database>, scope: UsageScope, starts: readonly number[], to: number): Promise<UsageTotals[]> {
  const from = Math.min(...starts);
  const row = await rollupsIn(db, scope, { seconds: 86_400, from, to })
    .select(() =>
      starts.flatMap((start, index) =>
        TOTAL_COLUMNS.map((column) =>
          sql<number>`coalesce(sum(case when period >= ${start} then ${sql.ref(column)} else 0 end), 0)`.as(`${column}_${index}`),
        ),
      ),
    )
    .executeTakeFirst();
  const values = (row ?? {}) as Record<string, unknown>;
  return starts.map((_, index) => totalsOf(Object.fromEntries(TOTAL_COLUMNS.map((column) => [column, values[`${column}_${index}`]]))));
}

/** Totals per period of the range, only the periods that have rows, in order. */
export async function usageSeries(db: Kysely<Database>, scope: UsageScope, range: PeriodRange) {
  const rows = await rollupsIn(db, scope, range)
    .select((eb) => [eb.ref('period').as('bucket'), ...totalSums(eb)])
    .groupBy('period')
    .orderBy('period')
    .execute();
  return rows.map((row) => ({ bucket: Number(row.bucket), ...totalsOf(row) }));
}

/** The `limit` biggest groups by quota (ties by key), each with its totals. */
export async function topUsage(
  db: Kysely<Database>,
  scope: UsageScope,
  range: PeriodRange,
  column: RollupKeyColumn,
  limit: number,
): Promise<Array<UsageTotals & { key: string | number }>> {
  // the channel 0 of failures no channel could take is nobody's to list
  const inRange = () =>
    column === 'channel_id' ? rollupsIn(db, scope, range, column).where('channel_id', '<>', 0) : rollupsIn(db, scope, range, column);
  // The groups ranked by quota alone first (one sum a row, from the covering
  // index where there is one), then every total of those `limit` groups only:
  // over a month of tokens, far cheaper than five sums of every group. The
  // ranking sits in a derived table, as MySQL takes no LIMIT in an IN subquery.
  const ranked = inRange()
    .select(sql.ref<string | number>(column).as('key'))
    .groupBy(column)
    .orderBy(sql`sum(quota)`, 'desc')
    .orderBy(column)
    .limit(limit);
  const query = inRange()
    .where(sql.ref(column), 'in', sql`(select ${sql.ref('ranked.key')} from (${ranked}) as ranked)`)
    .select((eb) => [sql.ref<string | number>(column).as('key'), ...totalSums(eb)]);
  const rows = await query
    .groupBy(column)
    .orderBy(sql`sum(quota)`, 'desc')
    .orderBy(column)
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const values = row as Record<string, unknown>;
    return { key: column === 'model' ? String(values.key) : Number(values.key), ...totalsOf(values) };
  });
}

/** Every group of `columns` (say, each token's use of each model) over the range, with its totals: for a scope small enough to list whole. */
export async function usageGroups(
  db: Kysely<Database>,
  scope: UsageScope,
  range: PeriodRange,
  columns: readonly RollupKeyColumn[],
): Promise<Array<UsageTotals & Partial<Record<RollupKeyColumn, string | number>>>> {
  const rows = await rollupsIn(db, scope, range, columns)
    .select((eb) => [...columns.map((column) => sql.ref<string | number>(column).as(column)), ...totalSums(eb)])
    .groupBy([...columns])
    .execute();
  return rows.map((row) => {
    const values = row as Record<string, unknown>;
    const key = Object.fromEntries(columns.map((column) => [column, column === 'model' ? String(values[column]) : Number(values[column])]));
    return { ...key, ...totalsOf(values) };
  });
}

/**
 * The relay durations of each of `channelIds` over the range, their sketches
 * merged. Empty when the scope names a user or a token: only the channels'
 * tables keep sketches, and a figure from another scope would not be this
 * one's. Channels with no sketched row (only rows from before migration
 * 0016) are absent.
 */
export async function channelLatencies(
  db: Kysely<Database>,
  scope: UsageScope,
  range: PeriodRange,
  channelIds: readonly number[],
): Promise<Map<number, LatencySketch>> {
  const sketches = new Map<number, LatencySketch>();
  if (channelIds.length === 0 || !rollupTableFor(scope, range, 'channel_id').sketched) return sketches;
  const rows = await (rollupsIn(db, scope, range, 'channel_id') as unknown as SelectQueryBuilder<Database, 'usage_hourly_channels', object>)
    .select(['channel_id', 'latency_sketch'])
    .where('channel_id', 'in', [...channelIds])
    .where('latency_sketch', 'is not', null)
    .execute();
  for (const row of rows) {
    const channelId = Number(row.channel_id);
    const sketch = sketches.get(channelId) ?? new Map<number, number>();
    sketches.set(channelId, mergeSketch(sketch, decodeSketch(row.latency_sketch)));
  }
  return sketches;
}
