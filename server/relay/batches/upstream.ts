// A batch run at the vendor, for the channel types whose vendor has a Batch
// API (OpenAI, Azure OpenAI; Gemini's is geminiBatch.ts): upload the lines as a JSONL file (purpose
// `batch`), create the batch, poll it, read its output and error files line
// by line, cancel it, and delete its files when the gateway is done with
// them. The lines' bodies come already mapped for the channel; Azure's
// differences (paths under /openai with an api-version, the `api-key` header,
// endpoints without /v1, the model as its deployment) are the relay's own
// (server/protocols/upstream/azure.ts), read through upstreamHttp.ts.
// References: https://platform.openai.com/docs/api-reference/batch
// https://platform.openai.com/docs/api-reference/files
// https://learn.microsoft.com/azure/ai-services/openai/how-to/batch
import type { ChannelConfig } from '../../protocols/types';
import { geminiBatchClient } from './geminiBatch';
import { batchVendorOf, callVendor, callVendorJson, UpstreamBatchError, type BatchVendor, type CallOptions } from './upstreamHttp';
import { jsonlLines, resultOfLine, uploadBody } from './upstreamLines';

export { UpstreamBatchError } from './upstreamHttp';

/** One request of a batch; its body already mapped for the channel (model after mapping). */
export interface UpstreamBatchLine {
  customId: string;
  url: string;
  body: Record<string, unknown>;
}

export interface UpstreamBatchUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** One line of the output or error file. `statusCode` is 0 for a line that got no HTTP answer (expired, cancelled). */
export interface UpstreamBatchResult {
  customId: string;
  statusCode: number;
  body: unknown;
  usage?: UpstreamBatchUsage;
  error?: { code: string; message: string };
}

export type UpstreamBatchStatus =
  'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

export interface UpstreamBatchState {
  status: UpstreamBatchStatus;
  counts: { total: number; completed: number; failed: number };
  outputFileId?: string;
  errorFileId?: string;
  /** The batch's input file, so that remove() can delete it too. */
  inputFileId?: string;
  errors?: unknown;
  /** Results the vendor answered inside the batch itself (Gemini's inlined responses), read before any file's. */
  inlineResults?: UpstreamBatchResult[];
}

export interface UpstreamBatchClient {
  /** The vendor's batch and its uploaded input file ('' when the lines went inline in the batch: Gemini's smaller batches). */
  submit(
    lines: AsyncIterable<UpstreamBatchLine> | UpstreamBatchLine[],
    endpoint: string,
  ): Promise<{ batchId: string; inputFileId: string }>;
  /** Throws an UpstreamBatchError marked retryable on a network failure, a timeout, a 5xx or a 429. */
  poll(batchId: string): Promise<UpstreamBatchState>;
  /** The output file's lines, then the error file's, streamed line by line. */
  results(state: UpstreamBatchState): AsyncIterable<UpstreamBatchResult>;
  cancel(batchId: string): Promise<void>;
  /** Deletes the uploaded input and the output and error files upstream (a file already gone is no failure). */
  remove(state: UpstreamBatchState): Promise<void>;
}

const STATUSES: ReadonlySet<string> = new Set<UpstreamBatchStatus>([
  'validating',
  'in_progress',
  'finalizing',
  'completed',
  'failed',
  'expired',
  'cancelling',
  'cancelled',
]);

const DEFAULT_TIMEOUT_MS = 60_000;

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
const fileIdPath = (id: string) => `/files/${encodeURIComponent(id)}`;
const batchPath = (id: string) => `/batches/${encodeURIComponent(id)}`;

/** The batch object as the gateway keeps it. */
export function batchStateOf(batch: Record<string, unknown>): UpstreamBatchState {
  if (typeof batch.status !== 'string' || !STATUSES.has(batch.status))
    throw new UpstreamBatchError(`the vendor's batch has an unknown status ${JSON.stringify(batch.status)}`, {
      code: 'upstream_malformed',
      retryable: true,
    });
  const counts = (batch.request_counts ?? {}) as Record<string, unknown>;
  const errors = batch.errors ?? undefined;
  return {
    status: batch.status as UpstreamBatchStatus,
    counts: { total: count(counts.total), completed: count(counts.completed), failed: count(counts.failed) },
    ...(text(batch.output_file_id) ? { outputFileId: text(batch.output_file_id) } : {}),
    ...(text(batch.error_file_id) ? { errorFileId: text(batch.error_file_id) } : {}),
    ...(text(batch.input_file_id) ? { inputFileId: text(batch.input_file_id) } : {}),
    ...(errors !== null && errors !== undefined ? { errors } : {}),
  };
}

