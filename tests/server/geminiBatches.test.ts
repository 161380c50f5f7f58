// Batches on a Gemini channel run at Gemini's own Batch API
// (relay/batches/geminiBatch.ts) against the batch emulator in front of the
// Gemini emulator, with OpenAI's SDK as the client: the lines go inline in
// one batchGenerateContent as GenerateContentRequests keyed by custom_id, the
// batch is polled to its end, the output file answers each line as a
// chat.completion by custom_id, each line is billed once at half the price a
// direct call costs with one consume log naming the batch, a line Google
// refuses inside the batch lands in the error file unbilled, and a cancel is
// passed on and gives every bound back. The ledger's invariant is checked
// after every pass. A larger batch goes through the Files API's resumable
// upload and comes back as a responses file. SQLite only: nothing here is
// dialect-specific SQL (batchUpstreamRun.test.ts runs the shared settlement
// on every database).
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { Database } from '../../server/db/database';
import { batchModeFor, batchSummaryOf } from '../../server/relay/batches/batchObject';
import { geminiBatchClient } from '../../server/relay/batches/geminiBatch';
import type { UpstreamBatchResult } from '../../server/relay/batches/upstream';
import { batchVendorOf } from '../../server/relay/batches/upstreamHttp';
import { findTaskById } from '../../server/repositories/tasks';
import { batchRunnerOf } from '../../server/routes/v1/batches';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { GEMINI_CHANNELS } from '../support/emulators/gemini';
import { GEMINI_BATCH_REFUSED_WORD, startGeminiBatchEmulator, type GeminiBatchEmulator } from '../support/geminiBatchEmulator';
import { expectBatchLedger, loggedBy } from '../support/batchLedgerChecks';
import { ledgerState } from '../support/ledgerState';
import { listenOnFreePort } from './relay/harness';

const TOKEN_START = 50_000_000;
const CONFIG = { batches: { intervalMs: 0, leaseMs: 60_000, finishLeaseMs: 60_000 }, quotaLeases: false };
const CLOSED = ['completed', 'failed', 'expired', 'cancelled'];
const MODEL = 'gemini-2.0-flash';
/** What the channel's model mapping sends MODEL as. */
const MAPPED = 'gemini-2.5-flash';
const KEY = GEMINI_CHANNELS[0].key;
const PROMPT = 'say hello to the batch';
const chatLine = (customId: string, prompt = PROMPT) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: MODEL, messages: [{ role: 'user', content: prompt }], max_tokens: 50 },
});
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

