// The usage dashboard and its hourly rollups on SQLite, PostgreSQL and MySQL:
// logs and failures written as the relay writes them (the ledger's batches),
// then every section of both answers checked to the unit; the log stats read
// the same rollups; the migration back-fills them; a write that fails leaves
// neither logs nor rollups; and a real relayed call (and a failed one) lands
// in them.
import type { FastifyInstance } from 'fastify';
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase } from '../../server/db/database';
import { migrationProvider } from '../../server/db/migrations';
import { LogType } from '../../common/roles';
import { SKETCH_RELATIVE_ACCURACY } from '../../server/repositories/latencySketch';
import { insertLogs, type NewLog } from '../../server/repositories/logs';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startRelayHarness } from './relay/harness';

const targets = await databaseTargets('dashboard');

const HOUR = 3600;
const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);
/** Three days ago at 10:00 UTC: inside every window but today, and its next hours on the same (UTC) day whenever the suite runs. */
const base = now - (now % DAY) - 3 * DAY + 10 * HOUR;
const ZERO = { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, quota: 0 };

/** A percentile read from a sketch: within its relative accuracy of the measured duration. */
function expectNear(actual: number | null, measured: number) {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - measured) / measured).toBeLessThanOrEqual(SKETCH_RELATIVE_ACCURACY);
}

