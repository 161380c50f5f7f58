// The usage dashboard (common/dashboard.ts): every figure from the usage
// rollups (repositories/usage.ts), names, balances and channel health from
// their own tables; never a scan of the logs. A range is read in whole
// buckets, from the rollups of its granularity: its start goes down to the
// start of its hour or day, and its last bucket is read whole. The fixed
// windows are whole UTC days: today, and the 7 and 30 days ending today.
// The response cache's hits and savings are the one exception: a saving is
// kept only in its hit's consume log (repositories/responseCache.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { AdminDashboard, ChannelHealth, Dashboard, DashboardGranularity, UsagePoint, UsageTotals } from '../../../common/dashboard';
import { fail, ok } from '../../../common/envelope';
import { ChannelStatus, Role } from '../../../common/roles';
import type { Database } from '../../db/database';
import { callerOf, requireRole } from '../../plugins/auth';
import { channelNames, listChannelHealth } from '../../repositories/channels';
import { cacheHitTotals } from '../../repositories/responseCache';
import { sketchQuantile } from '../../repositories/latencySketch';
import { channelLatencies, topUsage, usageSeries, windowTotals, type PeriodRange, type UsageScope } from '../../repositories/usage';
import { tokenNames as tokenNamesOf } from '../../repositories/tokens';
import { userQuota, usernames as usernamesOf } from '../../repositories/users';
import { dashboardQuerySchema, type DashboardQuery } from './inputSchemas';

const HOUR = 3600;
const DAY = 86_400;
/** An hourly range of a month and a half, or a daily one of five years, at most. */
const MAX_BUCKETS = 1_830;
const TOP_MODELS = 10;
const TOP_TOKENS = 10;
const TOP_USERS = 10;
const TOP_CHANNELS = 20;
const SLOWEST_CHANNELS = 5;

export interface DashboardParams {
  start: number;
  end: number;
  granularity: DashboardGranularity;
  scope: UsageScope;
}

const ZERO: UsageTotals = { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, quota: 0 };

/** The query with its defaults, or what is wrong with it. `admin`: user_id and channel_id count. */
export function paramsOf(query: DashboardQuery, admin: boolean, now: number): DashboardParams | string {
  const number = (key: 'start' | 'end' | 'user_id' | 'token_id' | 'channel_id') =>
    query[key] === undefined || query[key] === '' ? undefined : Number(query[key]);
  const end = number('end') ?? now;
  let start = number('start') ?? end - 7 * DAY;
  if (start >= end) return 'start must be before end';
  const granularity: DashboardGranularity = query.granularity ?? (end - start > 2 * DAY ? 'day' : 'hour');
  const unit = granularity === 'hour' ? HOUR : DAY;
  start -= start % unit;
  if (Math.ceil((end - start) / unit) > MAX_BUCKETS) return `the range holds more than ${MAX_BUCKETS} ${granularity}s`;
  const model = query.model?.trim() ? query.model.trim() : undefined;
  return {
    start,
    end,
    granularity,
    scope: { tokenId: number('token_id'), model, ...(admin ? { userId: number('user_id'), channelId: number('channel_id') } : {}) },
  };
}

export const rangeOf = ({ start, end, granularity }: DashboardParams): PeriodRange => ({
  seconds: granularity === 'hour' ? HOUR : DAY,
  from: start,
  to: end,
});

/** Every bucket of the range in order, zeros where no rollup was. */
function filledSeries(start: number, end: number, unit: number, found: readonly UsagePoint[]): UsagePoint[] {
  const byBucket = new Map(found.map((point) => [point.bucket, point]));
  const series: UsagePoint[] = [];
  for (let bucket = start; bucket < end; bucket += unit) series.push(byBucket.get(bucket) ?? { bucket, ...ZERO });
  return series;
}

export function sumOf(points: readonly UsageTotals[]): UsageTotals {
  const totals = { ...ZERO };
  for (const point of points) {
    totals.requests += point.requests;
    totals.errors += point.errors;
    totals.prompt_tokens += point.prompt_tokens;
    totals.completion_tokens += point.completion_tokens;
    totals.quota += point.quota;
  }
  return totals;
}

const totalsPart = ({ requests, errors, prompt_tokens, completion_tokens, quota }: UsageTotals): UsageTotals => ({
  requests,
  errors,
  prompt_tokens,
  completion_tokens,
  quota,
});

