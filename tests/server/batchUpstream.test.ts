// The client that runs a batch at the vendor (server/relay/batches/upstream.ts)
// against the OpenAI emulator's Files and Batch APIs: OpenAI's paths and
// Azure OpenAI's, results matched by custom_id with their usage, error lines,
// cancel, the files removed, and failures marked retryable or not.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  upstreamBatchClient,
  UpstreamBatchError,
  type UpstreamBatchClient,
  type UpstreamBatchLine,
  type UpstreamBatchResult,
  type UpstreamBatchState,
} from '../../server/relay/batches/upstream';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

let emulator: OpenAIEmulator;
beforeAll(async () => {
  emulator = await startOpenAIEmulator();
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => {
  emulator.requests.length = 0;
  emulator.batches.pollsPerStage = 0;
  emulator.batches.failPolls = [];
});

const openAi = (key = 'sk-good', options: { timeoutMs?: number } = {}) =>
  upstreamBatchClient({ type: 1, key: '', baseUrl: emulator.baseUrl, other: '' }, key, options)!;
const azure = (other: string) => upstreamBatchClient({ type: 3, key: '', baseUrl: emulator.baseUrl, other }, 'azure-key')!;

const chatLine = (customId: string, text: string, extra: Record<string, unknown> = {}): UpstreamBatchLine => ({
  customId,
  url: '/v1/chat/completions',
  body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra },
});

const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Polls until the batch ends (the emulator moves a stage a poll). */
async function untilDone(client: UpstreamBatchClient, batchId: string): Promise<UpstreamBatchState> {
  for (let poll = 0; poll < 10; poll += 1) {
    const state = await client.poll(batchId);
    if (TERMINAL.has(state.status)) return state;
  }
  throw new Error(`batch ${batchId} never ended`);
}

async function collect(results: AsyncIterable<UpstreamBatchResult>): Promise<UpstreamBatchResult[]> {
  const all: UpstreamBatchResult[] = [];
  for await (const result of results) all.push(result);
  return all;
}

/** The recorded requests as "METHOD path?query". */
const calls = () => emulator.requests.filter((request) => !request.path.includes('/chat/') && !request.path.includes('/embeddings'));

