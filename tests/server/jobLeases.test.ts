// The background jobs' leases (one node runs each job) on every database: a claim
// is atomic (of many workers claiming at once, on connections of their own,
// exactly one wins, whether the row is new or has run out), only the holder
// renews, a periodic job never runs on two workers at once however their
// ticks fall, and a holder that dies mid-run loses the job once its lease has
// run out, to a worker that takes it over.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type Database } from '../../server/db/database';
import { JobRunner, nextTickDue } from '../../server/services/jobRunner';
import { localJobLeases, sqlJobLeases, type JobLeaseStore } from '../../server/repositories/jobLeases';
import { channelJobsSettled } from '../../server/channels/channelJobs';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

const targets = await databaseTargets('job leases');
const quiet = { warn: () => undefined };
const until = async (condition: () => Promise<boolean> | boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((wake) => setTimeout(wake, 20));
  }
};

for (const target of targets) {
  describe.runIf(target.available)(`job leases on ${target.name}`, () => {
    let database: TestDatabase;
    /** One connection pool per "node": SQLite in memory has one connection, shared. */
    const pools: Kysely<Database>[] = [];
    const stores: JobLeaseStore[] = [];

    beforeAll(async () => {
      database = await target.create();
      const first = (await openDatabase(database.config)).db;
      await migrateToLatest(first);
      pools.push(first);
      for (let node = 1; node < 4; node += 1) pools.push(target.name === 'sqlite' ? first : (await openDatabase(database.config)).db);
      for (const pool of pools) stores.push(sqlJobLeases(pool, database.config.dialect));
    });
    afterAll(async () => {
      for (const pool of new Set(pools)) await pool.destroy();
      await database?.drop();
    });

    it('lets exactly one of many simultaneous claims win, for a new row and for one that ran out', async () => {
      for (let round = 0; round < 5; round += 1) {
        const name = `race-${round}`;
        const now = Date.now();
        // twelve claims, three per pool, all at once: nobody holds the row yet (the INSERT race)
        const fresh = await Promise.all(
          Array.from({ length: 12 }, (_, index) => stores[index % 4].claim(name, `node-${index}`, now, now + 60_000)),
        );
        expect(fresh.filter(Boolean)).toHaveLength(1);
        // the lease runs out (as if its holder died): the same race on the conditional UPDATE
        await pools[0]
          .updateTable('job_leases')
          .set({ expires_at: now - 1 })
          .where('name', '=', name)
          .execute();
        const later = Date.now();
        const retaken = await Promise.all(
          Array.from({ length: 12 }, (_, index) => stores[index % 4].claim(name, `node-${index}`, later, later + 60_000)),
        );
        expect(retaken.filter(Boolean)).toHaveLength(1);
        const winner = `node-${retaken.indexOf(true)}`;
        expect((await stores[0].read(name))?.holder).toBe(winner);
      }
    });

    it('keeps a held lease from others, renews it for its holder only, and frees it when released', async () => {
      const now = Date.now();
      expect(await stores[0].claim('held', 'a', now, now + 60_000, 'first')).toBe(true);
      expect(await stores[1].claim('held', 'b', now + 1, now + 60_000)).toBe(false);
      // a holder may not claim again what it holds: a periodic job waits for its next tick
      expect(await stores[0].claim('held', 'a', now + 1, now + 60_000)).toBe(false);
      expect(await stores[1].extend('held', 'b', now + 90_000)).toBe(false);
      expect(await stores[0].extend('held', 'a', now + 90_000, 'second')).toBe(true);
      // MySQL reports a row left as it was as matched, not changed: still held
      expect(await stores[0].extend('held', 'a', now + 90_000)).toBe(true);
      expect(await stores[2].read('held')).toEqual({ holder: 'a', expiresAt: now + 90_000, detail: 'second' });
      expect(await stores[0].extend('held', 'a', now)).toBe(true);
      expect(await stores[1].claim('held', 'b', now + 1, now + 60_000)).toBe(true);
      expect(await stores[3].read('held')).toMatchObject({ holder: 'b', detail: null });
    });

    it('runs a periodic job on one worker at a time while four workers tick it, and about once per period', async () => {
      const runners = stores.map((store, index) => new JobRunner(store, `worker-${index}`, { leaseMs: 2_000, renewMs: 100 }, quiet));
      let running = 0;
      let mostAtOnce = 0;
      const runs: string[] = [];
      const work = (holder: string) => async () => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        runs.push(holder);
        await new Promise((wake) => setTimeout(wake, 30));
        running -= 1;
      };
      // every worker ticks every 200 ms, out of step with the others, for 24 ticks each
      const periodMs = 200;
      await Promise.all(
        runners.map(async (runner, index) => {
          await new Promise((wake) => setTimeout(wake, index * 50));
          for (let tick = 0; tick < 24; tick += 1) {
            const next = Date.now() + periodMs;
            await runner.runPeriodic('periodic', periodMs, work(runner.holder));
            await new Promise((wake) => setTimeout(wake, Math.max(0, next - Date.now())));
          }
        }),
      );
      expect(mostAtOnce).toBe(1);
      // 96 ticks in all over about 24 periods: the job ran in about one tick of four, not in every one
      expect(runs.length).toBeGreaterThan(5);
      expect(runs.length).toBeLessThan(60);
    });

    it('gives the job of a holder that died mid-run to another worker once its lease has run out', async () => {
      const leaseMs = 1_500;
      const dead = new JobRunner(stores[0], 'dies', { leaseMs, renewMs: 100 }, quiet);
      const survivor = new JobRunner(stores[1], 'survives', { leaseMs, renewMs: 100 }, quiet);
      const held = await dead.claim('taken-over');
      expect(held).toBeDefined();
      // the dying worker renews for a while, then stops: its renewals end, leaving the lease as its last one set it
      await new Promise((wake) => setTimeout(wake, 300));
      const died = Date.now();
      await held!.release({ until: died + leaseMs });
      expect(await survivor.runPeriodic('taken-over', 10_000, async () => 'ran')).toBeUndefined();
      let ran: string | undefined;
      await until(async () => (ran = await survivor.runPeriodic('taken-over', 10_000, async () => 'ran')) === 'ran');
      expect(ran).toBe('ran');
      expect(Date.now()).toBeGreaterThanOrEqual(died + leaseMs);
      // the survivor now holds it until just before its next tick
      const lease = await stores[2].read('taken-over');
      expect(lease?.holder).toBe('survives');
      expect(lease!.expiresAt).toBeGreaterThan(Date.now());
    });

    it('stops a run whose lease another worker took, when the holder learns it at its next renewal', async () => {
      const slow = new JobRunner(stores[0], 'slow', { leaseMs: 60_000, renewMs: 50 }, quiet);
      const held = await slow.claim('stolen');
      // as if the lease had run out while the holder was frozen, and another worker claimed it
      await pools[1].updateTable('job_leases').set({ holder: 'thief' }).where('name', '=', 'stolen').execute();
      await until(() => held!.signal.aborted);
      await held!.release();
      expect((await stores[2].read('stolen'))?.holder).toBe('thief');
    });
  });
}

