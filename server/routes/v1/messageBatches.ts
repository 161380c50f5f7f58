// Anthropic's Message Batches API, run by the gateway itself on the batch
// machinery /v1/batches uses (relay/batches/): POST /v1/messages/batches
// checks and prices every request as the Messages route would, then holds the
// sum of their bounds (against budgets and caps too, as /v1/batches does) in
// the transaction that writes the batch's task (kind 'message_batch') and its
// lines; a refused batch holds nothing. The shared runner (selfRun.ts) runs
// each line through the Messages route on whatever channel serves its model
// and bills it once at the batch discount; cancel refunds the lines not yet
// run. GET, list, cancel, results and DELETE read the caller's own batches:
// another user's answers 404 as an unknown one does. Authentication and
// errors are the Messages route's (x-api-key or Bearer; Anthropic's error
// object).
// Reference: https://docs.anthropic.com/en/api/creating-message-batches
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestIdOf } from '../../../common/requestId';
import type { BatchSummary } from '../../relay/batches/batchObject';
import {
  checkRequests,
  ENDED,
  isEnded,
  MAX_MESSAGE_BATCH_BYTES,
  MESSAGE_BATCH_KIND,
  MESSAGES_ENDPOINT,
  messageBatchObject,
  modelColumnOf,
  resultLine,
} from '../../relay/batches/messageBatch';
import type { RelayContext } from '../../relay/context';
import { isRelayError, relayError, type RelayError } from '../../relay/errors';
import { newBatchRows } from '../../relay/batches/newBatch';
import { holdTask } from '../../relay/tasks/holdTask';
import { cancelBatchTask } from '../../relay/tasks/taskActions';
import { authenticateRelay, type RelayCaller } from '../../relay/tokenAuth';
import { anthropicMessages } from '../../protocols/inbound';
import { batchLineCounts, batchResults } from '../../repositories/batchLines';
import { deleteEndedMessageBatch } from '../../repositories/messageBatches';
import { findTask, listTasks, type TaskRow } from '../../repositories/tasks';

const MAX_LIST_LIMIT = 1000;
/** Lines read per query as the results are written. */
const RESULT_PAGE = 500;

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type ListRequest = FastifyRequest<{ Querystring: { limit?: string; before_id?: string; after_id?: string } }>;

const isId = (value: unknown): value is string => typeof value === 'string' && /^msgbatch_[\w-]{1,60}$/.test(value);
const nowSeconds = () => Math.floor(Date.now() / 1000);
const notFound = (id: string) => relayError(404, `No message batch found with id '${id}'.`, 'not_found_error', 'not_found_error');

function sendError(reply: FastifyReply, error: RelayError) {
  return reply.code(error.status).header('content-type', anthropicMessages.contentType).send(anthropicMessages.errorBody(error));
}

const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

async function callerOf(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply): Promise<RelayCaller | undefined> {
  const headers = { authorization: anthropicMessages.authorization(request.headers) };
  const caller = await authenticateRelay(ctx.db, { ip: request.ip, headers }, ctx.cache, ctx.ledger);
  if (!isRelayError(caller)) return caller;
  await sendError(reply, caller);
  return undefined;
}

/** The caller's own batch (a deleted one is gone), or undefined. */
async function ownBatch(ctx: RelayContext, caller: RelayCaller, id: unknown): Promise<TaskRow | undefined> {
  if (!isId(id)) return undefined;
  const task = await findTask(ctx.db, Number(caller.user.id), MESSAGE_BATCH_KIND, id);
  return task && task.status !== 'deleted' ? task : undefined;
}

async function objectOf(ctx: RelayContext, task: TaskRow, request: FastifyRequest) {
  return messageBatchObject(task, await batchLineCounts(ctx.db, task.id), baseUrlOf(request));
}

/** POST /v1/messages/batches: every request checked and priced, their bounds held with the task and lines in one transaction. */
async function createBatch(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const checked = checkRequests(ctx, caller, request.body);
  if (isRelayError(checked)) return sendError(reply, checked);
  const summary: BatchSummary = {
    mode: 'self',
    endpoint: MESSAGES_ENDPOINT,
    input_file_id: '',
    completion_window: '24h',
    metadata: null,
    total: checked.lines.length,
    username: caller.user.username,
    tokenName: caller.token.name,
  };
  const { row, writeLines } = newBatchRows(caller, {
    idPrefix: 'msgbatch_',
    idBytes: 12,
    kind: MESSAGE_BATCH_KIND,
    model: modelColumnOf(checked.models),
    bound: checked.bound,
    summary,
    requestId: requestIdOf(request.headers),
    lines: checked.lines,
  });
  const refused = await holdTask(ctx, caller, row, writeLines);
  if (refused) return sendError(reply, refused);
  return objectOf(ctx, (await findTask(ctx.db, row.user_id, MESSAGE_BATCH_KIND, row.id))!, request);
}

