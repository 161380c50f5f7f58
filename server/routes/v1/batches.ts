// OpenAI's Batch API, run by the gateway itself (relay/batches/): POST
// /v1/batches reads the caller's input file (purpose "batch"), checks every
// line as OpenAI does and prices each as the relay prices that request, then
// holds the sum of those bounds in the transaction that writes the batch's
// task (kind 'batch') and its lines; a refused file holds nothing. That sum
// is held against the key's, the user's and the member's budgets and caps as
// a video's hold is (over one: the relayed call's 429, nothing held), and
// counts as spent from then on (billing/taskLedger.ts, batchLedger.ts). Every node
// runs queued lines at a low priority (selfRun.ts) and bills each once at the
// batch discount; a batch whose channel is OpenAI or Azure OpenAI runs at the
// vendor's Batch API instead (upstreamRun.ts, its lines held by the batch
// until the vendor's results settle them); the output and error files are read with GET
// /v1/files/{id}/content. GET, list and cancel read the caller's own
// batches: another user's answers 404 as an unknown one does.
// Reference: https://platform.openai.com/docs/api-reference/batch
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestIdOf } from '../../../common/requestId';
import { batchModeFor, batchObject, type BatchSummary } from '../../relay/batches/batchObject';
import { checkInput, type CheckedInput } from '../../relay/batches/input';
import { BATCH_ROUTES } from '../../relay/batches/lineCall';
import { BatchRunner } from '../../relay/batches/selfRun';
import { batchChannelFor } from '../../relay/batches/upstreamChannel';
import type { RelayContext } from '../../relay/context';
import { isRelayError, relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { newBatchRows } from '../../relay/batches/newBatch';
import { holdTask } from '../../relay/tasks/holdTask';
import { cancelBatchTask } from '../../relay/tasks/taskActions';
import { authenticateRelay, type RelayCaller } from '../../relay/tokenAuth';
import { batchLineCounts } from '../../repositories/batchLines';
import { findTask, listTasks, type TaskRow } from '../../repositories/tasks';
import { openOwnedFile } from '../../services/fileStore';
import { configuredFileStore } from '../../services/s3FileStore';

const MAX_LIST_LIMIT = 100;

const isWord = (value: unknown): value is string => typeof value === 'string' && /^[\w-]{1,64}$/.test(value);
const noSuchBatch = (id: string): RelayError => ({ ...relayError(404, `No batch found with id '${id}'.`, 'batch_not_found'), param: 'id' });
const badField = (param: string, message: string): RelayError => ({ ...relayError(400, message, 'invalid_request_error'), param });

/** Each node's runner, by its app's shared context (the tests drive it with runOnce). */
const runners = new WeakMap<object, BatchRunner>();

export function batchRunnerOf(app: FastifyInstance): BatchRunner | undefined {
  return runners.get(app.ctx);
}

interface CreateBody {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata: Record<string, string> | null;
}

/** The create request's fields, checked as OpenAI checks them. */
function createBodyOf(body: unknown): CreateBody | RelayError {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return relayError(400, 'the request body must be a JSON object', 'invalid_json');
  const fields = body as Record<string, unknown>;
  if (!isWord(fields.input_file_id)) return badField('input_file_id', "Missing required parameter: 'input_file_id'.");
  if (typeof fields.endpoint !== 'string' || !BATCH_ROUTES[fields.endpoint])
    return badField('endpoint', `endpoint must be one of ${Object.keys(BATCH_ROUTES).join(', ')}.`);
  if (fields.completion_window !== '24h') return badField('completion_window', "completion_window must be '24h'.");
  const metadata = fields.metadata ?? null;
  if (metadata !== null) {
    const entries = typeof metadata === 'object' && !Array.isArray(metadata) ? Object.entries(metadata) : undefined;
    if (
      !entries ||
      entries.length > 16 ||
      entries.some(([key, value]) => key.length > 64 || typeof value !== 'string' || value.length > 512)
    )
      return badField('metadata', 'metadata is at most 16 string pairs, keys up to 64 characters and values up to 512.');
  }
  return {
    input_file_id: fields.input_file_id,
    endpoint: fields.endpoint,
    completion_window: '24h',
    metadata: metadata as Record<string, string> | null,
  };
}

interface Deps {
  ctx: RelayContext;
  store: ReturnType<typeof configuredFileStore>;
}

async function callerOf({ ctx }: Deps, request: FastifyRequest, reply: FastifyReply): Promise<RelayCaller | undefined> {
  const caller = await authenticateRelay(ctx.db, request, ctx.cache, ctx.ledger);
  if (!isRelayError(caller)) return caller;
  await sendRelayError(reply, caller);
  return undefined;
}

async function ownBatch({ ctx }: Deps, caller: RelayCaller, id: string): Promise<TaskRow | undefined> {
  return isWord(id) ? findTask(ctx.db, Number(caller.user.id), 'batch', id) : undefined;
}

/** The input file's checked lines, or the refusal (nothing held). */
async function inputOf(deps: Deps, caller: RelayCaller, ask: CreateBody): Promise<CheckedInput | RelayError> {
  const opened = await openOwnedFile(deps.ctx.db, deps.store, Number(caller.user.id), ask.input_file_id);
  if (!opened) return { ...relayError(404, `No such File object: ${ask.input_file_id}`, null), param: 'input_file_id' };
  if (opened.file.purpose !== 'batch') {
    opened.content.destroy();
    return badField('input_file_id', `The input file must have purpose 'batch', not '${opened.file.purpose}'.`);
  }
  return checkInput(deps.ctx, caller, ask.endpoint, opened.content);
}

/** POST /v1/batches: the file checked, its bound held with the batch's task and lines in one transaction. */
async function createBatch(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const { ctx } = deps;
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const ask = createBodyOf(request.body);
  if (isRelayError(ask)) return sendRelayError(reply, ask);
  const input = await inputOf(deps, caller, ask);
  if (isRelayError(input)) return sendRelayError(reply, input);
  const channel = await batchChannelFor(ctx, caller, input.model);
  const mode = batchModeFor(channel, ctx.options.bool('BatchUpstreamEnabled'), ask.endpoint);
  const summary: BatchSummary = {
    mode,
    ...(mode === 'upstream' ? { channelId: channel!.id, upstream: { polls: 0, failures: 0, nextPollAt: 0 } } : {}),
    ...ask,
    total: input.lines.length,
    username: caller.user.username,
    tokenName: caller.token.name,
  };
  const { row, writeLines } = newBatchRows(caller, {
    idPrefix: 'batch_',
    idBytes: 16,
    kind: 'batch',
    model: input.model,
    bound: input.bound,
    summary,
    requestId: requestIdOf(request.headers),
    lines: input.lines,
  });
  const refused = await holdTask(ctx, caller, row, writeLines);
  if (refused) return sendRelayError(reply, refused);
  const task = await findTask(ctx.db, row.user_id, 'batch', row.id);
  return batchObject(task!, {});
}

/** POST /v1/batches/{id}/cancel: lines not yet run are dropped and refunded now; lines running finish; the runner closes it. */
async function cancelBatch(deps: Deps, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
  const { db } = deps.ctx;
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const task = await ownBatch(deps, caller, request.params.id);
  if (!task) return sendRelayError(reply, noSuchBatch(request.params.id));
  const current = await cancelBatchTask(db, task);
  if (!current)
    return sendRelayError(reply, relayError(409, `Cannot cancel a batch with status '${task.status}'.`, 'batch_not_cancellable'));
  return batchObject(current, await batchLineCounts(db, current.id));
}

type ListRequest = FastifyRequest<{ Querystring: { limit?: string; after?: string } }>;

/** GET /v1/batches: the caller's batches, newest first, with OpenAI's cursor. */
async function listBatches(deps: Deps, request: ListRequest, reply: FastifyReply) {
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    return sendRelayError(reply, badField('limit', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`));
  const after = request.query.after === undefined ? undefined : await ownBatch(deps, caller, request.query.after);
  if (request.query.after !== undefined && !after)
    return sendRelayError(reply, { ...noSuchBatch(String(request.query.after)), param: 'after' });
  const page = {
    userId: Number(caller.user.id),
    kind: 'batch',
    limit: limit + 1,
    order: 'desc',
    afterSeq: after ? Number(after.seq) : undefined,
  } as const;
  const rows = await listTasks(deps.ctx.db, page);
  const data = [];
  for (const row of rows.slice(0, limit)) data.push(batchObject(row, await batchLineCounts(deps.ctx.db, row.id)));
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
}

export function batchRoutes(app: FastifyInstance, options: { ctx: RelayContext }): Promise<void> {
  const { config, db, options: settings } = app.ctx;
  const store = configuredFileStore(config, db, app.log);
  const deps: Deps = { ctx: options.ctx, store };
  const runner = new BatchRunner({ ctx: options.ctx, db, options: settings, store, log: app.log, settings: config.batches });
  runners.set(app.ctx, runner);
  app.addHook('onReady', () => {
    runner.start();
    return Promise.resolve();
  });
  app.addHook('preClose', () => runner.stop());
  app.addHook('onClose', async () => store.close?.());

  app.post('/v1/batches', (request, reply) => createBatch(deps, request, reply));
  app.get('/v1/batches', (request: ListRequest, reply) => listBatches(deps, request, reply));
  app.get<{ Params: { id: string } }>('/v1/batches/:id', async (request, reply) => {
    const caller = await callerOf(deps, request, reply);
    if (!caller) return reply;
    const task = await ownBatch(deps, caller, request.params.id);
    return task ? batchObject(task, await batchLineCounts(db, task.id)) : sendRelayError(reply, noSuchBatch(request.params.id));
  });
  app.post<{ Params: { id: string } }>('/v1/batches/:id/cancel', (request, reply) => cancelBatch(deps, request, reply));
  return Promise.resolve();
}