describe('upstream batches on an OpenAI channel', () => {
  it('submits three chat lines, polls them through every stage and reads each result with its usage', async () => {
    const client = openAi();
    const lines = [chatLine('a', 'one two three'), chatLine('b', 'four five', { emulator: { cached_tokens: 1 } }), chatLine('c', 'six')];
    const { batchId, inputFileId } = await client.submit(lines, '/v1/chat/completions');

    const upload = calls()[0];
    expect(upload).toMatchObject({ method: 'POST', path: '/v1/files' });
    expect(upload.headers.authorization).toBe('Bearer sk-good');
    // streamed: no length known beforehand
    expect(upload.headers['transfer-encoding']).toBe('chunked');
    expect(upload.headers['content-length']).toBeUndefined();
    const input = emulator.batches.files.get(inputFileId)!;
    expect(input.purpose).toBe('batch');
    expect(
      input.content
        .toString()
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text) as unknown),
    ).toEqual(lines.map((line) => ({ custom_id: line.customId, method: 'POST', url: line.url, body: line.body })));
    expect(calls()[1]).toMatchObject({
      method: 'POST',
      path: '/v1/batches',
      body: { input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });

    const seen: string[] = [];
    let state = await client.poll(batchId);
    seen.push(state.status);
    while (!TERMINAL.has(state.status)) {
      state = await client.poll(batchId);
      seen.push(state.status);
    }
    expect(seen).toEqual(['in_progress', 'finalizing', 'completed']);
    expect(state).toMatchObject({ counts: { total: 3, completed: 3, failed: 0 }, inputFileId });
    expect(state.outputFileId).toBeTruthy();
    expect(state.errorFileId).toBeUndefined();

    const results = await collect(client.results(state));
    expect(results.map((result) => result.customId)).toEqual(['a', 'b', 'c']);
    expect(results.map((result) => result.usage)).toEqual([
      { prompt_tokens: 3, completion_tokens: 5 },
      { prompt_tokens: 2, completion_tokens: 5, cached_tokens: 1 },
      { prompt_tokens: 1, completion_tokens: 5 },
    ]);
    expect(results[0]).toMatchObject({ statusCode: 200, body: { object: 'chat.completion', model: 'gpt-4o-mini' } });
    expect(results.every((result) => result.error === undefined)).toBe(true);

    await client.remove(state);
    expect(emulator.batches.files.has(inputFileId)).toBe(false);
    expect(emulator.batches.files.has(state.outputFileId!)).toBe(false);
    // a file already gone is no failure
    await client.remove(state);
  });

  it('streams a thousand embedding lines up and reads a thousand results back', async () => {
    const client = openAi();
    async function* lines(): AsyncGenerator<UpstreamBatchLine> {
      for (let index = 0; index < 1000; index += 1)
        yield {
          customId: `line-${index}`,
          url: '/v1/embeddings',
          body: { model: 'text-embedding-3-small', input: `text number ${index}` },
        };
    }
    const { batchId } = await client.submit(lines(), '/v1/embeddings');
    const state = await untilDone(client, batchId);
    expect(state).toMatchObject({ status: 'completed', counts: { total: 1000, completed: 1000, failed: 0 } });
    const results = await collect(client.results(state));
    expect(results).toHaveLength(1000);
    expect(new Set(results.map((result) => result.customId)).size).toBe(1000);
    expect(results.every((result) => result.statusCode === 200)).toBe(true);
    expect(results.every((result) => result.usage?.prompt_tokens === 3 && result.usage.completion_tokens === 0)).toBe(true);
    await client.remove(state);
  });

  it("reads a Responses line's usage under its own names", async () => {
    const client = openAi();
    const line = { customId: 'r', url: '/v1/responses', body: { model: 'gpt-4o', input: 'hello there', emulator: { chunks: 2 } } };
    const { batchId } = await client.submit([line], '/v1/responses');
    const state = await untilDone(client, batchId);
    const [result] = await collect(client.results(state));
    expect(result).toMatchObject({ customId: 'r', statusCode: 200, usage: { prompt_tokens: 2, completion_tokens: 2, cached_tokens: 0 } });
  });

  it('puts failed lines in the error file: an HTTP error with its code, and a failure with no response', async () => {
    const client = openAi();
    const lines = [
      chatLine('fine', 'hello'),
      chatLine('refused', 'hello', { emulator: { batch_error: { status: 400, code: 'invalid_value', message: 'bad temperature' } } }),
      chatLine('lost', 'hello', { emulator: { batch_error: { code: 'batch_expired', message: 'not run in time' } } }),
    ];
    const { batchId } = await client.submit(lines, '/v1/chat/completions');
    const state = await untilDone(client, batchId);
    expect(state.counts).toEqual({ total: 3, completed: 1, failed: 2 });
    expect(state.errorFileId).toBeTruthy();
    const results = await collect(client.results(state));
    expect(results).toEqual([
      expect.objectContaining({ customId: 'fine', statusCode: 200 }),
      expect.objectContaining({ customId: 'refused', statusCode: 400, error: { code: 'invalid_value', message: 'bad temperature' } }),
      { customId: 'lost', statusCode: 0, body: null, error: { code: 'batch_expired', message: 'not run in time' } },
    ]);
    expect(results[1].usage).toBeUndefined();
  });

  it("reports a batch the vendor failed at validation with the vendor's errors", async () => {
    const client = openAi();
    const { batchId } = await client.submit(
      [chatLine('a', 'hi'), { ...chatLine('b', 'hi'), url: '/v1/embeddings' }],
      '/v1/chat/completions',
    );
    const state = await untilDone(client, batchId);
    expect(state.status).toBe('failed');
    expect(state.errors).toMatchObject({ data: [{ code: 'mismatched_endpoint', line: 2 }] });
    expect(await collect(client.results(state))).toEqual([]);
  });

  it('cancels a batch: cancelling, then cancelled with nothing run', async () => {
    const client = openAi();
    emulator.batches.pollsPerStage = 5;
    const { batchId } = await client.submit([chatLine('a', 'hi'), chatLine('b', 'hi')], '/v1/chat/completions');
    expect((await client.poll(batchId)).status).toBe('validating');
    await client.cancel(batchId);
    expect(calls().at(-1)).toMatchObject({ method: 'POST', path: `/v1/batches/${batchId}/cancel` });
    const state = await untilDone(client, batchId);
    expect(state).toMatchObject({ status: 'cancelled', counts: { completed: 0, failed: 0 } });
    expect(await collect(client.results(state))).toEqual([]);
    // a batch that has ended cannot be cancelled: the vendor's refusal is not worth retrying
    const refusal = await client.cancel(batchId).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UpstreamBatchError);
    expect(refusal).toMatchObject({ retryable: false, status: 409 });
  });

  it('marks 500, 429, an unreachable vendor and a silent one retryable, and an unknown batch not', async () => {
    const client = openAi();
    const { batchId } = await client.submit([chatLine('a', 'hi')], '/v1/chat/completions');
    emulator.batches.failPolls = [500, 429];
    await expect(client.poll(batchId)).rejects.toMatchObject({ name: 'UpstreamBatchError', status: 500, retryable: true });
    await expect(client.poll(batchId)).rejects.toMatchObject({ status: 429, retryable: true, code: 'rate_limit_exceeded' });
    expect((await client.poll(batchId)).status).toBe('in_progress');
    await expect(client.poll('batch_unknown')).rejects.toMatchObject({ status: 404, retryable: false });

    const closed = await startOpenAIEmulator();
    await closed.close();
    const gone = upstreamBatchClient({ type: 1, key: '', baseUrl: closed.baseUrl, other: '' }, 'sk-good')!;
    await expect(gone.poll(batchId)).rejects.toMatchObject({ retryable: true, code: 'upstream_unreachable' });
    await expect(openAi('sk-hang', { timeoutMs: 100 }).poll(batchId)).rejects.toMatchObject({
      retryable: true,
      code: 'upstream_timeout',
    });
    await expect(openAi('sk-dead').poll(batchId)).rejects.toMatchObject({ status: 401, retryable: false, deadKey: true });
  });

  it('counts only idle time against the timeout: an upload longer than it, but never idle that long, goes through', async () => {
    const client = openAi('sk-good', { timeoutMs: 400 });
    async function* slowly(): AsyncGenerator<UpstreamBatchLine> {
      for (let index = 0; index < 8; index += 1) {
        await new Promise((wake) => setTimeout(wake, 100));
        yield chatLine(`slow-${index}`, 'hi');
      }
    }
    const { inputFileId } = await client.submit(slowly(), '/v1/chat/completions');
    expect(emulator.batches.files.get(inputFileId)!.content.toString().trim().split('\n')).toHaveLength(8);
  });

  it("fails the upload with the lines' own error when their source throws, and leaves no batch", async () => {
    const client = openAi();
    const batchesBefore = emulator.batches.batches.size;
    async function* broken(): AsyncGenerator<UpstreamBatchLine> {
      yield chatLine('a', 'hi');
      throw new Error('the input file could not be read');
    }
    await expect(client.submit(broken(), '/v1/chat/completions')).rejects.toThrow('the input file could not be read');
    expect(emulator.batches.batches.size).toBe(batchesBefore);
  });
});

