// Batches run at the vendor's own Batch API (relay/batches/upstreamRun.ts)
// against the OpenAI emulator's Files and Batch APIs, an OpenAI channel and
// an Azure OpenAI one, on SQLite (a file two apps share), PostgreSQL and MariaDB: the
// lines are submitted once, the output file matches the input line by line
// by custom_id, each line is billed once at the vendor's batch price (half)
// with one consume log, a line failing at the vendor gives its bound back, a
// cancel is passed on, and a second app on the same database polls a batch
// the first submitted without submitting it again. The ledger's invariant
// (start - logged charges - held = balance; nothing held once closed) is
// checked after every pass.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { DatabaseConfig } from '../../server/config';
import type { Database } from '../../server/db/database';
import { batchSummaryOf } from '../../server/relay/batches/batchObject';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { batchPass, runBatchUntilClosed } from '../support/batchRuns';
import { findTaskById } from '../../server/repositories/tasks';
import { ledgerState } from '../support/ledgerState';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

const TOKEN_START = 50_000_000;
const CONFIG = { batches: { intervalMs: 0, leaseMs: 60_000, finishLeaseMs: 60_000 }, quotaLeases: false };
const OPENAI_MODEL = 'gpt-3.5-turbo';
const AZURE_MODEL = 'gpt-4o-mini';
const bodyOf = (response: Response): Promise<any> => response.json();
const chatLine = (customId: string, model: string, extra: Record<string, unknown> = {}) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content: 'say hello to the batch' }], max_tokens: 50, ...extra },
});
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

const targets = await databaseTargets('batchUpstreamRun');

