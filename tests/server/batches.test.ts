// OpenAI's Batch API run by the gateway itself, on all three databases (the
// batch's money moves line by line in dialect SQL, under leases): a batch
// holds the sum of its lines' bounds when created, each line is billed once
// at the batch discount with one consume log naming the batch and its
// custom_id, the output file matches the input line by line, a cancelled
// batch gives back what its unrun lines held, and two nodes sharing one
// database run each line once. The ledger's invariant (start - logged
// charges - held = balance, for the user and the limited key; what is held
// is what batches hold) is checked after every step. A bad input file is
// refused, naming its line, with nothing held.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { DatabaseConfig } from '../../server/config';
import type { Database } from '../../server/db/database';
import { settleBatchLine } from '../../server/billing/batchLedger';
import { batchRunnerOf } from '../../server/routes/v1/batches';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { ledgerState } from '../support/ledgerState';
import { batchPass, runBatchUntilClosed } from '../support/batchRuns';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

const TOKEN_START = 50_000_000;
const MANUAL = { intervalMs: 0, leaseMs: 60_000, finishLeaseMs: 60_000 };
/** Without quota leases, what users hold is what batches hold (a lease holds a node's share too). */
const CONFIG = { batches: MANUAL, quotaLeases: false };
const bodyOf = (response: Response): Promise<any> => response.json();
const chatLine = (customId: string, words = 'say hello to the batch') => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: words }], max_tokens: 50 },
});
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

const targets = await databaseTargets('batches');