for (const target of targets) {
  describe.runIf(target.available)(`the dashboard on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    let ann: string;
    let annId: number;
    let bobId: number;
    const tokens: Record<string, number> = {};
    const channels: Record<string, number> = {};

    const get = (cookie: string | undefined, url: string) => asBrowser(app, cookie, { method: 'GET', url });
    const data = async (cookie: string, url: string) => {
      const body = (await get(cookie, url)).json();
      expect(body.success, body.message).toBe(true);
      return body.data;
    };

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
      await register(app, 'ann');
      await register(app, 'bob');
      ann = await login(app, 'ann', 'password-123');
      const bob = await login(app, 'bob', 'password-123');
      const idOf = async (username: string) =>
        Number((await app.ctx.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id);
      annId = await idOf('ann');
      bobId = await idOf('bob');
      for (const [cookie, name] of [
        [ann, 'a1'],
        [ann, 'a2'],
        [bob, 'b1'],
      ] as const) {
        const created = (
          await asBrowser(app, cookie, { method: 'POST', url: '/api/token/', payload: { name, remain_quota: 0, unlimited_quota: true } })
        ).json();
        tokens[name] = Number(created.data.id);
      }
      for (const name of ['c1', 'c2']) {
        const created = (
          await asBrowser(app, root, {
            method: 'POST',
            url: '/api/channel/',
            payload: { name, type: 1, key: `sk-${name}`, models: 'gpt-4', group: 'default' },
          })
        ).json();
        channels[name] = Number(created.data.ids[0]);
      }
      const consume = (fields: Partial<NewLog> & { userId: number; username: string }): NewLog => ({
        type: 2,
        content: 'model ratio 15.00, group ratio 1.00',
        ...fields,
      });
      await app.ctx.ledger.insertLogs([
        consume({
          userId: annId,
          username: 'ann',
          tokenId: tokens.a1,
          tokenName: 'a1',
          modelName: 'gpt-4',
          channelId: channels.c1,
          quota: 1000,
          promptTokens: 100,
          completionTokens: 50,
          elapsedMs: 80,
          createdAt: base + 10,
        }),
        consume({
          userId: annId,
          username: 'ann',
          tokenId: tokens.a1,
          tokenName: 'a1',
          modelName: 'gpt-4',
          channelId: channels.c1,
          quota: 500,
          promptTokens: 10,
          completionTokens: 5,
          elapsedMs: 300,
          createdAt: base + 20,
        }),
        consume({
          userId: annId,
          username: 'ann',
          tokenId: tokens.a2,
          tokenName: 'a2',
          modelName: 'gpt-3.5-turbo',
          channelId: channels.c2,
          quota: 200,
          promptTokens: 20,
          completionTokens: 20,
          elapsedMs: 1200,
          createdAt: base + HOUR + 5,
        }),
        consume({
          userId: bobId,
          username: 'bob',
          tokenId: tokens.b1,
          tokenName: 'b1',
          modelName: 'gpt-4',
          channelId: channels.c2,
          quota: 5000,
          promptTokens: 500,
          completionTokens: 500,
          elapsedMs: 70_000,
          createdAt: base - DAY,
        }),
        { userId: annId, username: 'ann', type: 1, content: 'top-up', quota: 999, createdAt: base },
      ]);
      const failures: NewLog[] = [
        {
          userId: annId,
          username: 'ann',
          type: LogType.error,
          content: 'the upstream service failed',
          tokenId: tokens.a1,
          modelName: 'gpt-4',
          channelId: channels.c2,
          createdAt: base + 30,
          elapsedMs: 3000,
        },
        {
          userId: bobId,
          username: 'bob',
          type: LogType.error,
          content: 'no channel available for model gpt-4o',
          tokenId: tokens.b1,
          modelName: 'gpt-4o',
          channelId: 0,
          createdAt: base,
          elapsedMs: 5,
        },
      ];
      await app.ctx.ledger.settle([], failures);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    it('answers an admin with every user, model, token and channel, from the rollups', async () => {
      const dashboard = await data(root, '/api/dashboard/admin');
      expect(dashboard.granularity).toBe('day');
      expect(dashboard.start).toBe(now - 7 * DAY - ((now - 7 * DAY) % DAY));
      expect(dashboard.totals).toEqual({ requests: 4, errors: 2, prompt_tokens: 630, completion_tokens: 575, quota: 6700 });
      expect(dashboard.last_7_days).toEqual(dashboard.totals);
      expect(dashboard.last_30_days).toEqual(dashboard.totals);
      expect(dashboard.today).toEqual(ZERO);
      expect(dashboard.series).toHaveLength(Math.ceil((now - dashboard.start) / DAY));
      expect(dashboard.series.map((point: { bucket: number }) => point.bucket)).toEqual(
        dashboard.series.map((_: unknown, index: number) => dashboard.start + index * DAY),
      );
      const bucketOf = (time: number) => dashboard.series.find((point: { bucket: number }) => point.bucket === time - (time % DAY));
      expect(bucketOf(base - DAY)).toEqual({
        bucket: base - DAY - ((base - DAY) % DAY),
        requests: 1,
        errors: 0,
        prompt_tokens: 500,
        completion_tokens: 500,
        quota: 5000,
      });
      expect(
        dashboard.series.filter((point: { requests: number; errors: number }) => point.requests + point.errors === 0).length,
      ).toBeGreaterThan(0);
      expect(dashboard.by_model).toEqual([
        { model: 'gpt-4', requests: 3, errors: 1, prompt_tokens: 610, completion_tokens: 555, quota: 6500 },
        { model: 'gpt-3.5-turbo', requests: 1, errors: 0, prompt_tokens: 20, completion_tokens: 20, quota: 200 },
        { model: 'gpt-4o', ...ZERO, errors: 1 },
      ]);
      expect(dashboard.top_tokens).toEqual([
        { token_id: tokens.b1, token_name: 'b1', requests: 1, errors: 1, prompt_tokens: 500, completion_tokens: 500, quota: 5000 },
        { token_id: tokens.a1, token_name: 'a1', requests: 2, errors: 1, prompt_tokens: 110, completion_tokens: 55, quota: 1500 },
        { token_id: tokens.a2, token_name: 'a2', requests: 1, errors: 0, prompt_tokens: 20, completion_tokens: 20, quota: 200 },
      ]);
      expect(dashboard.top_users).toEqual([
        { user_id: bobId, username: 'bob', requests: 1, errors: 1, prompt_tokens: 500, completion_tokens: 500, quota: 5000 },
        { user_id: annId, username: 'ann', requests: 3, errors: 1, prompt_tokens: 130, completion_tokens: 75, quota: 1700 },
      ]);
      expect(dashboard.top_channels).toEqual([
        {
          channel_id: channels.c2,
          channel_name: 'c2',
          requests: 3,
          errors: 1,
          prompt_tokens: 520,
          completion_tokens: 520,
          quota: 5200,
          error_rate: 1 / 3,
          latency_p50_ms: expect.any(Number),
          latency_p95_ms: expect.any(Number),
        },
        {
          channel_id: channels.c1,
          channel_name: 'c1',
          requests: 2,
          errors: 0,
          prompt_tokens: 110,
          completion_tokens: 55,
          quota: 1500,
          error_rate: 0,
          latency_p50_ms: expect.any(Number),
          latency_p95_ms: expect.any(Number),
        },
      ]);
      // c2 took 1200 ms, 3000 ms (the failure) and 70 s; c1 80 ms and 300 ms: the durations themselves, not the bounds of buckets
      // (c2's three calls are its requests, the failed one included)
      const [c2, c1] = dashboard.top_channels;
      expectNear(c2.latency_p50_ms, 3000);
      expectNear(c2.latency_p95_ms, 70_000);
      expectNear(c1.latency_p50_ms, 80);
      expectNear(c1.latency_p95_ms, 300);
      expect(dashboard.channel_health).toEqual({ enabled: 2, auto_disabled: 0, manually_disabled: 0, untested: 2, slowest: [] });
      expect(dashboard.balance).toBe(
        Number((await app.ctx.db.selectFrom('users').select('quota').where('id', '=', 1).executeTakeFirstOrThrow()).quota),
      );
    });

    it('answers a user with their own usage only, whatever user or channel they name', async () => {
      const own = await data(ann, '/api/dashboard');
      expect(own.totals).toEqual({ requests: 3, errors: 1, prompt_tokens: 130, completion_tokens: 75, quota: 1700 });
      expect(own.by_model).toEqual([
        { model: 'gpt-4', requests: 2, errors: 1, prompt_tokens: 110, completion_tokens: 55, quota: 1500 },
        { model: 'gpt-3.5-turbo', requests: 1, errors: 0, prompt_tokens: 20, completion_tokens: 20, quota: 200 },
      ]);
      expect(own.top_tokens.map((token: { token_name: string }) => token.token_name)).toEqual(['a1', 'a2']);
      expect(own).not.toHaveProperty('top_users');
      expect(own).not.toHaveProperty('top_channels');
      expect(own.balance).toBe(
        Number((await app.ctx.db.selectFrom('users').select('quota').where('id', '=', annId).executeTakeFirstOrThrow()).quota),
      );
      const named = await data(ann, `/api/dashboard?user_id=${bobId}&channel_id=${channels.c1}`);
      expect(named.totals).toEqual(own.totals);
      expect((await data(ann, `/api/dashboard?token_id=${tokens.b1}`)).totals).toEqual(ZERO);
      expect((await data(ann, `/api/dashboard?token_id=${tokens.a2}`)).totals.quota).toBe(200);
    });

    it('filters by user, token, model and channel, by the hour', async () => {
      const totalOf = async (query: string) => (await data(root, `/api/dashboard/admin?${query}`)).totals;
      expect((await totalOf(`user_id=${bobId}`)).quota).toBe(5000);
      expect((await totalOf(`token_id=${tokens.a2}`)).quota).toBe(200);
      expect(await totalOf('model=gpt-3.5-turbo')).toEqual({
        requests: 1,
        errors: 0,
        prompt_tokens: 20,
        completion_tokens: 20,
        quota: 200,
      });
      expect(await totalOf(`channel_id=${channels.c1}`)).toEqual({
        requests: 2,
        errors: 0,
        prompt_tokens: 110,
        completion_tokens: 55,
        quota: 1500,
      });
      const hourly = await data(root, `/api/dashboard/admin?start=${base + 100}&end=${base + 2 * HOUR}`);
      expect(hourly.granularity).toBe('hour');
      expect(hourly.start).toBe(base);
      expect(hourly.series).toEqual([
        { bucket: base, requests: 2, errors: 2, prompt_tokens: 110, completion_tokens: 55, quota: 1500 },
        { bucket: base + HOUR, requests: 1, errors: 0, prompt_tokens: 20, completion_tokens: 20, quota: 200 },
      ]);
      expect(hourly.top_channels.map((channel: { channel_id: number }) => channel.channel_id)).toEqual([channels.c1, channels.c2]);
      const byDay = await data(root, `/api/dashboard/admin?start=${base}&end=${base + HOUR}&granularity=day`);
      expect(byDay.series).toHaveLength(1);
      expect(byDay.series[0].bucket).toBe(base - (base % DAY));
    });

    it('refuses what the roles and the query do not allow', async () => {
      expect((await get(ann, '/api/dashboard/admin')).json()).toEqual({
        success: false,
        message: 'insufficient permission',
        code: 'permission_denied',
      });
      expect((await get(undefined, '/api/dashboard')).statusCode).toBe(401);
      expect((await get(undefined, '/api/dashboard/admin')).statusCode).toBe(401);
      expect((await get(ann, `/api/dashboard?start=${base}&end=${base}`)).json()).toMatchObject({
        success: false,
        message: 'start must be before end',
      });
      expect((await get(ann, `/api/dashboard?start=0&end=${now}&granularity=hour`)).json().success).toBe(false);
      expect((await get(ann, '/api/dashboard?granularity=week')).statusCode).toBe(400);
      expect((await get(ann, '/api/dashboard?token_id=abc')).statusCode).toBe(400);
    });

    it('gives the log stats the same answers from the rollups as from the logs', async () => {
      const stat = async (cookie: string, url: string) => (await data(cookie, url)) as { quota: number; token: number };
      expect(await stat(root, '/api/log/stat')).toEqual({ quota: 6700, token: 1205 });
      expect(await stat(ann, '/api/log/self/stat')).toEqual({ quota: 1700, token: 205 });
      expect(await stat(root, '/api/log/stat?model_name=gpt-3.5-turbo')).toEqual({ quota: 200, token: 40 });
      // whole hours: the rollups; a range cut inside an hour, a username or a token name: the logs
      expect(await stat(root, `/api/log/stat?start_timestamp=${base}&end_timestamp=${base + HOUR - 1}`)).toEqual({
        quota: 1500,
        token: 165,
      });
      expect(await stat(root, `/api/log/stat?start_timestamp=${base + 15}`)).toEqual({ quota: 700, token: 55 });
      expect(await stat(root, '/api/log/stat?username=bob')).toEqual({ quota: 5000, token: 1000 });
      expect(await stat(ann, '/api/log/self/stat?token_name=a2')).toEqual({ quota: 200, token: 40 });
    });

    it('writes logs and rollups together: a write that fails leaves neither', async () => {
      const counts = async () => {
        const logs = await app.ctx.db
          .selectFrom('logs')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        const rollups = await app.ctx.db
          .selectFrom('usage_hourly')
          .select((eb) => eb.fn.sum<number>('requests').as('requests'))
          .executeTakeFirstOrThrow();
        return [Number(logs.count), Number(rollups.requests)];
      };
      const before = await counts();
      await expect(
        app.ctx.db.transaction().execute(async (transaction) => {
          await insertLogs(transaction, [
            { userId: annId, username: 'ann', type: 2, content: 'x', quota: 1, modelName: 'gpt-4', createdAt: base },
          ]);
          throw new Error('the process died here');
        }),
      ).rejects.toThrow('the process died here');
      expect(await counts()).toEqual(before);
    });

    it('back-fills the rollups of the logs an upgraded install already has', async () => {
      const fresh = await target.create();
      const { db } = await openDatabase(fresh.config);
      try {
        await new Migrator({ db, provider: migrationProvider }).migrateTo('0007-exact-identity-columns');
        const row = (user: number, token: number, model: string, channel: number, quota: number, elapsed: number, at: number, type = 2) =>
          sql`insert into logs (user_id, created_at, type, content, username, token_name, token_id, model_name, channel_id, quota, prompt_tokens, completion_tokens, elapsed_ms, is_stream, estimated)
              values (${user}, ${at}, ${type}, ${'x'}, ${'u'}, ${'t'}, ${token}, ${model}, ${channel}, ${quota}, ${1}, ${2}, ${elapsed}, ${0}, ${0})`.execute(
            db,
          );
        await row(1, 1, 'gpt-4', 1, 10, 50, base + 1);
        await row(1, 1, 'gpt-4', 1, 20, 700, base + 2);
        await row(1, 1, 'gpt-4', 1, 40, 90_000, base + HOUR);
        await row(2, 2, 'gpt-4', 1, 80, 50, base + 3);
        await row(1, 1, 'gpt-4', 1, 999, 50, base + 4, 1);
        // 0008 and 0009 (the back-fill) and every migration after them
        const later = Object.keys(await migrationProvider.getMigrations())
          .filter((name) => name > '0007-exact-identity-columns')
          .sort();
        expect(later.slice(0, 2)).toEqual(['0008-channel-test-error', '0009-usage-rollups']);
        expect(await migrateToLatest(db)).toEqual(later);
        const numbers = (row: Record<string, unknown>) =>
          Object.fromEntries(Object.entries(row).map(([key, value]) => [key, key === 'model' ? value : Number(value)]));
        const rollups = await db.selectFrom('usage_hourly').selectAll().orderBy('period').orderBy('user_id').execute();
        expect(rollups.map(numbers)).toEqual([
          {
            period: base,
            user_id: 1,
            token_id: 1,
            model: 'gpt-4',
            channel_id: 1,
            requests: 2,
            errors: 0,
            prompt_tokens: 2,
            completion_tokens: 4,
            quota: 30,
            latency_ms_sum: 750,
            latency_le_100: 1,
            latency_le_250: 0,
            latency_le_500: 0,
            latency_le_1000: 1,
            latency_le_2500: 0,
            latency_le_5000: 0,
            latency_le_10000: 0,
            latency_le_30000: 0,
            latency_le_60000: 0,
            latency_over: 0,
          },
          {
            period: base,
            user_id: 2,
            token_id: 2,
            model: 'gpt-4',
            channel_id: 1,
            requests: 1,
            errors: 0,
            prompt_tokens: 1,
            completion_tokens: 2,
            quota: 80,
            latency_ms_sum: 50,
            latency_le_100: 1,
            latency_le_250: 0,
            latency_le_500: 0,
            latency_le_1000: 0,
            latency_le_2500: 0,
            latency_le_5000: 0,
            latency_le_10000: 0,
            latency_le_30000: 0,
            latency_le_60000: 0,
            latency_over: 0,
          },
          {
            period: base + HOUR,
            user_id: 1,
            token_id: 1,
            model: 'gpt-4',
            channel_id: 1,
            requests: 1,
            errors: 0,
            prompt_tokens: 1,
            completion_tokens: 2,
            quota: 40,
            latency_ms_sum: 90_000,
            latency_le_100: 0,
            latency_le_250: 0,
            latency_le_500: 0,
            latency_le_1000: 0,
            latency_le_2500: 0,
            latency_le_5000: 0,
            latency_le_10000: 0,
            latency_le_30000: 0,
            latency_le_60000: 0,
            latency_over: 1,
          },
        ]);
        const sums = async (
          table: 'usage_daily_channels' | 'usage_daily_tokens' | 'usage_daily_users' | 'usage_hourly_channels' | 'usage_daily',
        ) =>
          numbers(
            await db
              .selectFrom(table)
              .select((eb) => [
                eb.fn.sum<number>('requests').as('requests'),
                eb.fn.sum<number>('quota').as('quota'),
                eb.fn.sum<number>('latency_over').as('latency_over'),
              ])
              .executeTakeFirstOrThrow(),
          );
        for (const table of [
          'usage_daily_channels',
          'usage_daily_tokens',
          'usage_daily_users',
          'usage_hourly_channels',
          'usage_daily',
        ] as const)
          expect(await sums(table)).toEqual({ requests: 4, quota: 150, latency_over: 1 });
        const perUser = await db
          .selectFrom('usage_daily_tokens')
          .select(['user_id', (eb) => eb.fn.sum<number>('quota').as('quota')])
          .groupBy('user_id')
          .orderBy('user_id')
          .execute();
        expect(perUser.map(numbers)).toEqual([
          { user_id: 1, quota: 70 },
          { user_id: 2, quota: 80 },
        ]);
        const users = await db.selectFrom('usage_daily_users').select(['user_id', 'quota']).orderBy('user_id').execute();
        expect(users.map(numbers)).toEqual([
          { user_id: 1, quota: 70 },
          { user_id: 2, quota: 80 },
        ]);
      } finally {
        await db.destroy();
        await fresh.drop();
      }
    });

    it('reads latency percentiles from the measured durations, merged across batches, nodes and hours', async () => {
      const created = (
        await asBrowser(app, root, {
          method: 'POST',
          url: '/api/channel/',
          payload: { name: 'c3', type: 1, key: 'sk-c3', models: 'gpt-4', group: 'default' },
        })
      ).json();
      const c3 = Number(created.data.ids[0]);
      const at = base - 10 * DAY;
      const log = (elapsedMs: number, createdAt = at): NewLog => ({
        type: 2,
        content: 'x',
        userId: annId,
        username: 'ann',
        tokenId: tokens.a1,
        tokenName: 'a1',
        modelName: 'gpt-4',
        channelId: c3,
        quota: 1,
        elapsedMs,
        createdAt,
      });
      const elapsed = Array.from({ length: 100 }, (_, index) => (index + 1) * 10);
      // the ledger's batch (SQLite's own writer there), then two batches at once on the same rows, as two nodes would
      await app.ctx.ledger.insertLogs(elapsed.slice(0, 50).map((ms) => log(ms)));
      await Promise.all([
        insertLogs(
          app.ctx.db,
          elapsed.slice(50, 75).map((ms) => log(ms)),
        ),
        insertLogs(
          app.ctx.db,
          elapsed.slice(75).map((ms) => log(ms, at + HOUR)),
        ),
      ]);
      const channelOf = async (query: string) => {
        const dashboard = await data(root, `/api/dashboard/admin?${query}`);
        return dashboard.top_channels.find((channel: { channel_id: number }) => channel.channel_id === c3);
      };
      const hourly = await channelOf(`start=${at - HOUR}&end=${at + 2 * HOUR}`);
      expect(hourly).toMatchObject({ requests: 100, errors: 0 });
      expectNear(hourly.latency_p50_ms, 500);
      expectNear(hourly.latency_p95_ms, 950);
      const daily = await channelOf(`start=${at - DAY}&end=${at + DAY}&granularity=day&channel_id=${c3}`);
      expectNear(daily.latency_p50_ms, 500);
      expectNear(daily.latency_p95_ms, 950);
      // the first hour alone: 10..750 ms
      const first = await channelOf(`start=${at - HOUR}&end=${at + HOUR}`);
      expectNear(first.latency_p50_ms, 380);
      expectNear(first.latency_p95_ms, 720);
      // only the channels' rollups keep durations: narrowed to a user, none is claimed
      expect(await channelOf(`start=${at - HOUR}&end=${at + 2 * HOUR}&user_id=${annId}`)).toMatchObject({
        requests: 100,
        latency_p50_ms: null,
        latency_p95_ms: null,
      });
      const stored = await app.ctx.db
        .selectFrom('usage_daily_channels')
        .select('latency_sketch')
        .where('channel_id', '=', c3)
        .executeTakeFirstOrThrow();
      expect(Object.values(JSON.parse(stored.latency_sketch!) as Record<string, number>).reduce((sum, count) => sum + count, 0)).toBe(100);
    });

    it('loses no duration when several nodes merge into the same rows at once', async () => {
      const created = (
        await asBrowser(app, root, {
          method: 'POST',
          url: '/api/channel/',
          payload: { name: 'c4', type: 1, key: 'sk-c4', models: 'gpt-4', group: 'default' },
        })
      ).json();
      const c4 = Number(created.data.ids[0]);
      const at = base - 12 * DAY;
      const batch = (size: number, elapsedMs: number): NewLog[] =>
        Array.from({ length: size }, () => ({
          type: 2,
          content: 'x',
          userId: bobId,
          username: 'bob',
          tokenId: tokens.b1,
          tokenName: 'b1',
          modelName: 'gpt-4',
          channelId: c4,
          quota: 1,
          elapsedMs,
          createdAt: at,
        }));
      await insertLogs(app.ctx.db, batch(1, 5));
      // six batches on one pool: on PostgreSQL and MySQL, six transactions contending for the same rows
      await Promise.all([10, 20, 40, 80, 160, 320].map((elapsedMs) => insertLogs(app.ctx.db, batch(10, elapsedMs))));
      for (const table of ['usage_hourly_channels', 'usage_daily_channels'] as const) {
        const row = await app.ctx.db
          .selectFrom(table)
          .select(['requests', 'latency_sketch'])
          .where('channel_id', '=', c4)
          .executeTakeFirstOrThrow();
        expect(Number(row.requests)).toBe(61);
        expect(Object.values(JSON.parse(row.latency_sketch!) as Record<string, number>).reduce((sum, count) => sum + count, 0)).toBe(61);
      }
      const channel = (await data(root, `/api/dashboard/admin?start=${at - HOUR}&end=${at + HOUR}&channel_id=${c4}`)).top_channels[0];
      expectNear(channel.latency_p50_ms, 40);
      expectNear(channel.latency_p95_ms, 320);
    });

    it('lists as slowest only the enabled channels whose last test passed', async () => {
      await app.ctx.db
        .updateTable('channels')
        .set({ test_time: now, response_time: 900, test_error: '' })
        .where('id', '=', channels.c1)
        .execute();
      await app.ctx.db
        .updateTable('channels')
        .set({ test_time: now, response_time: 5000, test_error: 'upstream answered 401' })
        .where('id', '=', channels.c2)
        .execute();
      const { channel_health: health } = await data(root, '/api/dashboard/admin');
      expect(health.slowest).toEqual([{ channel_id: channels.c1, channel_name: 'c1', response_time_ms: 900, test_time: now }]);
    });

    it('counts a relayed call and a failed one, on the channel that served or failed it', async () => {
      const relayDatabase = await target.create();
      const harness = await startRelayHarness(relayDatabase.config);
      try {
        const good = await harness.addChannel({ name: 'good', key: 'sk-good', models: 'gpt-4' });
        const dead = await harness.addChannel({ name: 'dead', key: 'sk-dead', base_url: 'http://127.0.0.1:1', models: 'gpt-3.5-turbo' });
        const answered = await harness.post('/v1/chat/completions', { model: 'gpt-4', messages: [{ role: 'user', content: 'hello' }] });
        expect(answered.status).toBe(200);
        await answered.text();
        const failed = await harness.post('/v1/chat/completions', {
          model: 'gpt-3.5-turbo',
          messages: [{ role: 'user', content: 'hello' }],
        });
        expect(failed.status).toBeGreaterThanOrEqual(500);
        await failed.text();
        await harness.settled();
        const log = await harness.app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).executeTakeFirstOrThrow();
        const dashboard = (await harness.admin('GET', `/api/dashboard/admin?start=${now - HOUR}&end=${now + HOUR}`)).data;
        expect(dashboard.totals).toEqual({
          requests: 1,
          errors: 1,
          prompt_tokens: log.prompt_tokens,
          completion_tokens: log.completion_tokens,
          quota: Number(log.quota),
        });
        const byChannel = Object.fromEntries(
          dashboard.top_channels.map((channel: { channel_id: number }) => [channel.channel_id, channel]),
        );
        expect(byChannel[good]).toMatchObject({ channel_name: 'good', requests: 1, errors: 0, error_rate: 0, quota: Number(log.quota) });
        // the failed call counts as a request of the channel, and a channel that never answered shows no latency
        expect(byChannel[dead]).toMatchObject({
          channel_name: 'dead',
          requests: 1,
          errors: 1,
          error_rate: 1,
          quota: 0,
          latency_p50_ms: null,
          latency_p95_ms: null,
        });
        expect(byChannel[good].latency_p50_ms).toBeGreaterThan(0);
      } finally {
        await harness.close();
        await relayDatabase.drop();
      }
    });
  });
}