/** POST /v1/messages/batches/{id}/cancel: lines not yet run dropped and refunded now; lines running finish; the runner ends it. */
async function cancelBatch(ctx: RelayContext, request: IdRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const task = await ownBatch(ctx, caller, request.params.id);
  if (!task) return sendError(reply, notFound(request.params.id));
  await cancelBatchTask(ctx.db, task);
  return objectOf(ctx, (await ownBatch(ctx, caller, task.id))!, request);
}

/** GET /v1/messages/batches: newest first, Anthropic's cursors (after_id older, before_id newer). */
async function listBatches(ctx: RelayContext, request: ListRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const { limit: limitText, before_id: beforeId, after_id: afterId } = request.query;
  const limit = limitText === undefined ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    return sendError(reply, relayError(400, `limit: must be an integer from 1 to ${MAX_LIST_LIMIT}`, null));
  if (beforeId !== undefined && afterId !== undefined)
    return sendError(reply, relayError(400, 'before_id and after_id cannot be given together', null));
  const cursorId = beforeId ?? afterId;
  const cursor = cursorId === undefined ? undefined : await ownBatch(ctx, caller, cursorId);
  if (cursorId !== undefined && !cursor) return sendError(reply, notFound(String(cursorId)));
  const backwards = beforeId !== undefined;
  const rows = await listTasks(ctx.db, {
    userId: Number(caller.user.id),
    kind: MESSAGE_BATCH_KIND,
    limit: limit + 1,
    order: backwards ? 'asc' : 'desc',
    afterSeq: cursor ? Number(cursor.seq) : undefined,
  });
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  const data = [];
  for (const row of page) data.push(await objectOf(ctx, row, request));
  return { data, has_more: rows.length > limit, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/** The results file's lines, in the requests' order. */
async function* resultsOf(ctx: RelayContext, taskId: string): AsyncGenerator<string> {
  let after = -1;
  for (;;) {
    const rows = await batchResults(ctx.db, taskId, after, RESULT_PAGE);
    if (rows.length === 0) return;
    after = Number(rows.at(-1)!.line);
    yield `${rows.map(resultLine).join('\n')}\n`;
  }
}

/** GET /v1/messages/batches/{id}/results: JSONL, once the batch has ended. */
async function batchResultsRoute(ctx: RelayContext, request: IdRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const task = await ownBatch(ctx, caller, request.params.id);
  if (!task) return sendError(reply, notFound(request.params.id));
  if (!isEnded(task))
    return sendError(reply, relayError(400, `Message batch ${task.id} has not ended yet: its results are not ready.`, null));
  return reply.header('content-type', 'application/binary').send(Readable.from(resultsOf(ctx, task.id)));
}

/** DELETE /v1/messages/batches/{id}: only an ended batch (cancel one still processing first). */
async function deleteBatch(ctx: RelayContext, request: IdRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const task = await ownBatch(ctx, caller, request.params.id);
  if (!task) return sendError(reply, notFound(request.params.id));
  const deleted =
    isEnded(task) && (await deleteEndedMessageBatch(ctx.db, { userId: Number(caller.user.id), id: task.id }, ENDED, nowSeconds()));
  if (!deleted)
    return sendError(reply, relayError(400, `Message batch ${task.id} is still processing: cancel it and wait for it to end first.`, null));
  return { id: task.id, type: 'message_batch_deleted' };
}

export function messageBatchRoutes(app: FastifyInstance, options: { ctx: RelayContext }): Promise<void> {
  const { ctx } = options;
  app.post('/v1/messages/batches', { bodyLimit: MAX_MESSAGE_BATCH_BYTES }, (request, reply) => createBatch(ctx, request, reply));
  app.get('/v1/messages/batches', (request: ListRequest, reply) => listBatches(ctx, request, reply));
  app.get('/v1/messages/batches/:id', async (request: IdRequest, reply) => {
    const caller = await callerOf(ctx, request, reply);
    if (!caller) return reply;
    const task = await ownBatch(ctx, caller, request.params.id);
    return task ? objectOf(ctx, task, request) : sendError(reply, notFound(request.params.id));
  });
  app.post('/v1/messages/batches/:id/cancel', (request: IdRequest, reply) => cancelBatch(ctx, request, reply));
  app.get('/v1/messages/batches/:id/results', (request: IdRequest, reply) => batchResultsRoute(ctx, request, reply));
  app.delete('/v1/messages/batches/:id', (request: IdRequest, reply) => deleteBatch(ctx, request, reply));
  return Promise.resolve();
}