for (const target of targets) {
  describe.runIf(target.available)(`batches at the vendor on ${target.name}`, () => {
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
    /** What one line costs at the full price, by model (a client's own call of the same body). */
    const fullPrice: Record<string, number> = {};

    const admin = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
      asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const create = async (lines: unknown[]) => {
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', new Blob([jsonl(lines)]), 'input.jsonl');
      const uploaded = await fetch(`${baseUrl}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
      const fileId = ((await uploaded.json()) as { id: string }).id;
      const response = await call('POST', '/v1/batches', {
        input_file_id: fileId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect(response.status).toBe(200);
      return bodyOf(response);
    };
    const batchLogs = (batchId: string) =>
      db.selectFrom('logs').selectAll().where('type', '=', LogType.consume).where('content', 'like', `batch ${batchId},%`).execute();
    const expectInvariant = async () => {
      const state = await ledgerState(db, 1, tokenId);
      const tasks = await db.selectFrom('tasks').select('held_quota').execute();
      expect(state.quota + state.userHeld + state.logged).toBe(userStart);
      expect(state.remain + state.tokenHeld + state.logged).toBe(TOKEN_START);
      expect(state.userHeld).toBe(tasks.reduce((sum, row) => sum + Number(row.held_quota), 0));
      return state;
    };
    const pass = async (nodes: FastifyInstance[]) => {
      for (const node of nodes) await batchPass([node], false);
      await expectInvariant();
    };
    const runUntilClosed = (id: string, nodes = [app]) =>
      runBatchUntilClosed(db, id, nodes, { passes: 50, idle: false, check: expectInvariant });
    const fileLines = async (fileId: string) => {
      const response = await call('GET', `/v1/files/${fileId}/content`);
      expect(response.status).toBe(200);
      return (await response.text())
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    };
    const creates = () => emulator.batches.batches.size;
    /** What the key's consume logs come to once they moved past `before`. */
    const loggedPast = async (before: number) => {
      for (let wait = 0; wait < 100 && (await ledgerState(db, 1, tokenId)).logged === before; wait += 1)
        await new Promise((wake) => setTimeout(wake, 20));
      return (await ledgerState(db, 1, tokenId)).logged;
    };

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      database = await sharedDatabase(target);
      app = await buildTestApp(CONFIG, database.config);
      second = await buildTestApp(CONFIG, database.config);
      db = app.ctx.db;
      baseUrl = await listenOnFreePort(app);
      root = await login(app, 'root', ROOT_PASSWORD);
      const channel = { base_url: emulator.baseUrl, group: 'default' };
      expect(
        (await admin('POST', '/api/channel/', { ...channel, type: 1, name: 'openai', key: 'sk-openai', models: OPENAI_MODEL })).success,
      ).toBe(true);
      const azure = { ...channel, type: 3, name: 'azure', key: 'azure-key', other: '2024-10-21', models: AZURE_MODEL };
      expect((await admin('POST', '/api/channel/', azure)).success).toBe(true);
      const token = await admin('POST', '/api/token/', { name: 'batches', remain_quota: TOKEN_START });
      apiKey = `sk-${token.data.key}`;
      tokenId = token.data.id as number;
      for (const model of [OPENAI_MODEL, AZURE_MODEL]) {
        const before = (await ledgerState(db, 1, tokenId)).logged;
        expect((await call('POST', '/v1/chat/completions', chatLine('x', model).body)).status).toBe(200);
        fullPrice[model] = (await loggedPast(before)) - before;
        expect(fullPrice[model]).toBeGreaterThan(0);
      }
      const state = await ledgerState(db, 1, tokenId);
      userStart = state.quota + state.userHeld + state.logged;
    });

    afterAll(async () => {
      await second?.close();
      await app?.close();
      await emulator?.close();
      await database?.drop();
    });

    it('an OpenAI channel: submitted once, the output file by custom_id, each line billed once at half price', async () => {
      const created = creates();
      const lines = Array.from({ length: 4 }, (_, index) => chatLine(`openai-${index}`, OPENAI_MODEL));
      const batch = await create(lines);
      expect(batch).toMatchObject({ status: 'validating', request_counts: { total: 4 } });
      const task = await runUntilClosed(batch.id);
      expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
      expect(creates() - created).toBe(1);
      const summary = batchSummaryOf(task);
      expect(summary).toMatchObject({ mode: 'upstream', upstream: { batchId: expect.stringMatching(/^batch_emu/) } });
      const vendorInput = emulator.batches.files.get(summary.upstream!.inputFileId!);
      expect(vendorInput).toBeUndefined(); // the vendor's files are deleted once the batch closed
      const logs = await batchLogs(batch.id);
      expect(logs.map((log) => /custom_id (openai-\d)/.exec(log.content)![1]).sort()).toEqual(lines.map((line) => line.custom_id));
      for (const log of logs) expect(Number(log.quota)).toBe(Math.round(fullPrice[OPENAI_MODEL] * 0.5));
      expect(Number(task.charged_quota)).toBe(4 * Math.round(fullPrice[OPENAI_MODEL] * 0.5));
      const got = await bodyOf(await call('GET', `/v1/batches/${batch.id}`));
      expect(got).toMatchObject({ status: 'completed', request_counts: { total: 4, completed: 4, failed: 0 }, error_file_id: null });
      const output = await fileLines(got.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));
      for (const line of output) expect(line.response).toMatchObject({ status_code: 200, body: { object: 'chat.completion' } });
      const state = await expectInvariant();
      expect(state.userHeld).toBe(0);
    });

    it('an Azure channel: a line failing at the vendor is in the error file and gives its bound back', async () => {
      const failing = { emulator: { batch_error: { code: 'invalid_prompt', message: 'refused', status: 400 } } };
      const lines = [chatLine('azure-0', AZURE_MODEL), chatLine('azure-1', AZURE_MODEL, failing), chatLine('azure-2', AZURE_MODEL)];
      const batch = await create(lines);
      const task = await runUntilClosed(batch.id);
      expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
      const azureCalls = emulator.requests.filter((request) => request.path === '/openai/batches');
      expect(azureCalls.length).toBeGreaterThanOrEqual(1);
      const logs = await batchLogs(batch.id);
      expect(logs.map((log) => /custom_id (azure-\d)/.exec(log.content)![1]).sort()).toEqual(['azure-0', 'azure-2']);
      for (const log of logs) expect(Number(log.quota)).toBe(Math.round(fullPrice[AZURE_MODEL] * 0.5));
      const got = await bodyOf(await call('GET', `/v1/batches/${batch.id}`));
      expect(got.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
      expect((await fileLines(got.output_file_id)).map((line) => line.custom_id)).toEqual(['azure-0', 'azure-2']);
      const errors = await fileLines(got.error_file_id);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ custom_id: 'azure-1', response: { status_code: 400 }, error: { code: 'invalid_prompt' } });
      expect((await expectInvariant()).userHeld).toBe(0);
    });

    it('cancelled mid-way: the cancel goes to the vendor, nothing is billed, every bound goes back', async () => {
      emulator.batches.pollsPerStage = 100;
      try {
        const batch = await create([chatLine('cancel-0', OPENAI_MODEL), chatLine('cancel-1', OPENAI_MODEL)]);
        await pass([app]);
        await pass([app]);
        const vendorId = batchSummaryOf((await findTaskById(db, batch.id))!).upstream!.batchId!;
        expect(emulator.batches.batches.get(vendorId)!.status).toBe('validating');
        const cancelling = await bodyOf(await call('POST', `/v1/batches/${batch.id}/cancel`));
        expect(cancelling.status).toBe('cancelling');
        const task = await runUntilClosed(batch.id);
        expect(task).toMatchObject({ status: 'cancelled', held_quota: 0 });
        expect(emulator.batches.batches.get(vendorId)!.status).toBe('cancelled');
        expect(await batchLogs(batch.id)).toHaveLength(0);
        const got = await bodyOf(await call('GET', `/v1/batches/${batch.id}`));
        expect(got).toMatchObject({ status: 'cancelled', output_file_id: null, request_counts: { total: 2, completed: 0, failed: 2 } });
        const errors = await fileLines(got.error_file_id);
        expect(errors.map((line) => [line.custom_id, line.error.code])).toEqual([
          ['cancel-0', 'batch_cancelled'],
          ['cancel-1', 'batch_cancelled'],
        ]);
        expect((await expectInvariant()).userHeld).toBe(0);
      } finally {
        emulator.batches.pollsPerStage = 0;
      }
    });

    it('a second app on the same database polls the batch the first submitted (past a failed poll), without submitting it again', async () => {
      emulator.batches.pollsPerStage = 2;
      try {
        const created = creates();
        const batch = await create([chatLine('resume-0', OPENAI_MODEL), chatLine('resume-1', OPENAI_MODEL)]);
        await pass([app]);
        expect(creates() - created).toBe(1);
        const submitted = batchSummaryOf((await findTaskById(db, batch.id))!).upstream!.batchId;
        // a failed poll (the vendor's 500) is tried again later, never a second submission
        emulator.batches.failPolls = [500];
        const task = await runUntilClosed(batch.id, [second]);
        expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
        expect(creates() - created).toBe(1);
        expect(batchSummaryOf(task).upstream!.batchId).toBe(submitted);
        expect(await batchLogs(batch.id)).toHaveLength(2);
      } finally {
        emulator.batches.pollsPerStage = 0;
      }
    });
  });
}