async function uploadInput(
  vendor: BatchVendor,
  lines: AsyncIterable<UpstreamBatchLine> | UpstreamBatchLine[],
  options: CallOptions,
): Promise<string> {
  const upload = uploadBody(lines, vendor);
  let file: Record<string, unknown>;
  try {
    file = await callVendorJson(
      vendor,
      { method: 'POST', path: '/files', headers: { 'content-type': upload.contentType }, body: upload.body },
      options,
    );
  } catch (error) {
    // a source that failed is the caller's problem, not the vendor's
    throw upload.sourceError() ?? error;
  }
  const id = text(file.id);
  if (!id)
    throw new UpstreamBatchError('the vendor answered the upload without a file id', { code: 'upstream_malformed', retryable: true });
  return id;
}

async function deleteFile(vendor: BatchVendor, id: string, options: CallOptions): Promise<void> {
  try {
    await callVendor(vendor, { method: 'DELETE', path: fileIdPath(id), headers: { accept: 'application/json' } }, options);
  } catch (error) {
    if (error instanceof UpstreamBatchError && error.status === 404) return;
    throw error;
  }
}

async function* fileResults(vendor: BatchVendor, id: string, options: CallOptions): AsyncGenerator<UpstreamBatchResult> {
  const { response, idle } = await callVendor(vendor, { method: 'GET', path: `${fileIdPath(id)}/content`, keepTimer: true }, options);
  try {
    if (!response.body) return;
    for await (const line of jsonlLines(response.body, idle.touch)) {
      const result = resultOfLine(line);
      if (result) yield result;
    }
  } catch (error) {
    if (error instanceof UpstreamBatchError) throw error;
    throw new UpstreamBatchError(`the vendor's file ${id} broke off: ${(error as Error).message}`, {
      code: 'upstream_unreachable',
      retryable: true,
    });
  } finally {
    idle.stop();
  }
}

function clientFor(vendor: BatchVendor, options: CallOptions): UpstreamBatchClient {
  return {
    async submit(lines, endpoint) {
      const inputFileId = await uploadInput(vendor, lines, options);
      try {
        const batch = await callVendorJson(
          vendor,
          {
            method: 'POST',
            path: '/batches',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ input_file_id: inputFileId, endpoint: vendor.endpoint(endpoint), completion_window: '24h' }),
          },
          options,
        );
        const batchId = text(batch.id);
        if (!batchId)
          throw new UpstreamBatchError('the vendor answered the batch without an id', { code: 'upstream_malformed', retryable: true });
        return { batchId, inputFileId };
      } catch (error) {
        // no batch holds the file: it goes now, not with the batch
        await deleteFile(vendor, inputFileId, options).catch(() => undefined);
        throw error;
      }
    },

    async poll(batchId) {
      return batchStateOf(await callVendorJson(vendor, { method: 'GET', path: batchPath(batchId) }, options));
    },

    async *results(state) {
      for (const id of [state.outputFileId, state.errorFileId]) {
        if (id) yield* fileResults(vendor, id, options);
      }
    },

    async cancel(batchId) {
      await callVendorJson(vendor, { method: 'POST', path: `${batchPath(batchId)}/cancel` }, options);
    },

    async remove(state) {
      for (const id of new Set([state.inputFileId, state.outputFileId, state.errorFileId])) {
        if (id) await deleteFile(vendor, id, options);
      }
    },
  };
}

/**
 * The Batch API client of a channel, with the key to call it with; undefined
 * for a channel type whose vendor has no batch API (the gateway runs those
 * batches itself).
 */
export function upstreamBatchClient(
  channel: ChannelConfig,
  key: string,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): UpstreamBatchClient | undefined {
  const vendor = batchVendorOf({ ...channel, key });
  if (!vendor) return undefined;
  const callOptions = { fetch: options.fetch ?? fetch, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  return vendor.kind === 'gemini' ? geminiBatchClient(vendor, { ...channel, key }, callOptions) : clientFor(vendor, callOptions);
}
