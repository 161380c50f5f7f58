// Retention you can see, on SQLite, PostgreSQL and MariaDB (the sizes are each
// dialect's own SQL): the panel's counts per kind (logs, error logs, audit rows) and their
// sizes on disk, "Prune now" deleting exactly the rows past each kind's
// retention in the background, the run recorded for every node to read, a
// second press answered with the prune already running, and a second node
// seeing the first node's prune through the lease it runs under.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { PruneJob, RetentionReport } from '../../common/retention';
import { retentionKind } from '../../server/billing/retentionKinds';
import { currentPruneJob, startPrune, type RetentionDeps } from '../../server/billing/retentionJob';
import { retentionDepsOf } from '../../server/plugins/retention';
import { insertLog } from '../../server/repositories/logs';
import { countTableRows, sqlitePageShareBytes } from '../../server/repositories/retention';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('retention');
const DAY = 86_400;

const until = async (condition: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((wake) => setTimeout(wake, 25));
  }
};

for (const target of targets) {
  describe.runIf(target.available)(`retention on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    const now = Math.floor(Date.now() / 1000);

    const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
      asBrowser(app, root, { method, url, ...(payload === undefined ? {} : { payload: payload as never }) }).then((response) =>
        response.json(),
      );
    const report = async () => (await call('GET', '/api/retention/?fresh=true')).data as RetentionReport;
    const kindOf = (found: RetentionReport, name: string) => found.kinds.find((kind) => kind.name === name)!;
    const contents = async () =>
      (await app.ctx.db.selectFrom('logs').select('content').where('content', 'like', 'retention %').orderBy('content').execute()).map(
        (row) => row.content,
      );
    const log = (content: string, type: number, ageDays: number) =>
      insertLog(app.ctx.db, { userId: 1, username: 'root', type, content, createdAt: now - ageDays * DAY - 60 });

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
      await log('retention consume 40d', LogType.consume, 40);
      await log('retention topup 35d', LogType.topup, 35);
      await log('retention consume 20d', LogType.consume, 20);
      await log('retention error 40d', LogType.error, 40);
      await log('retention error 10d', LogType.error, 10);
      await log('retention error 1d', LogType.error, 1);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    it('counts the logs, the error logs and the audit rows apart, sizes them above zero, and no prune has run', async () => {
      const found = await report();
      expect(found.kinds.map((kind) => [kind.name, kind.option_key])).toEqual([
        ['logs', 'LogRetentionDays'],
        ['error_logs', 'ErrorLogRetentionDays'],
        ['audit', 'AuditRetentionDays'],
      ]);
      const errors = await app.ctx.db.selectFrom('logs').select('id').where('type', '=', LogType.error).execute();
      const all = await countTableRows(app.ctx.db, 'logs');
      expect(kindOf(found, 'error_logs').rows).toBe(errors.length);
      expect(kindOf(found, 'logs').rows).toBe(all - errors.length);
      // the sign-in above is on the audit record
      expect(kindOf(found, 'audit').rows).toBe(await countTableRows(app.ctx.db, 'audit_log'));
      expect(kindOf(found, 'audit').rows).toBeGreaterThan(0);
      for (const kind of found.kinds) {
        expect(kind.size_bytes).toBeGreaterThan(0);
        // the two log kinds share one table: each has its share of the table's size; the audit rows have theirs
        expect(kind.size_estimated).toBe(kind.name !== 'audit');
        expect(kind.days).toBe(0);
        expect(kind.last_run).toBeNull();
      }
      expect(found.job).toBeNull();
    });

    it('refuses to prune while every kind is kept forever', async () => {
      const answer = await call('POST', '/api/retention/prune');
      expect(answer.success).toBe(false);
      expect(answer.message).toMatch(/kept forever/);
    });

    it('prunes exactly the rows past each retention in the background and records each run', async () => {
      expect((await call('PUT', '/api/option/', { key: 'LogRetentionDays', value: '30' })).success).toBe(true);
      expect((await call('PUT', '/api/option/', { key: 'ErrorLogRetentionDays', value: '5' })).success).toBe(true);
      const before = await report();
      expect(kindOf(before, 'logs').days).toBe(30);
      expect(kindOf(before, 'error_logs').days).toBe(5);

      const started = await call('POST', '/api/retention/prune');
      expect(started.success).toBe(true);
      const job = started.data.job as PruneJob;
      expect(started.data.started).toBe(true);
      expect(job.manual).toBe(true);
      // counted before the first answer: two logs past 30 days, two error logs past 5
      expect(job.kinds).toEqual([
        { name: 'logs', total: 2, removed: expect.any(Number) },
        { name: 'error_logs', total: 2, removed: expect.any(Number) },
      ]);
      expect(job.total).toBe(4);

      let after = before;
      await until(async () => {
        after = await report();
        return after.job?.id === job.id && after.job.state !== 'running';
      });
      expect(after.job).toMatchObject({ id: job.id, state: 'done', total: 4, removed: 4 });
      expect(await contents()).toEqual(['retention consume 20d', 'retention error 1d']);
      const logs = kindOf(after, 'logs');
      const errors = kindOf(after, 'error_logs');
      expect(logs.last_run).toMatchObject({ removed: 2, manual: true, started_at: job.started_at, cutoff: job.started_at - 30 * DAY });
      expect(errors.last_run).toMatchObject({ removed: 2, manual: true, cutoff: job.started_at - 5 * DAY });
      expect(errors.last_run!.finished_at).toBeGreaterThanOrEqual(job.started_at);
      expect(errors.rows).toBe(kindOf(before, 'error_logs').rows - 2);
      expect(logs.rows).toBe(kindOf(before, 'logs').rows - 2);
      // every node reads the runs from the database
      const runs = await app.ctx.db.selectFrom('prune_runs').select(['kind', 'removed', 'manual']).orderBy('kind').execute();
      expect(runs.map((run) => [run.kind, Number(run.removed), Number(run.manual)])).toEqual([
        ['error_logs', 2, 1],
        ['logs', 2, 1],
      ]);

      // nothing is past its retention any more: a second prune removes nothing and says so
      const again = (await call('POST', '/api/retention/prune')).data.job as PruneJob;
      expect(again.total).toBe(0);
      await until(async () => {
        const latest = (await report()).job;
        return latest?.id === again.id && latest.state === 'done';
      });
      expect(kindOf(await report(), 'logs').last_run).toMatchObject({ removed: 0, manual: true });
      expect(await contents()).toEqual(['retention consume 20d', 'retention error 1d']);
    });

    it('keeps error logs as long as the other logs while ErrorLogRetentionDays is 0', async () => {
      expect((await call('PUT', '/api/option/', { key: 'ErrorLogRetentionDays', value: '0' })).success).toBe(true);
      expect(kindOf(await report(), 'error_logs').days).toBe(30);
    });

    it('answers a second press with the prune already running, here and on another node', async () => {
      let open = () => {};
      const gate = new Promise<void>((resolve) => (open = resolve));
      // a kind whose prune waits for the test, so the job is caught running
      const slow = retentionKind({
        name: 'slow',
        optionKey: 'LogRetentionDays',
        table: 'logs',
        prune: async (_db, _cutoff, progress) => {
          progress.removed(1);
          await gate;
          return 1;
        },
      });
      const deps: RetentionDeps = { ...retentionDepsOf(app), kinds: [slow] };
      const first = await startPrune(deps, true);
      expect(first?.started).toBe(true);
      const second = await startPrune(deps, true);
      expect(second).toEqual({ started: false, job: expect.objectContaining({ id: first!.job.id, state: 'running' }) });
      await until(async () => (await currentPruneJob(deps.jobs))?.removed === 1);
      const pressed = await call('POST', '/api/retention/prune');
      expect(pressed.data).toMatchObject({ started: false, job: { id: first!.job.id, state: 'running' } });

      // another node on the same database reads the job from the lease it runs under, and cannot start one
      const other = target.name === 'sqlite' ? undefined : await buildTestApp({}, database.config);
      try {
        if (other) {
          const otherRoot = await login(other, 'root', ROOT_PASSWORD);
          const seen = (await asBrowser(other, otherRoot, { method: 'GET', url: '/api/retention/' })).json().data as RetentionReport;
          expect(seen.job).toMatchObject({ id: first!.job.id, state: 'running' });
          const refused = (await asBrowser(other, otherRoot, { method: 'POST', url: '/api/retention/prune' })).json();
          expect(refused.data).toMatchObject({ started: false, job: { id: first!.job.id } });
        }
        open();
        await until(async () => (await currentPruneJob(deps.jobs))?.state === 'done');
        if (other) {
          const otherRoot = await login(other, 'root', ROOT_PASSWORD);
          const seen = (await asBrowser(other, otherRoot, { method: 'GET', url: '/api/retention/' })).json().data as RetentionReport;
          expect(seen.job).toMatchObject({ id: first!.job.id, state: 'done', removed: 1 });
        }
      } finally {
        open();
        await other?.close();
      }
      const runs = await app.ctx.db.selectFrom('prune_runs').select(['kind', 'removed']).where('kind', '=', 'slow').execute();
      expect(runs.map((run) => Number(run.removed))).toEqual([1]);
    });

    // only SQLite has dbstat to fall back from
    if (target.name === 'sqlite') {
      it('guesses a table size from the page counts where dbstat is missing', async () => {
        const guessed = await sqlitePageShareBytes(app.ctx.db, 'logs');
        const { rows } = await sql<{
          bytes: number;
        }>`select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()`.execute(app.ctx.db);
        expect(guessed).toBeGreaterThan(0);
        expect(guessed).toBeLessThanOrEqual(Number(rows[0].bytes));
      });
    }
  });
}
