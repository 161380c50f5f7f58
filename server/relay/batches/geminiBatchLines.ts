// The lines of a batch run at Gemini's Batch API, translated with the relay's
// own Gemini codec: an OpenAI chat body becomes the GenerateContentRequest
// the relay would send (keyed by the line's custom_id), and each response
// Google returns (inlined in the batch, or a line of its responses file)
// becomes the chat.completion the relay would answer, with its usage. The
// batch itself (a long-running Operation whose metadata is the
// GenerateContentBatch) becomes the gateway's view of an upstream batch.
// REST states are BATCH_STATE_*; Google's SDKs rename them JOB_STATE_*
// (python-genai _transformers.t_job_state), and both are read here.
// References: https://ai.google.dev/api/batch-mode
// https://ai.google.dev/gemini-api/docs/batch-mode
import { randomBytes } from 'node:crypto';
import { geminiAdaptor } from '../../protocols/upstream/gemini';
import { isUpstreamFailure, type AdaptorCall, type ChannelConfig, type ChatRequest } from '../../protocols/types';
import type { UpstreamBatchLine, UpstreamBatchResult, UpstreamBatchState, UpstreamBatchStatus } from './upstream';
import { UpstreamBatchError } from './upstreamHttp';
import { usageOf } from './upstreamLines';

const STATES: Record<string, UpstreamBatchStatus> = {
  UNSPECIFIED: 'validating',
  QUEUED: 'validating',
  PENDING: 'validating',
  RUNNING: 'in_progress',
  UPDATING: 'in_progress',
  PAUSED: 'in_progress',
  SUCCEEDED: 'completed',
  // some lines failed: their errors are in the output, each settles as it is
  PARTIALLY_SUCCEEDED: 'completed',
  FAILED: 'failed',
  CANCELLING: 'cancelling',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired',
};

/** google.rpc.Code: its name, and the HTTP status Google's REST API answers it with. */
const RPC_CODES: Record<number, [string, number]> = {
  1: ['CANCELLED', 499],
  2: ['UNKNOWN', 500],
  3: ['INVALID_ARGUMENT', 400],
  4: ['DEADLINE_EXCEEDED', 504],
  5: ['NOT_FOUND', 404],
  6: ['ALREADY_EXISTS', 409],
  7: ['PERMISSION_DENIED', 403],
  8: ['RESOURCE_EXHAUSTED', 429],
  9: ['FAILED_PRECONDITION', 400],
  10: ['ABORTED', 409],
  11: ['OUT_OF_RANGE', 400],
  12: ['UNIMPLEMENTED', 501],
  13: ['INTERNAL', 500],
  14: ['UNAVAILABLE', 503],
  15: ['DATA_LOSS', 500],
  16: ['UNAUTHENTICATED', 401],
};