async function userDashboard(
  db: Kysely<Database>,
  callerId: number,
  params: DashboardParams,
  now: number,
  cacheEnabled: boolean,
): Promise<Dashboard> {
  const { start, end, granularity, scope } = params;
  const unit = granularity === 'hour' ? HOUR : DAY;
  const range = rangeOf(params);
  const today = now - (now % DAY);
  // the hits of the same whole buckets as the rollups (the last one read whole)
  const bucketsEnd = start + Math.ceil((end - start) / unit) * unit;
  const [balance, windows, found, models, tokens, cacheHits] = await Promise.all([
    userQuota(db, callerId),
    windowTotals(db, scope, [today, today - 6 * DAY, today - 29 * DAY], now + 1),
    usageSeries(db, scope, range),
    topUsage(db, scope, range, 'model', TOP_MODELS),
    topUsage(db, scope, range, 'token_id', TOP_TOKENS),
    cacheHitTotals(db, scope, start, bucketsEnd),
  ]);
  const series = filledSeries(start, end, unit, found);
  const tokenNames = await tokenNamesOf(
    db,
    tokens.map((token) => Number(token.key)),
  );
  return {
    start,
    end,
    granularity,
    balance: Number(balance ?? 0),
    today: windows[0],
    last_7_days: windows[1],
    last_30_days: windows[2],
    totals: sumOf(series),
    series,
    by_model: models.map((model) => ({ model: String(model.key), ...totalsPart(model) })),
    top_tokens: tokens.map((token) => ({
      token_id: Number(token.key),
      token_name: tokenNames.get(Number(token.key)) ?? '',
      ...totalsPart(token),
    })),
    response_cache: { enabled: cacheEnabled, ...cacheHits },
  };
}

async function channelHealth(db: Kysely<Database>): Promise<ChannelHealth> {
  const channels = await listChannelHealth(db);
  const health: ChannelHealth = { enabled: 0, auto_disabled: 0, manually_disabled: 0, untested: 0, slowest: [] };
  for (const channel of channels) {
    if (Number(channel.status) === ChannelStatus.enabled) health.enabled += 1;
    else if (Number(channel.auto_disabled) === 1) health.auto_disabled += 1;
    else health.manually_disabled += 1;
    if (Number(channel.test_time) === 0) health.untested += 1;
  }
  health.slowest = channels
    // a failed test's response time is how long it took to fail, not how fast the channel answers
    .filter((channel) => Number(channel.status) === ChannelStatus.enabled && Number(channel.test_time) > 0 && !channel.test_error)
    .sort((left, right) => Number(right.response_time) - Number(left.response_time) || Number(left.id) - Number(right.id))
    .slice(0, SLOWEST_CHANNELS)
    .map((channel) => ({
      channel_id: Number(channel.id),
      channel_name: channel.name,
      response_time_ms: Number(channel.response_time),
      test_time: Number(channel.test_time),
    }));
  return health;
}

async function adminDashboard(
  db: Kysely<Database>,
  callerId: number,
  params: DashboardParams,
  now: number,
  cacheEnabled: boolean,
): Promise<AdminDashboard> {
  const range = rangeOf(params);
  const [own, users, channels, health] = await Promise.all([
    userDashboard(db, callerId, params, now, cacheEnabled),
    topUsage(db, params.scope, range, 'user_id', TOP_USERS),
    topUsage(db, params.scope, range, 'channel_id', TOP_CHANNELS),
    channelHealth(db),
  ]);
  const usernames = await usernamesOf(
    db,
    users.map((user) => Number(user.key)),
  );
  const channelIds = channels.map((channel) => Number(channel.key));
  const [names, latencies] = await Promise.all([channelNames(db, channelIds), channelLatencies(db, params.scope, range, channelIds)]);
  return {
    ...own,
    top_users: users.map((user) => ({ user_id: Number(user.key), username: usernames.get(Number(user.key)) ?? '', ...totalsPart(user) })),
    top_channels: channels.map((channel) => {
      const attempts = channel.requests + channel.errors;
      // a channel that never answered has no latency to show: its sketch holds only how long it took to fail
      const latency = (channel.requests > 0 && latencies.get(Number(channel.key))) || new Map<number, number>();
      return {
        channel_id: Number(channel.key),
        channel_name: names.get(Number(channel.key)) ?? '',
        ...totalsPart(channel),
        // every call the channel was given, failed ones included (the other tables count answered calls)
        requests: attempts,
        error_rate: attempts === 0 ? 0 : channel.errors / attempts,
        latency_p50_ms: sketchQuantile(latency, 0.5),
        latency_p95_ms: sketchQuantile(latency, 0.95),
      };
    }),
    channel_health: health,
  };
}

export function dashboardRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;

  const answer = async (query: DashboardQuery, callerId: number, admin: boolean) => {
    const now = Math.floor(Date.now() / 1000);
    const params = paramsOf(query, admin, now);
    if (typeof params === 'string') return fail(params);
    const cacheEnabled = app.ctx.options.bool('ResponseCacheEnabled');
    return ok(
      admin
        ? await adminDashboard(db, callerId, params, now, cacheEnabled)
        : await userDashboard(db, callerId, { ...params, scope: { ...params.scope, userId: callerId } }, now, cacheEnabled),
    );
  };

  app.get('/api/dashboard', { preHandler: requireRole(Role.user), schema: dashboardQuerySchema }, (request) =>
    answer(request.query, Number(callerOf(request).id), false),
  );
  app.get('/api/dashboard/admin', { preHandler: requireRole(Role.admin), schema: dashboardQuerySchema }, (request) =>
    answer(request.query, Number(callerOf(request).id), true),
  );
  return Promise.resolve();
}