for (const target of targets) {
  describe.runIf(target.available)(`batches on ${target.name}`, () => {
    let database: { config: DatabaseConfig; drop(): Promise<void> };
    let app: FastifyInstance;
    let second: FastifyInstance;
    let db: Kysely<Database>;
    let emulator: OpenAIEmulator;
    let baseUrl = '';
    let root = '';
    let apiKey = '';
    let tokenId = 0;
    let userStart = 0;
    /** What one chat line costs at the full price (an interactive call of the same body). */
    let fullPrice = 0;

    const admin = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
      asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
    const setOption = async (key: string, value: string) => expect((await admin('PUT', '/api/option/', { key, value })).success).toBe(true);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const upload = async (text: string, purpose = 'batch'): Promise<string> => {
      const form = new FormData();
      form.append('purpose', purpose);
      form.append('file', new Blob([text]), 'input.jsonl');
      const response = await fetch(`${baseUrl}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
      expect(response.status).toBe(200);
      return ((await response.json()) as { id: string }).id;
    };
    const create = async (lines: unknown[], extra: Record<string, unknown> = {}) =>
      call('POST', '/v1/batches', {
        input_file_id: await upload(jsonl(lines)),
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        ...extra,
      });
    const batchLogs = (batchId: string) =>
      db.selectFrom('logs').selectAll().where('type', '=', LogType.consume).where('content', 'like', `batch ${batchId},%`).execute();
    const taskHeld = async () => {
      const rows = await db.selectFrom('tasks').select('held_quota').execute();
      return rows.reduce((sum, row) => sum + Number(row.held_quota), 0);
    };
    const expectInvariant = async () => {
      const state = await ledgerState(db, 1, tokenId);
      expect(state.quota + state.userHeld + state.logged).toBe(userStart);
      expect(state.remain + state.tokenHeld + state.logged).toBe(TOKEN_START);
      expect(state.userHeld).toBe(await taskHeld());
      expect(state.tokenHeld).toBe(state.userHeld);
      return state;
    };
    /** Passes on the given nodes until the batch closes. */
    const runUntilClosed = (id: string, nodes = [app]) => runBatchUntilClosed(db, id, nodes, { check: expectInvariant });
    const fileLines = async (fileId: string) => {
      const response = await call('GET', `/v1/files/${fileId}/content`);
      expect(response.status).toBe(200);
      return (await response.text())
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    };

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      database = await sharedDatabase(target);
      app = await buildTestApp(CONFIG, database.config);
      second = await buildTestApp(CONFIG, database.config);
      db = app.ctx.db;
      baseUrl = await listenOnFreePort(app);
      root = await login(app, 'root', ROOT_PASSWORD);
      // an OpenAI channel's batches would run at the vendor (batchUpstreamRun.test.ts): these are the gateway's own
      await setOption('BatchUpstreamEnabled', 'false');
      const channel = await admin('POST', '/api/channel/', {
        type: 1,
        name: 'openai',
        key: 'sk-batch-channel',
        base_url: emulator.baseUrl,
        models: 'gpt-3.5-turbo',
        group: 'default',
      });
      expect(channel.success).toBe(true);
      const token = await admin('POST', '/api/token/', { name: 'batches', remain_quota: TOKEN_START });
      apiKey = `sk-${token.data.key}`;
      tokenId = token.data.id as number;
      // the full price of one line's request, as a client's own call is billed
      const before = (await ledgerState(db, 1, tokenId)).logged;
      expect((await call('POST', '/v1/chat/completions', chatLine('x').body)).status).toBe(200);
      for (let wait = 0; wait < 100 && (await ledgerState(db, 1, tokenId)).logged === before; wait += 1)
        await new Promise((wake) => setTimeout(wake, 20));
      fullPrice = (await ledgerState(db, 1, tokenId)).logged - before;
      expect(fullPrice).toBeGreaterThan(0);
      const state = await ledgerState(db, 1, tokenId);
      userStart = state.quota + state.userHeld + state.logged;
    });

    afterAll(async () => {
      await second?.close();
      await app?.close();
      await emulator?.close();
      await database?.drop();
    });

    it('runs a batch to completion: each line billed once at half price, the output file line by line by custom_id', async () => {
      const lines = Array.from({ length: 5 }, (_, index) => chatLine(`request-${index}`));
      const response = await create(lines, { metadata: { job: 'nightly' } });
      expect(response.status).toBe(200);
      const batch = await bodyOf(response);
      expect(batch).toMatchObject({
        object: 'batch',
        endpoint: '/v1/chat/completions',
        status: 'validating',
        completion_window: '24h',
        output_file_id: null,
        request_counts: { total: 5, completed: 0, failed: 0 },
        metadata: { job: 'nightly' },
      });
      expect(batch.id).toMatch(/^batch_/);
      expect((await expectInvariant()).userHeld).toBeGreaterThanOrEqual(5 * fullPrice);

      const task = await runUntilClosed(batch.id);
      expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
      const logs = await batchLogs(batch.id);
      expect(logs).toHaveLength(5);
      for (const log of logs) {
        expect(Number(log.quota)).toBe(Math.round(fullPrice * 0.5));
        expect(JSON.parse(log.other!)).toMatchObject({ taskId: batch.id });
      }
      expect(logs.map((log) => /custom_id (request-\d)/.exec(log.content)![1]).sort()).toEqual(lines.map((line) => line.custom_id));
      expect(Number(task.charged_quota)).toBe(5 * Math.round(fullPrice * 0.5));
      // a late settlement by a lease that is no longer the line's (a node that outlived it) bills nothing
      const stale = { task_id: batch.id, line: 0, bound: fullPrice, owner: 'a-stale-lease' };
      const again = { status: 'completed', statusCode: 200, result: '{}', charge: fullPrice, channelId: 0 } as const;
      expect(await settleBatchLine(db, task, stale, again)).toBe(false);
      expect(await batchLogs(batch.id)).toHaveLength(5);
      await expectInvariant();

      const got = await bodyOf(await call('GET', `/v1/batches/${batch.id}`));
      expect(got).toMatchObject({ status: 'completed', request_counts: { total: 5, completed: 5, failed: 0 }, error_file_id: null });
      expect(got.in_progress_at).toBeGreaterThan(0);
      expect(got.finalizing_at).toBeGreaterThan(0);
      expect(got.completed_at).toBeGreaterThan(0);
      const output = await fileLines(got.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));
      for (const line of output) {
        expect(line.id).toMatch(/^batch_req_/);
        expect(line.error).toBeNull();
        expect(line.response).toMatchObject({ status_code: 200, body: { object: 'chat.completion' } });
        expect(typeof line.response.request_id).toBe('string');
      }
      const file = await bodyOf(await call('GET', `/v1/files/${got.output_file_id}`));
      expect(file).toMatchObject({ purpose: 'batch_output', filename: `${batch.id}_output.jsonl` });

      const list = await bodyOf(await call('GET', '/v1/batches?limit=1'));
      expect(list).toMatchObject({ object: 'list', first_id: batch.id, has_more: false });
    });

    it('refuses a bad input file, naming its line, and holds nothing', async () => {
      const held = (await expectInvariant()).userHeld;
      const duplicate = await create([chatLine('a'), chatLine('b'), chatLine('a')]);
      expect(duplicate.status).toBe(400);
      expect((await bodyOf(duplicate)).error).toMatchObject({ param: 'input_file_id', message: expect.stringContaining('Line 3') });
      const wrongUrl = await create([chatLine('a'), { ...chatLine('b'), url: '/v1/embeddings' }]);
      expect((await bodyOf(wrongUrl)).error.message).toContain('Line 2');
      const noModel = await create([{ ...chatLine('a'), body: { messages: [] } }]);
      expect((await bodyOf(noModel)).error.message).toContain('body.model');
      const notJson = await call('POST', '/v1/batches', {
        input_file_id: await upload('{"custom_id": "a", \n'),
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect((await bodyOf(notJson)).error.message).toContain('Line 1');
      const purpose = await call('POST', '/v1/batches', {
        input_file_id: await upload(jsonl([chatLine('a')]), 'user_data'),
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect((await bodyOf(purpose)).error.message).toContain("purpose 'batch'");
      const window = await create([chatLine('a')], { completion_window: '1h' });
      expect((await bodyOf(window)).error.param).toBe('completion_window');
      expect((await call('GET', '/v1/batches/batch_unknown')).status).toBe(404);
      expect((await expectInvariant()).userHeld).toBe(held);
    });

    it('reads a file of many store chunks line by line: lines counted across chunks, characters split between chunks kept', async () => {
      const wide = (pad: string, extra: unknown[] = []) =>
        jsonl([...Array.from({ length: 1500 }, (_, index) => chatLine(`wide-${index}`, `${pad}${'世界'.repeat(30)}`)), ...extra]);
      // the store's chunks are 256 KiB: pad the lines until one chunk ends inside a three-byte character
      let pad = '';
      const splitsCharacter = (text: string) =>
        Buffer.from(text)
          .subarray(0, 256 * 1024)
          .toString('utf8')
          .endsWith('\uFFFD');
      while (!splitsCharacter(wide(pad)) && pad.length < 30) pad += 'a';
      expect(splitsCharacter(wide(pad))).toBe(true);
      const duplicate = await create(
        JSON.parse(
          `[${wide(pad, [chatLine('wide-7')])
            .trim()
            .split('\n')
            .join(',')}]`,
        ) as unknown[],
      );
      expect((await bodyOf(duplicate)).error.message).toContain('Line 1501');
      const batch = await bodyOf(await create(JSON.parse(`[${wide(pad).trim().split('\n').join(',')}]`) as unknown[]));
      expect(batch).toMatchObject({ status: 'validating', request_counts: { total: 1500 } });
      const bodies = await db.selectFrom('batch_lines').select('body').where('task_id', '=', batch.id).execute();
      expect(bodies).toHaveLength(1500);
      for (const { body } of bodies) expect(body).toContain(`${pad}${'世界'.repeat(30)}`);
      await call('POST', `/v1/batches/${batch.id}/cancel`);
      expect(await runUntilClosed(batch.id)).toMatchObject({ status: 'cancelled', held_quota: 0 });
    });

    it('cancelled mid-run: the lines run are billed, the unrun ones given back and in the error file', async () => {
      await setOption('BatchConcurrency', '2');
      const lines = Array.from({ length: 6 }, (_, index) => chatLine(`cancel-${index}`));
      const batch = await bodyOf(await create(lines));
      await batchPass([app]);
      await expectInvariant();
      const cancelling = await bodyOf(await call('POST', `/v1/batches/${batch.id}/cancel`));
      expect(cancelling).toMatchObject({ status: 'cancelling', request_counts: { total: 6, completed: 2 } });
      await expectInvariant();
      const task = await runUntilClosed(batch.id);
      expect(task).toMatchObject({ status: 'cancelled', held_quota: 0 });
      expect(await batchLogs(batch.id)).toHaveLength(2);
      const got = await bodyOf(await call('GET', `/v1/batches/${batch.id}`));
      expect(got).toMatchObject({ status: 'cancelled', request_counts: { total: 6, completed: 2, failed: 0 } });
      expect(got.cancelled_at).toBeGreaterThan(0);
      expect((await fileLines(got.output_file_id)).map((line) => line.custom_id)).toEqual(['cancel-0', 'cancel-1']);
      const errors = await fileLines(got.error_file_id);
      expect(errors.map((line) => line.custom_id)).toEqual(['cancel-2', 'cancel-3', 'cancel-4', 'cancel-5']);
      expect(errors[0]).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
      expect((await call('POST', `/v1/batches/${batch.id}/cancel`)).status).toBe(200);
      await setOption('BatchConcurrency', '2');
    });

    it('while the node serves other users, lines run one at a time at BatchBusyLinesPerSecond; at full concurrency once they stop', async () => {
      const runner = batchRunnerOf(app)!;
      await setOption('BatchConcurrency', '4');
      const batch = await bodyOf(await create(Array.from({ length: 8 }, (_, index) => chatLine(`busy-${index}`))));
      // an interactive call of another user's (any relayed call) marks the node busy: the mark moves past the moment
      // the call was sent (an order, not a measured time)
      const sentAt = Date.now();
      expect((await call('POST', '/v1/chat/completions', chatLine('x').body)).status).toBe(200);
      expect(runner.relay.lastInteractiveAt).toBeGreaterThanOrEqual(sentAt);
      // (past the pace's gap after the lines the tests before ran)
      await new Promise((wake) => setTimeout(wake, 210));
      runner.relay.lastInteractiveAt = Date.now();
      expect(await runner.runOnce()).toBe(1);
      await runner.idle();
      // the next line waits 1 / 5 s after the last one started
      expect(await runner.runOnce()).toBe(0);
      await new Promise((wake) => setTimeout(wake, 210));
      runner.relay.lastInteractiveAt = Date.now();
      expect(await runner.runOnce()).toBe(1);
      await runner.idle();
      await setOption('BatchBusyLinesPerSecond', '0');
      await new Promise((wake) => setTimeout(wake, 210));
      expect(await runner.runOnce()).toBe(0);
      runner.relay.lastInteractiveAt = Date.now() - 1000;
      expect(await runner.runOnce()).toBe(4);
      await runner.idle();
      await setOption('BatchBusyLinesPerSecond', '5');
      await setOption('BatchConcurrency', '2');
      const task = await runUntilClosed(batch.id);
      expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
      expect(await batchLogs(batch.id)).toHaveLength(8);
    });

    it('two nodes sharing the database run each line once; a channel discount of its own applies', async () => {
      const channelId = Number((await db.selectFrom('channels').select('id').executeTakeFirstOrThrow()).id);
      await setOption('BatchChannelDiscounts', JSON.stringify({ [channelId]: 0.25 }));
      await second.ctx.options.reload();
      const asked = emulator.requests.length;
      const lines = Array.from({ length: 12 }, (_, index) => chatLine(`shared-${index}`));
      const batch = await bodyOf(await create(lines));
      const task = await runUntilClosed(batch.id, [app, second]);
      expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
      expect(emulator.requests.length - asked).toBe(12);
      const logs = await batchLogs(batch.id);
      expect(logs).toHaveLength(12);
      expect(new Set(logs.map((log) => /custom_id (shared-\d+)/.exec(log.content)![1])).size).toBe(12);
      for (const log of logs) expect(Number(log.quota)).toBe(Math.round(fullPrice * 0.25));
      await setOption('BatchChannelDiscounts', '{}');
    });
  });
}