// the fields of OpenAI's Batch, OpenAIFile and request output objects (github:openai/openai-openapi, openapi.json)
const BATCH_FIELDS = [
  'id',
  'object',
  'endpoint',
  'model',
  'errors',
  'input_file_id',
  'completion_window',
  'status',
  'output_file_id',
  'error_file_id',
  'created_at',
  'in_progress_at',
  'expires_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'expired_at',
  'cancelling_at',
  'cancelled_at',
  'request_counts',
  'usage',
  'metadata',
];
const FILE_FIELDS = ['id', 'bytes', 'created_at', 'expires_at', 'filename', 'object', 'purpose', 'status', 'status_details'];

describe('the emulated Files and Batch APIs', () => {
  it("answer with the reference's fields, and complete a batch on the test's word", async () => {
    const client = openAi();
    emulator.batches.pollsPerStage = 100;
    const { batchId } = await client.submit([chatLine('a', 'hi')], '/v1/chat/completions');
    await emulator.batches.complete(batchId);
    const state = await client.poll(batchId);
    expect(state.status).toBe('completed');

    const get = async (path: string) =>
      (await (await fetch(`${emulator.baseUrl}${path}`, { headers: { authorization: 'Bearer sk-good' } })).json()) as Record<
        string,
        unknown
      >;
    const batch = await get(`/v1/batches/${batchId}`);
    expect(BATCH_FIELDS).toEqual(expect.arrayContaining(Object.keys(batch)));
    expect(batch).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', completion_window: '24h' });
    const file = await get(`/v1/files/${state.outputFileId}`);
    expect(FILE_FIELDS).toEqual(expect.arrayContaining(Object.keys(file)));
    expect(file).toMatchObject({ object: 'file', purpose: 'batch_output' });
    const content = await (
      await fetch(`${emulator.baseUrl}/v1/files/${state.outputFileId}/content`, { headers: { authorization: 'Bearer sk-good' } })
    ).text();
    const line = JSON.parse(content.trim()) as Record<string, unknown>;
    expect(Object.keys(line).sort()).toEqual(['custom_id', 'error', 'id', 'response']);
    expect(Object.keys(line.response as object).sort()).toEqual(['body', 'request_id', 'status_code']);
    // a file and a batch are their key's alone
    const other = await fetch(`${emulator.baseUrl}/v1/batches/${batchId}`, { headers: { authorization: 'Bearer sk-other' } });
    expect(other.status).toBe(404);
  });
});

