// OpenAI's Batch API, run by the gateway itself (relay/batches/): POST
// /v1/batches reads the caller's input file (purpose "batch"), checks every
// line as OpenAI does and prices each as the relay prices that request, then
// holds the sum of those bounds in the transaction that writes the batch's
// task (kind 'batch') and its lines; a refused file holds nothing. Every node
// runs queued lines at a low priority (selfRun.ts) and bills each once at the
// batch discount; the output and error files are read with GET
// /v1/files/{id}/content. GET, list and cancel read the caller's own
// batches: another user's answers 404 as an unknown one does.
// Reference: https://platform.openai.com/docs/api-reference/batch
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestIdOf } from '../../../common/requestId';
import { insufficientQuota } from '../../billing/accounting';
import { dropBatchLines } from '../../billing/batchLedger';
import { submitTask } from '../../billing/taskLedger';
import { batchModeFor, batchObject, batchSummaryOf, type BatchSummary } from '../../relay/batches/batchObject';
import { checkInput, type CheckedInput } from '../../relay/batches/input';
import { BATCH_ROUTES } from '../../relay/batches/lineCall';
import { BatchRunner } from '../../relay/batches/selfRun';
import type { RelayContext } from '../../relay/context';
import { isRelayError, relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { authenticateRelay, type RelayCaller } from '../../relay/tokenAuth';
import { batchLineCounts, insertBatchLines, moveBatch } from '../../repositories/batchLines';
import { findTask, listTasks, type TaskRow } from '../../repositories/tasks';
import { openOwnedFile } from '../../services/fileStore';
import { configuredFileStore } from '../../services/s3FileStore';

const MAX_LIST_LIMIT = 100;
const WINDOW_SECONDS = 24 * 3600;
/** A gateway-run batch is never the task poller's: its next poll never comes. */
const NEVER = Number.MAX_SAFE_INTEGER;

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

/** Whether the key, its owner or the member holding it has a budget or a spending cap (a batch line's charge counts in none yet). */
function underBudget({ token, user, member }: RelayCaller): boolean {
  const budgeted = (row: { budget_period: string; budget_quota: number | string }) =>
    row.budget_period !== '' && Number(row.budget_quota) > 0;
  return budgeted(token) || budgeted(user) || (member !== undefined && (Number(member.cap_quota) > 0 || member.cap_period !== ''));
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
  if (underBudget(caller))
    return sendRelayError(
      reply,
      relayError(
        403,
        'batches are not counted against budgets or spending caps yet, and this key, its owner or its member has one',
        'batch_budget_unsupported',
        'permission_error',
      ),
    );
  const input = await inputOf(deps, caller, ask);
  if (isRelayError(input)) return sendRelayError(reply, input);
  const now = Math.floor(Date.now() / 1000);
  const summary: BatchSummary = {
    mode: batchModeFor(ask.endpoint, input.model),
    ...ask,
    total: input.lines.length,
    username: caller.user.username,
    tokenName: caller.token.name,
  };
  const row = {
    id: `batch_${randomBytes(16).toString('hex')}`,
    kind: 'batch',
    user_id: Number(caller.user.id),
    token_id: Number(caller.token.id),
    model: input.model,
    status: 'validating',
    held_quota: input.bound,
    request: JSON.stringify(summary),
    request_id: requestIdOf(request.headers),
    next_poll_at: NEVER,
    created_at: now,
    updated_at: now,
    expires_at: now + WINDOW_SECONDS,
  };
  const lines = input.lines.map((line) => ({
    task_id: row.id,
    line: line.line,
    custom_id: line.customId,
    body: line.body,
    bound: line.bound,
    status: 'queued',
    updated_at: now,
  }));
  const payer = { userId: row.user_id, tokenId: row.token_id, limitedToken: Number(caller.token.unlimited_quota) !== 1 };
  const taken = await submitTask(ctx.db, payer, row, undefined, (transaction) => insertBatchLines(transaction, lines));
  if (!taken.ok) return sendRelayError(reply, await insufficientQuota(ctx, { ...payer, amount: row.held_quota }, taken.reason));
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
  if (task.status === 'validating' || task.status === 'in_progress') {
    const now = Math.floor(Date.now() / 1000);
    const summary = { ...batchSummaryOf(task), cancelling_at: now };
    if (await moveBatch(db, task.id, [task.status], 'cancelling', JSON.stringify(summary), now))
      await dropBatchLines(db, task, 'cancelled', randomBytes(12).toString('hex'));
  } else if (task.status !== 'cancelling' && task.status !== 'cancelled') {
    return sendRelayError(reply, relayError(409, `Cannot cancel a batch with status '${task.status}'.`, 'batch_not_cancellable'));
  }
  const current = (await findTask(db, Number(caller.user.id), 'batch', task.id))!;
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
