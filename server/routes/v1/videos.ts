// OpenAI's Videos API (Sora), relayed as asynchronous tasks: POST /v1/videos
// holds seconds x price (VideoPrices, by model and size, times the group
// ratio) in the transaction that writes the task, hands the request to a
// channel that serves videos (dispatch, with its retries) and answers with
// the gateway's own id; the task poller (relay/tasks/) follows the video and
// settles it once: the charge with one consume log that names the task, or
// all of it back on a failure, a timeout or a deletion. The hold counts
// against the key's, the user's and a member's budgets and caps as a relayed
// call's does (refused with the same 429s), and as spent until the settlement
// replaces it by the charge (billing/taskLedger.ts). GET, list, content
// (streamed through, Range and all) and DELETE read the caller's own tasks:
// another user's video answers 404 as an unknown one does.
// Reference: https://platform.openai.com/docs/api-reference/videos
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestIdOf } from '../../../common/requestId';
import { settleTask } from '../../billing/taskLedger';
import { videoPrice, videoQuota } from '../../billing/videoPrices';
import type { RelayContext } from '../../relay/context';
import { isRelayError, relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { findMultipartField, multipartBoundary, replaceMultipartField } from '../../relay/multipart';
import { authenticateRelay, type RelayCaller } from '../../relay/tokenAuth';
import { DisconnectSignal } from '../../relay/upstream';
import { findTask, listTasks, recordSubmission, type TaskRow } from '../../repositories/tasks';
import { holdTask } from '../../relay/tasks/holdTask';
import type { TaskPollSettings } from '../../relay/tasks/poller';
import type { FileStore } from '../../services/fileStore';
import { appFileStore } from '../../services/s3FileStore';
import { deleteVideoTask, readVideoContent } from '../../relay/tasks/taskActions';
import { videoObject, type VideoSummary } from '../../relay/tasks/videos';

const DEFAULT_MODEL = 'sora-2';
const DEFAULT_SECONDS = 4;
const DEFAULT_SIZE = '720x1280';
const MAX_SECONDS = 60;
const MAX_LIST_LIMIT = 100;

/** What a create request asks for, from its JSON or multipart body. */
interface VideoAsk {
  model: string;
  seconds: number;
  size: string;
}

const noSuchVideo = (id: string): RelayError => ({ ...relayError(404, `No video found with id '${id}'.`, 'video_not_found'), param: 'id' });
const isWord = (value: unknown): value is string => typeof value === 'string' && /^[\w-]{1,64}$/.test(value);

/** A field of the body: JSON's value, or a multipart text part's. */
function fieldOf(body: unknown, contentType: string | undefined, name: string): unknown {
  if (Buffer.isBuffer(body)) {
    const boundary = multipartBoundary(contentType);
    return boundary ? findMultipartField(body, boundary, name)?.value : undefined;
  }
  return (body as Record<string, unknown>)[name];
}

/** The model, seconds and size asked for (OpenAI's defaults for those left out), or the 400. */
function askOf(body: unknown, contentType: string | undefined): VideoAsk | RelayError {
  if (!Buffer.isBuffer(body) && (!body || typeof body !== 'object' || Array.isArray(body)))
    return relayError(400, 'the request body must be a JSON object or multipart/form-data', 'invalid_json');
  const prompt = fieldOf(body, contentType, 'prompt');
  if (typeof prompt !== 'string' || prompt === '')
    return { ...relayError(400, 'prompt is required', 'required_field_missing'), param: 'prompt' };
  const model = fieldOf(body, contentType, 'model') ?? DEFAULT_MODEL;
  if (typeof model !== 'string' || !/^[\w.:/-]{1,128}$/.test(model))
    return { ...relayError(400, 'model must be a model name', 'invalid_field_value'), param: 'model' };
  const secondsField = fieldOf(body, contentType, 'seconds') ?? String(DEFAULT_SECONDS);
  const seconds = Number(secondsField);
  if (
    (typeof secondsField !== 'string' && typeof secondsField !== 'number') ||
    !Number.isInteger(seconds) ||
    seconds < 1 ||
    seconds > MAX_SECONDS
  )
    return {
      ...relayError(400, `seconds must be a whole number from 1 to ${MAX_SECONDS}, such as "4", "8" or "12"`, 'invalid_field_value'),
      param: 'seconds',
    };
  const size = fieldOf(body, contentType, 'size') ?? DEFAULT_SIZE;
  if (typeof size !== 'string' || !/^\d{2,5}x\d{2,5}$/.test(size))
    return { ...relayError(400, 'size must be WIDTHxHEIGHT, such as 720x1280', 'invalid_field_value'), param: 'size' };
  return { model, seconds, size };
}

/** The client's body for a channel, with the channel's name for the model (a multipart upload otherwise as it came). */
function upstreamBody(body: unknown, contentType: string | undefined, ask: VideoAsk): (upstreamModel: string) => string | Buffer {
  if (Buffer.isBuffer(body)) {
    const boundary = multipartBoundary(contentType);
    const field = boundary ? findMultipartField(body, boundary, 'model') : undefined;
    return (upstreamModel) => (field && upstreamModel !== ask.model ? replaceMultipartField(body, field, upstreamModel) : body);
  }
  return (upstreamModel) =>
    JSON.stringify({ ...(body as Record<string, unknown>), model: upstreamModel, seconds: String(ask.seconds), size: ask.size });
}

export interface VideoRoutesOptions {
  ctx: RelayContext;
  polling: TaskPollSettings;
}

/** `store`: where a video a vendor hands over as bytes (Vertex AI's Veo) is kept, /v1/files' store. */
type Deps = VideoRoutesOptions & { store: FileStore };

/** The caller of a /v1/videos call, or undefined once its refusal is sent. */
async function callerOf({ ctx }: Deps, request: FastifyRequest, reply: FastifyReply): Promise<RelayCaller | undefined> {
  const caller = await authenticateRelay(ctx.db, request, ctx.cache, ctx.ledger);
  if (!isRelayError(caller)) return caller;
  await sendRelayError(reply, caller);
  return undefined;
}

/** The caller's own video (never a deleted one, nor another user's). */
async function ownVideo({ ctx }: Deps, caller: RelayCaller, id: string): Promise<TaskRow | undefined> {
  const task = isWord(id) ? await findTask(ctx.db, Number(caller.user.id), 'video', id) : undefined;
  return task && task.status !== 'deleted' ? task : undefined;
}

/** Holds the price and writes the task; the task's row, or the refusal (nothing held). */
async function hold({ ctx, polling }: Deps, caller: RelayCaller, ask: VideoAsk, requestId: string): Promise<TaskRow | RelayError> {
  if (caller.token.models && !caller.token.models.split(',').includes(ask.model))
    return relayError(403, `this API key may not use the model ${ask.model}`, 'model_not_allowed', 'permission_error');
  const price = videoPrice(ask.model, ask.size, caller.user.group, ctx.options.json('VideoPrices'), ctx.options.json('GroupRatio'));
  if (!price.known) return relayError(403, price.reason, 'model_price_unset', 'permission_error');
  const now = Math.floor(Date.now() / 1000);
  const summary: VideoSummary = {
    ...ask,
    perSecond: price.perSecond,
    groupRatio: price.groupRatio,
    username: caller.user.username,
    tokenName: caller.token.name,
  };
  const row = {
    id: `video_${randomBytes(16).toString('hex')}`,
    kind: 'video',
    user_id: Number(caller.user.id),
    token_id: Number(caller.token.id),
    model: ask.model,
    status: 'submitting',
    held_quota: videoQuota(price, ask.seconds),
    request: JSON.stringify(summary),
    request_id: requestId,
    next_poll_at: Date.now() + polling.pollEveryMs,
    created_at: now,
    updated_at: now,
  };
  // the budgets and a member's caps first, as for a relayed call; the hold then counts as spent (taskLedger.ts)
  const refused = await holdTask(ctx, caller, row);
  if (refused) return refused;
  return (await findTask(ctx.db, row.user_id, 'video', row.id))!;
}

/** POST /v1/videos: the hold, then the vendor; the video under the gateway's id, or everything back and the error. */
async function createVideo(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const { ctx, polling } = deps;
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const ask = askOf(request.body, request.headers['content-type']);
  if (isRelayError(ask)) return sendRelayError(reply, ask);
  const task = await hold(deps, caller, ask, requestIdOf(request.headers));
  if (isRelayError(task)) return sendRelayError(reply, task);
  const dispatched = await ctx
    .dispatch(caller, {
      operation: 'videos',
      model: ask.model,
      path: '/v1/videos',
      headers: { 'content-type': request.headers['content-type'] ?? 'application/json', accept: 'application/json' },
      body: upstreamBody(request.body, request.headers['content-type'], ask),
      signal: new DisconnectSignal(),
      requestId: task.request_id,
    })
    .catch(async (error: unknown) => {
      // nobody expected this failure: the hold goes back before the 500
      await settleTask(ctx.db, task, { status: 'deleted', charge: 0, error: { code: 'submit_failed', message: 'internal error' } });
      throw error;
    });
  const video = dispatched.outcome === 'answered' ? (dispatched.answer.json?.value as Record<string, unknown> | undefined) : undefined;
  if (dispatched.outcome !== 'answered' || typeof video?.id !== 'string') {
    const error =
      dispatched.outcome === 'failed'
        ? dispatched.error
        : relayError(502, 'the vendor answered without a video id', 'bad_upstream_answer', 'server_error');
    // never handed over: all of it goes back, and the task is no video of the caller's
    await settleTask(ctx.db, task, {
      status: 'deleted',
      charge: 0,
      error: { code: String(error.code ?? 'submit_failed'), message: error.message },
    });
    return sendRelayError(reply, error);
  }
  const { channel } = dispatched.answer;
  const now = Date.now();
  const fields = {
    upstream_id: video.id,
    channel_id: channel.id,
    key_id: channel.keyId ?? null,
    status: video.status === 'in_progress' ? 'in_progress' : 'queued',
    progress: typeof video.progress === 'number' ? Math.round(video.progress) : 0,
    next_poll_at: now + polling.pollEveryMs,
    updated_at: Math.floor(now / 1000),
  };
  // a submission that outlived SUBMIT_GRACE_MS was given up (and refunded) by a poller meanwhile
  if (!(await recordSubmission(ctx.db, task.id, fields)))
    return sendRelayError(reply, relayError(504, 'the vendor took too long to accept the video', 'upstream_timeout', 'server_error'));
  return videoObject({ ...task, ...fields });
}

type ListRequest = FastifyRequest<{ Querystring: { limit?: string; order?: string; after?: string } }>;

/** GET /v1/videos: the caller's videos, newest first unless asked otherwise, with OpenAI's cursor. */
async function listVideos(deps: Deps, request: ListRequest, reply: FastifyReply) {
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const { query } = request;
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    return sendRelayError(reply, { ...relayError(400, `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, null), param: 'limit' });
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    return sendRelayError(reply, { ...relayError(400, "order must be 'asc' or 'desc'.", null), param: 'order' });
  const after = query.after === undefined ? undefined : await ownVideo(deps, caller, query.after);
  if (query.after !== undefined && !after) return sendRelayError(reply, { ...noSuchVideo(String(query.after)), param: 'after' });
  const page = {
    userId: Number(caller.user.id),
    kind: 'video',
    limit: limit + 1,
    order,
    afterSeq: after ? Number(after.seq) : undefined,
  } as const;
  const rows = await listTasks(deps.ctx.db, page);
  const data = rows.slice(0, limit).map(videoObject);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
}

type VideoRequest = FastifyRequest<{ Params: { id: string }; Querystring: { variant?: string } }>;

/** GET /v1/videos/{id}/content: the vendor's bytes, asked with the client's Range (and variant), streamed through. */
async function videoContent(deps: Deps, request: VideoRequest, reply: FastifyReply) {
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const task = await ownVideo(deps, caller, request.params.id);
  if (!task) return sendRelayError(reply, noSuchVideo(request.params.id));
  if (task.status !== 'completed')
    return sendRelayError(reply, relayError(400, `the video is ${videoObject(task).status}, not completed`, 'video_not_ready'));
  const variant = request.query.variant;
  const range = request.headers.range;
  const content = await readVideoContent(
    deps.ctx.db,
    deps.store,
    task,
    typeof range === 'string' ? range : undefined,
    isWord(variant) ? variant : undefined,
  );
  if (!content.ok)
    return sendRelayError(
      reply,
      relayError(content.status, content.message, 'upstream_error', content.status === 502 ? 'server_error' : undefined),
    );
  return reply.code(content.status).headers(content.headers).send(content.body);
}

/** DELETE /v1/videos/{id}: the vendor's copy first; a video deleted unfinished is not billed, a finished one keeps its charge and log. */
async function deleteVideo(deps: Deps, request: VideoRequest, reply: FastifyReply) {
  const { db } = deps.ctx;
  const caller = await callerOf(deps, request, reply);
  if (!caller) return reply;
  const task = await ownVideo(deps, caller, request.params.id);
  if (!task) return sendRelayError(reply, noSuchVideo(request.params.id));
  const deleted = await deleteVideoTask(db, deps.store, task);
  if (deleted === 'vendor_failed')
    return sendRelayError(reply, relayError(502, 'the vendor did not delete the video; try again', 'upstream_error', 'server_error'));
  if (deleted === 'gone') return sendRelayError(reply, noSuchVideo(request.params.id));
  return { id: task.id, object: 'video.deleted', deleted: true };
}

export function videoRoutes(app: FastifyInstance, options: VideoRoutesOptions): Promise<void> {
  const deps: Deps = { ...options, store: appFileStore(app.ctx.config, options.ctx.db, app.log) };
  app.post('/v1/videos', (request, reply) => createVideo(deps, request, reply));
  app.get('/v1/videos', (request: ListRequest, reply) => listVideos(deps, request, reply));
  app.get('/v1/videos/:id', async (request: VideoRequest, reply) => {
    const caller = await callerOf(deps, request, reply);
    if (!caller) return reply;
    const task = await ownVideo(deps, caller, request.params.id);
    return task ? videoObject(task) : sendRelayError(reply, noSuchVideo(request.params.id));
  });
  app.get('/v1/videos/:id/content', (request: VideoRequest, reply) => videoContent(deps, request, reply));
  app.delete('/v1/videos/:id', (request: VideoRequest, reply) => deleteVideo(deps, request, reply));
  return Promise.resolve();
}
