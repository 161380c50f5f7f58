// Anthropic's Message Batches on the gateway's own batch machinery: the
// requests come inline ({custom_id, params}, params a Messages body, models
// may differ), each priced as the relay prices that Messages call
// (lineCall.ts priceLine, route '/v1/messages', so a line runs on whatever
// channel serves its model, translated when it is not Anthropic's); the
// batch is a task of kind 'message_batch' whose lines the shared runner
// (selfRun.ts) runs, bills and finishes as an OpenAI batch's. Its status is
// kept in OpenAI's words (tasks.status) and shown in Anthropic's here; its
// results are read from its lines, no files written.
// Reference: https://docs.anthropic.com/en/api/creating-message-batches,
// https://docs.anthropic.com/en/api/retrieving-message-batch-results
import { anthropicMessages } from '../../protocols/inbound';
import type { RelayContext } from '../context';
import { isRelayError, relayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';
import type { BatchLineRow } from '../../repositories/batchLines';
import type { TaskRow } from '../../repositories/tasks';
import { batchSummaryOf, type BatchSummary } from './batchObject';
import type { InputLine } from './input';
import { priceLine } from './lineCall';

/** Anthropic's limits: requests a batch, bytes a create request. */
export const MAX_MESSAGE_BATCH_REQUESTS = 100_000;
export const MAX_MESSAGE_BATCH_BYTES = 256 * 1024 * 1024;
export const MESSAGE_BATCH_KIND = 'message_batch';
/** The route every line of a Message Batch runs through. */
export const MESSAGES_ENDPOINT = '/v1/messages';

/** The statuses (OpenAI's, in tasks.status) of a batch that has ended. */
export const ENDED = ['completed', 'failed', 'expired', 'cancelled'] as const;

export const isEnded = (task: Pick<TaskRow, 'status'>): boolean => (ENDED as readonly string[]).includes(task.status);

export interface CheckedRequests {
  lines: InputLine[];
  /** The models named, in order of first use, for the task's model column. */
  models: string[];
  bound: number;
}

const badRequest = (index: number, message: string): RelayError =>
  relayError(400, `requests.${index}: ${message}`, 'invalid_request_error', 'invalid_request_error');

/** One request's custom_id and params, or why it is refused. */
function requestOf(value: unknown, index: number, seen: Set<string>): { customId: string; params: Record<string, unknown> } | RelayError {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return badRequest(index, 'must be an object');
  const { custom_id: customId, params } = value as Record<string, unknown>;
  if (typeof customId !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(customId))
    return badRequest(index, 'custom_id must be 1 to 64 letters, digits, hyphens or underscores');
  if (seen.has(customId)) return badRequest(index, `custom_id "${customId}" is used by an earlier request; each must be unique`);
  if (!params || typeof params !== 'object' || Array.isArray(params)) return badRequest(index, 'params: Field required');
  const fields = params as Record<string, unknown>;
  if (typeof fields.model !== 'string' || fields.model === '') return badRequest(index, 'params.model: Field required');
  if (fields.stream === true) return badRequest(index, 'params.stream: streaming is not supported in a batch');
  return { customId, params: fields };
}

/** The create request's requests, checked and priced for `caller`: the lines with their bounds, or the refusal (nothing held). */
export function checkRequests(ctx: RelayContext, caller: RelayCaller, body: unknown): CheckedRequests | RelayError {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return relayError(400, 'the request body must be a JSON object', 'invalid_request_error', 'invalid_request_error');
  const requests = (body as Record<string, unknown>).requests;
  if (!Array.isArray(requests) || requests.length === 0)
    return relayError(400, 'requests: must be a non-empty list', 'invalid_request_error', 'invalid_request_error');
  if (requests.length > MAX_MESSAGE_BATCH_REQUESTS)
    return relayError(400, `requests: a batch holds at most ${MAX_MESSAGE_BATCH_REQUESTS} requests`, 'invalid_request_error');
  const seen = new Set<string>();
  const models = new Set<string>();
  const lines: InputLine[] = [];
  let bound = 0;
  for (const [index, value] of requests.entries()) {
    const request = requestOf(value, index, seen);
    if (isRelayError(request)) return request;
    const priced = priceLine(ctx, caller, MESSAGES_ENDPOINT, request.params);
    if (isRelayError(priced)) return { ...priced, message: `requests.${index}: ${priced.message}` };
    seen.add(request.customId);
    models.add(request.params.model as string);
    lines.push({ line: index, customId: request.customId, body: JSON.stringify(request.params), bound: priced.bound });
    bound += priced.bound;
  }
  return { lines, models: [...models], bound };
}

/** The task's model column: the one model, or the models named, cut to the column's width. */
export const modelColumnOf = (models: readonly string[]): string => models.join(',').slice(0, 255);

const iso = (seconds: number | null | undefined) =>
  seconds === null || seconds === undefined ? null : new Date(seconds * 1000).toISOString();

/** Anthropic's processing_status of a batch's status. */
function processingStatusOf(status: string): 'in_progress' | 'canceling' | 'ended' {
  if (status === 'cancelling') return 'canceling';
  return (ENDED as readonly string[]).includes(status) ? 'ended' : 'in_progress';
}

/** The MessageBatch object, as Anthropic writes it; `baseUrl` makes its results_url. */
export function messageBatchObject(task: TaskRow, counts: Record<string, number>, baseUrl: string) {
  const summary: BatchSummary = batchSummaryOf(task);
  const ended = isEnded(task);
  return {
    id: task.id,
    type: 'message_batch',
    processing_status: processingStatusOf(task.status),
    request_counts: {
      processing: (counts.queued ?? 0) + (counts.running ?? 0),
      succeeded: counts.completed ?? 0,
      errored: counts.failed ?? 0,
      canceled: counts.cancelled ?? 0,
      expired: counts.expired ?? 0,
    },
    ended_at: ended ? iso(summary.completed_at ?? summary.cancelled_at ?? Number(task.updated_at)) : null,
    created_at: iso(Number(task.created_at)),
    expires_at: iso(task.expires_at === null ? null : Number(task.expires_at)),
    archived_at: null,
    cancel_initiated_at: iso(summary.cancelling_at),
    results_url: ended ? `${baseUrl}/v1/messages/batches/${task.id}/results` : null,
  };
}

/** An error object in Anthropic's shape, from whatever error body a line's answer carried (and its status). */
function anthropicError(body: unknown, status: number): unknown {
  const fields = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (fields.type === 'error') return body;
  const inner = (fields.error && typeof fields.error === 'object' ? fields.error : {}) as Record<string, unknown>;
  let message = typeof body === 'string' && body !== '' ? body : 'the request failed';
  if (typeof inner.message === 'string') message = inner.message;
  return JSON.parse(anthropicMessages.errorBody(relayError(status, message))) as unknown;
}

/** One line of the results file: {custom_id, result: {type, message | error}}. */
export function resultLine(row: BatchLineRow): string {
  const stored = row.result ? (JSON.parse(row.result) as { response?: { body?: unknown } | null }) : undefined;
  const body = stored?.response?.body;
  let result: Record<string, unknown>;
  if (row.status === 'completed') result = { type: 'succeeded', message: body };
  else if (row.status === 'failed') result = { type: 'errored', error: anthropicError(body, Number(row.status_code) || 500) };
  else if (row.status === 'expired') result = { type: 'expired' };
  else result = { type: 'canceled' };
  return JSON.stringify({ custom_id: row.custom_id, result });
}