describe('upstream batches on an Azure OpenAI channel', () => {
  it("uses Azure's paths, api-version, api-key header, endpoint names and deployment names", async () => {
    const client = azure('2024-10-21');
    const { batchId, inputFileId } = await client.submit(
      [chatLine('a', 'hello there')].map((line) => ({
        ...line,
        body: { ...line.body, model: 'gpt-3.5-turbo-0613' },
      })),
      '/v1/chat/completions',
    );
    const state = await untilDone(client, batchId);
    const results = await collect(client.results(state));
    await client.cancel(batchId).catch(() => undefined);
    await client.remove(state);

    const made = calls();
    expect(made.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /openai/files',
      'POST /openai/batches',
      ...Array(3).fill(`GET /openai/batches/${batchId}`),
      `GET /openai/files/${state.outputFileId}/content`,
      `POST /openai/batches/${batchId}/cancel`,
      `DELETE /openai/files/${inputFileId}`,
      `DELETE /openai/files/${state.outputFileId}`,
    ]);
    expect(made.every((request) => request.query === 'api-version=2024-10-21')).toBe(true);
    expect(made.every((request) => request.headers['api-key'] === 'azure-key' && request.headers.authorization === undefined)).toBe(true);
    expect(made[1].body).toMatchObject({ endpoint: '/chat/completions' });
    expect(emulator.batches.batches.get(batchId)?.endpoint).toBe('/chat/completions');
    expect(results).toEqual([
      expect.objectContaining({ customId: 'a', statusCode: 200, body: expect.objectContaining({ model: 'gpt-35-turbo' }) }),
    ]);
  });

  it('asks for a version that has batches when the channel names an older one', async () => {
    const client = azure('');
    await client.poll('batch_unknown').catch(() => undefined);
    expect(calls()[0].query).toBe('api-version=2024-10-21');
    await azure('2025-04-01-preview')
      .poll('batch_unknown')
      .catch(() => undefined);
    expect(calls()[1].query).toBe('api-version=2025-04-01-preview');
  });
});

describe('channel types without a batch API', () => {
  it('have no upstream batch client: the gateway runs their batches', () => {
    expect(upstreamBatchClient({ type: 14, key: '', baseUrl: '', other: '' }, 'sk-ant')).toBeUndefined();
    expect(upstreamBatchClient({ type: 8, key: '', baseUrl: 'http://127.0.0.1:1', other: '' }, 'sk')).toBeUndefined();
    expect(upstreamBatchClient({ type: 9999, key: '', baseUrl: '', other: '' }, 'sk')).toBeUndefined();
  });
});