describe('job leases in memory (a process alone on SQLite)', () => {
  it('follows the same rules as the table', async () => {
    const store = localJobLeases();
    const now = Date.now();
    expect(await store.claim('job', 'a', now, now + 1_000)).toBe(true);
    expect(await store.claim('job', 'b', now + 500, now + 1_500)).toBe(false);
    expect(await store.extend('job', 'b', now + 2_000)).toBe(false);
    expect(await store.extend('job', 'a', now + 2_000, 'detail')).toBe(true);
    expect(await store.claim('job', 'b', now + 2_001, now + 3_000)).toBe(true);
    expect(await store.read('job')).toEqual({ holder: 'b', expiresAt: now + 3_000, detail: null });
    expect(nextTickDue(now, 60_000)).toBe(now + 59_000);
    expect(nextTickDue(now, 500)).toBe(now + 450);
  });
});

// Two gateways on one database (two workers, or two nodes): a test-all started
// on one is refused on the other with the first one's run, whose progress the
// other answers for, and once it is over the other may start one.
for (const target of targets.filter((candidate) => candidate.name !== 'sqlite')) {
  describe.runIf(target.available)(`test all across two gateways on ${target.name}`, () => {
    let database: TestDatabase;
    let emulator: OpenAIEmulator;
    const apps: FastifyInstance[] = [];
    const cookies: string[] = [];

    beforeAll(async () => {
      database = await target.create();
      emulator = await startOpenAIEmulator();
      for (let node = 0; node < 2; node += 1) {
        apps.push(await buildTestApp({}, database.config));
        cookies.push(await login(apps[node], 'root', ROOT_PASSWORD));
      }
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
      await emulator?.close();
      await database?.drop();
    });

    const get = (node: number, url: string) =>
      asBrowser(apps[node], cookies[node], { method: 'GET', url }).then((response) => response.json());

    it('runs one test-all at a time across both, and either answers for its progress', async () => {
      // two slow channels keep the run going for a few seconds
      for (const name of ['slow-1', 'slow-2']) {
        const created = await asBrowser(apps[0], cookies[0], {
          method: 'POST',
          url: '/api/channel/',
          payload: { type: 8, name, key: 'sk-slow', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' },
        });
        expect(created.json().success).toBe(true);
      }
      const started = await get(0, '/api/channel/test');
      expect(started).toMatchObject({ success: true, data: { kind: 'test', state: 'running' } });
      const refused = await get(1, '/api/channel/test');
      expect(refused).toMatchObject({
        success: false,
        message: 'test already running',
        data: { id: started.data.id, kind: 'test', state: 'running' },
      });
      await until(async () => (await get(1, `/api/channel/jobs/${started.data.id}`)).data?.state === 'done');
      expect((await get(1, `/api/channel/jobs/${started.data.id}`)).data).toMatchObject({
        id: started.data.id,
        done: 2,
        total: 2,
        state: 'done',
      });
      await channelJobsSettled(apps[0].ctx);
      expect(await get(1, '/api/channel/test')).toMatchObject({ success: true, data: { kind: 'test', state: 'running' } });
      await channelJobsSettled(apps[1].ctx);
    });
  });
}
