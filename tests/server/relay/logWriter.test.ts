// Consume logs are written in batches after the answer, and none is lost:
// batches become one write each (a multi-row INSERT; prepared INSERTs in one transaction on SQLite), at most one per 100 ms
// under load, and app.close() (what SIGTERM runs) waits for pending
// settlements and flushes the queue.
import Sqlite from 'better-sqlite3';
import type { FastifyBaseLogger } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { LogWriter } from '../../../server/billing/logWriter';
import { buildTestApp } from '../../support/app';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { startRelayHarness } from './harness';

const targets = await databaseTargets('logwriter');

for (const target of targets) {
  describe.runIf(target.available)(`the log writer on ${target.name}`, () => {
    let database: TestDatabase;
    let app: Awaited<ReturnType<typeof buildTestApp>>;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    it('writes every queued row, in order, in batches', async () => {
      // the app's own ledger: prepared statements on SQLite, a multi-row INSERT elsewhere
      const writer = new LogWriter((rows) => app.ctx.ledger.insertLogs(rows), app.log);
      for (let index = 0; index < 450; index += 1) {
        writer.write({
          userId: 1,
          username: 'root',
          type: LogType.consume,
          content: `row ${index}`,
          quota: index,
          modelName: 'gpt-4',
          promptTokens: 1,
          completionTokens: 2,
          isStream: index % 2 === 0,
        });
      }
      await writer.close();
      const rows = await app.ctx.db
        .selectFrom('logs')
        .select(['content', 'quota', 'is_stream', 'created_at'])
        .where('type', '=', LogType.consume)
        .orderBy('id')
        .execute();
      expect(rows).toHaveLength(450);
      expect(rows.map((row) => Number(row.quota))).toEqual(Array.from({ length: 450 }, (_, index) => index));
      expect(Number(rows[0].is_stream)).toBe(1);
      expect(Number(rows[0].created_at)).toBeGreaterThan(1_700_000_000);
    });
  });
}

describe("the log writer's pace", () => {
  it('batches what gathers within 100 ms of the first queued row, and writes full batches at once', async () => {
    const batches: number[] = [];
    const logger = { error: () => undefined } as unknown as FastifyBaseLogger;
    const writer = new LogWriter(async (rows) => void batches.push(rows.length), logger);
    const row = { userId: 1, username: 'root', type: LogType.consume, content: 'row' };
    const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
    writer.write(row);
    await sleep(20);
    expect(batches).toEqual([]);
    for (let index = 0; index < 5; index += 1) writer.write(row);
    await sleep(250);
    expect(batches).toEqual([6]);
    writer.write(row);
    await sleep(250);
    expect(batches).toEqual([6, 1]);
    for (let index = 0; index < 450; index += 1) writer.write(row);
    await sleep(5);
    // 200 rows fill a batch and go without waiting for the window
    expect(batches.slice(0, 4)).toEqual([6, 1, 200, 200]);
    await writer.close();
    expect(batches).toEqual([6, 1, 200, 200, 50]);
  });
});

describe('shutting the gateway down', () => {
  it('settles and logs every answered request before the database closes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'switchboard-logs-')), 'gateway.db');
    const harness = await startRelayHarness({ dialect: 'sqlite', path: file });
    await harness.addChannel({ name: 'emu', key: 'sk-good' });
    const requests = Array.from({ length: 60 }, (_, index) =>
      harness
        .post('/v1/chat/completions', {
          model: 'gpt-4',
          // a small output limit keeps the 60 holds within the key's 10,000,000 however many are in flight at once
          max_tokens: 64,
          stream: index % 2 === 0,
          messages: [{ role: 'user', content: `request ${index}` }],
        })
        .then(async (response) => ({ status: response.status, text: await response.text() })),
    );
    const answers = await Promise.all(requests);
    // every request answered whole: a refusal or a failure would be an error log, not a consume log
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    // no settled(): closing must do the waiting
    await harness.close();

    const sqlite = new Sqlite(file, { readonly: true });
    try {
      const logs = sqlite.prepare('select count(*) as count, sum(quota) as quota from logs where type = ?').get(LogType.consume) as {
        count: number;
        quota: number;
      };
      const user = sqlite.prepare('select used_quota, request_count from users where username = ?').get('root') as {
        used_quota: number;
        request_count: number;
      };
      const errors = sqlite.prepare('select content from logs where type = ?').all(LogType.error);
      expect({ consumeLogs: logs.count, errors }).toEqual({ consumeLogs: 60, errors: [] });
      expect(user.request_count).toBe(60);
      expect(logs.quota).toBe(user.used_quota);
    } finally {
      sqlite.close();
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });
});