describe('batches on a Gemini channel, at Gemini’s Batch API', () => {
  let app: FastifyInstance;
  let db: Kysely<Database>;
  let emulator: GeminiBatchEmulator;
  let client: OpenAI;
  let root = '';
  let tokenId = 0;
  let userStart = 0;
  let fullPrice = 0;

  const admin = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
  const expectInvariant = () => expectBatchLedger(db, tokenId, { user: userStart, token: TOKEN_START });
  const pass = async () => {
    await batchRunnerOf(app)!.runOnce();
    await expectInvariant();
  };
  const create = async (lines: unknown[]) => {
    const file = await client.files.create({ file: new File([jsonl(lines)], 'input.jsonl'), purpose: 'batch' });
    return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  };
  /** Runs the batch runner and polls the batch through the SDK until it closed. */
  const pollUntilClosed = async (id: string) => {
    for (let round = 0; round < 50; round += 1) {
      await pass();
      const batch = await client.batches.retrieve(id);
      if (CLOSED.includes(batch.status)) return batch;
    }
    throw new Error(`batch ${id} never closed`);
  };
  const fileLines = async (fileId: string) =>
    (await (await client.files.content(fileId)).text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  const batchLogs = (batchId: string) =>
    db.selectFrom('logs').selectAll().where('type', '=', LogType.consume).where('content', 'like', `batch ${batchId},%`).execute();
  const batchCreates = () => emulator.requests.filter((request) => request.path.endsWith(':batchGenerateContent'));

  beforeAll(async () => {
    emulator = await startGeminiBatchEmulator();
    app = await buildTestApp(CONFIG);
    db = app.ctx.db;
    const baseUrl = await listenOnFreePort(app);
    root = await login(app, 'root', ROOT_PASSWORD);
    const mapping = JSON.stringify({ [MODEL]: MAPPED });
    const channel = {
      type: 24,
      name: 'gemini',
      key: KEY,
      base_url: emulator.baseUrl,
      group: 'default',
      models: MODEL,
      model_mapping: mapping,
    };
    expect((await admin('POST', '/api/channel/', channel)).success).toBe(true);
    const token = await admin('POST', '/api/token/', { name: 'batches', remain_quota: TOKEN_START });
    tokenId = token.data.id as number;
    client = new OpenAI({ apiKey: `sk-${token.data.key}`, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    // the price of one line called directly, at the full price
    const direct = chatLine('direct').body as OpenAI.ChatCompletionCreateParamsNonStreaming;
    fullPrice = await loggedBy(db, tokenId, () => client.chat.completions.create(direct));
    expect(fullPrice).toBeGreaterThan(0);
    const state = await ledgerState(db, 1, tokenId);
    userStart = state.quota + state.userHeld + state.logged;
  });

  afterAll(async () => {
    await app?.close();
    await emulator?.close();
  });

  it('runs chat completions of a single-key Gemini channel upstream, Vertex AI and other endpoints not', () => {
    expect(batchModeFor({ type: 24, multi_key: 0 }, true, '/v1/chat/completions')).toBe('upstream');
    expect(batchModeFor({ type: 11, multi_key: 0 }, true, '/v1/chat/completions')).toBe('upstream');
    expect(batchModeFor({ type: 24, multi_key: 0 }, true, '/v1/embeddings')).toBe('self');
    expect(batchModeFor({ type: 24, multi_key: 1 }, true, '/v1/chat/completions')).toBe('self');
    expect(batchModeFor({ type: 24, multi_key: 0 }, false, '/v1/chat/completions')).toBe('self');
    // Vertex AI's batch prediction reads Cloud Storage or BigQuery only
    expect(batchModeFor({ type: 42, multi_key: 0 }, true, '/v1/chat/completions')).toBe('self');
  });

  it('submits inline once, answers each line by custom_id, bills each at half price, and leaves a refused line unbilled', async () => {
    const created = batchCreates().length;
    const lines = [chatLine('g-0'), chatLine('g-1', `please ${GEMINI_BATCH_REFUSED_WORD} this`), chatLine('g-2')];
    const batch = await create(lines);
    expect(batch).toMatchObject({ status: 'validating', request_counts: { total: 3 } });
    const done = await pollUntilClosed(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });

    const submitted = batchCreates().slice(created);
    expect(submitted).toHaveLength(1);
    // the channel's model mapping applies, as for a direct call
    expect(submitted[0].path).toBe(`/v1beta/models/${MAPPED}:batchGenerateContent`);
    expect(submitted[0].headers['x-goog-api-key']).toBe(KEY);
    const sent = submitted[0].body as { batch: { displayName: string; inputConfig: { requests: { requests: any[] } } } };
    expect(sent.batch.displayName).toMatch(/^switchboard-/);
    const requests = sent.batch.inputConfig.requests.requests;
    expect(requests.map((entry) => entry.metadata.key)).toEqual(['g-0', 'g-1', 'g-2']);
    // the relay's own translation: a GenerateContentRequest, never OpenAI's messages
    expect(requests[0].request).toEqual({
      contents: [{ role: 'user', parts: [{ text: PROMPT }] }],
      generationConfig: { maxOutputTokens: 50 },
    });

    const task = (await findTaskById(db, batch.id))!;
    expect(task).toMatchObject({ status: 'completed', held_quota: 0 });
    expect(batchSummaryOf(task)).toMatchObject({ mode: 'upstream', upstream: { batchId: expect.stringMatching(/^batches\//) } });
    const output = await fileLines(done.output_file_id!);
    expect(output.map((line) => line.custom_id)).toEqual(['g-0', 'g-2']);
    for (const line of output) {
      expect(line.response).toMatchObject({ status_code: 200, body: { object: 'chat.completion' } });
      expect(line.response.body.choices[0].message.content).toBe(`Hello from Gemini, you said: ${PROMPT}`);
      expect(line.response.body.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 10 });
    }
    const errors = await fileLines(done.error_file_id!);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: 'g-1', response: { status_code: 400 }, error: { code: 'INVALID_ARGUMENT' } });

    const logs = await batchLogs(batch.id);
    expect(logs.map((log) => /custom_id (g-\d)/.exec(log.content)![1]).sort()).toEqual(['g-0', 'g-2']);
    for (const log of logs) expect(Number(log.quota)).toBe(Math.round(fullPrice * 0.5));
    expect(Number(task.charged_quota)).toBe(2 * Math.round(fullPrice * 0.5));
    expect((await expectInvariant()).userHeld).toBe(0);
  });

  it('cancelled while pending: the cancel goes to Gemini, nothing is billed, every bound goes back', async () => {
    emulator.pollsPerStage = 100;
    try {
      const batch = await create([chatLine('c-0'), chatLine('c-1')]);
      await pass();
      await pass();
      const vendorId = batchSummaryOf((await findTaskById(db, batch.id))!).upstream!.batchId!;
      expect(emulator.batches.get(vendorId)!.state).toBe('BATCH_STATE_PENDING');
      expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
      const done = await pollUntilClosed(batch.id);
      expect(done).toMatchObject({ status: 'cancelled', output_file_id: null, request_counts: { total: 2, completed: 0, failed: 2 } });
      expect(emulator.requests.filter((request) => request.path === `/v1beta/${vendorId}:cancel`)).toHaveLength(1);
      expect(emulator.batches.get(vendorId)!.state).toBe('BATCH_STATE_CANCELLED');
      expect(await batchLogs(batch.id)).toHaveLength(0);
      const errors = await fileLines(done.error_file_id!);
      expect(errors.map((line) => [line.custom_id, line.error.code])).toEqual([
        ['c-0', 'batch_cancelled'],
        ['c-1', 'batch_cancelled'],
      ]);
      expect(await findTaskById(db, batch.id)).toMatchObject({ held_quota: 0, charged_quota: 0 });
      expect((await expectInvariant()).userHeld).toBe(0);
    } finally {
      emulator.pollsPerStage = 0;
    }
  });

  it('a batch past the inline limit is uploaded with the resumable protocol and read back from its responses file', async () => {
    const channel = { type: 24, key: KEY, baseUrl: emulator.baseUrl, other: '' };
    const gemini = geminiBatchClient(batchVendorOf(channel)!, channel, { fetch, timeoutMs: 10_000, inlineLimitBytes: 10 });
    const lines = ['f-0', 'f-1', 'f-2'].map((id) => ({ customId: id, url: '/v1/chat/completions', body: chatLine(id).body }));
    const { batchId, inputFileId } = await gemini.submit(lines, '/v1/chat/completions');
    expect(inputFileId).toMatch(/^files\//);
    const start = emulator.requests.find(
      (request) => request.path === '/upload/v1beta/files' && request.headers['x-goog-upload-command'] === 'start',
    )!;
    expect(start.headers).toMatchObject({ 'x-goog-upload-protocol': 'resumable', 'x-goog-api-key': KEY });
    const uploaded = emulator.files
      .get(inputFileId)!
      .content.toString()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(uploaded.map((line) => line.key)).toEqual(['f-0', 'f-1', 'f-2']);
    expect(uploaded[0].request.contents).toEqual([{ role: 'user', parts: [{ text: PROMPT }] }]);
    expect(emulator.batches.get(batchId)!.inputFile).toBe(inputFileId);

    const state = await gemini.poll(batchId);
    expect(state).toMatchObject({ status: 'completed', counts: { total: 3, completed: 3, failed: 0 } });
    expect(state.outputFileId).toMatch(/^files\/batch-/);
    const results: UpstreamBatchResult[] = [];
    for await (const result of gemini.results(state)) results.push(result);
    expect(results.map((result) => [result.customId, result.statusCode])).toEqual([
      ['f-0', 200],
      ['f-1', 200],
      ['f-2', 200],
    ]);
    expect(results[0]).toMatchObject({ body: { object: 'chat.completion' }, usage: { prompt_tokens: 5, completion_tokens: 10 } });
    expect(emulator.requests.some((request) => request.path === `/download/v1beta/${state.outputFileId}:download`)).toBe(true);

    await gemini.remove({ ...state, inputFileId });
    expect(emulator.files.has(inputFileId)).toBe(false);
    expect(emulator.files.has(state.outputFileId!)).toBe(false);
    // a batch that ended cannot be cancelled: Google refuses, and the client says so
    await expect(gemini.cancel(batchId)).rejects.toMatchObject({ status: 400, retryable: false });
  });
});