const record = (value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
/** An int64 count: proto JSON writes it as a string. */
const count = (value: unknown) => {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? number : 0;
};

const malformed = (message: string) => new UpstreamBatchError(message, { code: 'upstream_malformed', retryable: true });

/** The call the codec encodes and decodes for. */
function codecCall(model: string, channel?: ChannelConfig): AdaptorCall {
  return {
    channel,
    operation: 'chat',
    model: model.replace(/^models\//, ''),
    stream: false,
    responseId: `chatcmpl-${randomBytes(12).toString('hex')}`,
    now: Math.floor(Date.now() / 1000),
  };
}

/** A line's chat body as the GenerateContentRequest the relay would send (its model already mapped for the channel). */
export function geminiRequestOf(line: UpstreamBatchLine, channel: ChannelConfig): Record<string, unknown> {
  const { stream: _stream, stream_options: _options, ...body } = line.body;
  let encoded: string;
  try {
    encoded = geminiAdaptor.encodeChat(body as unknown as ChatRequest, codecCall(String(body.model), channel));
  } catch (error) {
    throw new UpstreamBatchError(`request ${line.customId} cannot be sent to Gemini: ${(error as Error).message}`, {
      code: 'invalid_batch_input',
      retryable: false,
    });
  }
  return JSON.parse(encoded) as Record<string, unknown>;
}

/** The model resource a batch is created under: `models/<model>`, each segment escaped. */
export function modelPath(model: string): string {
  const name = /^(models|tunedModels)\//.test(model) ? model : `models/${model}`;
  return name.split('/').map(encodeURIComponent).join('/');
}

/** A resource name (`batches/…`, `files/…`) as a path, each segment escaped. */
export const resourcePath = (name: string) => name.split('/').map(encodeURIComponent).join('/');

/** One response of the batch (inlined, or a line of the responses file) as the relay would answer it. */
export function geminiResult(key: string, response: unknown, error: unknown, model: string): UpstreamBatchResult {
  const failed = record(error);
  if (failed || !record(response)) {
    const code = count(failed?.code);
    const statusCode = RPC_CODES[code]?.[1] ?? (code >= 400 && code < 600 ? code : 500);
    const status = text(failed?.status) ?? RPC_CODES[code]?.[0] ?? 'upstream_error';
    const message = text(failed?.message) ?? 'Gemini returned no response for this request.';
    return {
      customId: key,
      statusCode,
      body: { error: { message, type: 'upstream_error', param: null, code: status } },
      error: { code: status, message },
    };
  }
  const decoded = geminiAdaptor.decodeChat(JSON.stringify(response), codecCall(model));
  if (isUpstreamFailure(decoded)) {
    return {
      customId: key,
      statusCode: decoded.status,
      body: { error: { message: decoded.message, type: 'upstream_error', param: null, code: decoded.code ?? null } },
      error: { code: String(decoded.code ?? 'upstream_error'), message: decoded.message },
    };
  }
  const usage = usageOf(decoded);
  return { customId: key, statusCode: 200, body: decoded, ...(usage ? { usage } : {}) };
}

/** A line of the responses file ({key, response} or {key, error}); undefined for a line that is no such object. */
export function geminiFileResult(line: string, model: string): UpstreamBatchResult | undefined {
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = record(JSON.parse(line));
  } catch {
    return undefined;
  }
  const key = text(parsed?.key) ?? text(record(parsed?.metadata)?.key);
  if (!parsed || !key) return undefined;
  return geminiResult(key, parsed.response, parsed.error, model);
}

/** The responses inlined in a batch's output ({inlinedResponses: {inlinedResponses: [{response | error, metadata}]}}). */
function inlinedResults(output: Record<string, unknown>, model: string): UpstreamBatchResult[] {
  const inlined = record(output.inlinedResponses)?.inlinedResponses;
  const results: UpstreamBatchResult[] = [];
  for (const item of Array.isArray(inlined) ? inlined : []) {
    const entry = record(item);
    const key = text(record(entry?.metadata)?.key);
    if (entry && key) results.push(geminiResult(key, entry.response, entry.error, model));
  }
  return results;
}

/** The batch (the Operation's metadata: a GenerateContentBatch) as the gateway keeps it. */
export function geminiStateOf(operation: Record<string, unknown>): UpstreamBatchState {
  const batch = record(operation.metadata) ?? operation;
  const state = text(batch.state)?.replace(/^(BATCH|JOB)_STATE_/, '');
  const status = state === undefined ? undefined : STATES[state];
  if (!status) throw malformed(`Gemini's batch has an unknown state ${JSON.stringify(batch.state)}`);
  const stats = record(batch.batchStats) ?? {};
  const output = record(batch.output) ?? record(operation.response) ?? {};
  const inlineResults = inlinedResults(output, text(batch.model) ?? '');
  const responsesFile = text(output.responsesFile);
  const error = operation.error ?? undefined;
  return {
    status,
    counts: {
      total: count(stats.requestCount),
      completed: count(stats.successfulRequestCount),
      failed: count(stats.failedRequestCount),
    },
    ...(responsesFile ? { outputFileId: responsesFile } : {}),
    ...(inlineResults.length > 0 ? { inlineResults } : {}),
    ...(error !== null && error !== undefined ? { errors: error } : {}),
  };
}
