// The token-metered routes: chat, completions, edits, embeddings (also under
// the legacy /v1/engines/:model path) and moderations, streamed or not.
// Reserve the prompt plus max_tokens (or the model's maximum output), relay,
// answer, then settle what the upstream reports (or what we count locally).
// A chat or completion without max_tokens that the balance cannot cover at
// the model's maximum has its max_tokens lowered to what the balance pays
// for (at least MIN_LOWERED_OUTPUT_TOKENS), else it is refused.
import type { FastifyInstance } from 'fastify';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../../db/faults';
import { abortOnDisconnect, admitModel, modelOf, openJsonRequest, release, reserve, reserveLowered, settleLater } from '../../relay/accounting';
import { affordableOutputTokens, cachedPromptRatioFor, completionRatioFor, computeQuota, maxOutputTokensFor, reservationQuota } from '../../relay/billing';
import type { Bookkeeping } from '../../relay/bookkeeping';
import { answerBytes, dispatch, type UpstreamAnswer } from '../../relay/dispatch';
import { isRelayError, relayError, writeRelayError, type RelayError } from '../../relay/errors';
import { topLevelObjectField } from '../../relay/jsonField';
import { SseUsageWatcher } from '../../relay/sseUsage';
import { answerTranslated } from '../../relay/translate'; // p13-core
import { concurrencyLimiter } from '../../relay/concurrency';
import type { RelayCaller } from '../../relay/tokenAuth';
import { joinChunks } from '../../relay/upstream';
import { countChatPromptTokens, countInputTokens, countTextTokens, type CountOptions } from '../../relay/tokenCount';

type Mode = 'chat' | 'completions' | 'edits' | 'embeddings' | 'moderations';

interface TextRoute {
  path: string;
  mode: Mode;
  /** Where it goes upstream. The engines route goes to /v1/embeddings: OpenAI retired /v1/engines. */
  upstreamPath: string;
}

const TEXT_ROUTES: readonly TextRoute[] = [
  { path: '/v1/chat/completions', mode: 'chat', upstreamPath: '/v1/chat/completions' },
  { path: '/v1/completions', mode: 'completions', upstreamPath: '/v1/completions' },
  { path: '/v1/edits', mode: 'edits', upstreamPath: '/v1/edits' },
  { path: '/v1/embeddings', mode: 'embeddings', upstreamPath: '/v1/embeddings' },
  { path: '/v1/engines/:model/embeddings', mode: 'embeddings', upstreamPath: '/v1/embeddings' },
  { path: '/v1/moderations', mode: 'moderations', upstreamPath: '/v1/moderations' },
];

interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  estimated: boolean;
}

/** What a text request asks the upstream for; shared objects, so dispatch can reuse its per-channel copies. */
const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
const STREAM_HEADERS: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };

/** OpenAI's moderations endpoint picks a model when none is given; so do we, to route and price it. */
const DEFAULT_MODERATION_MODEL = 'text-moderation-latest';

function requestedModel(mode: Mode, body: Record<string, unknown>, pathModel: string | undefined): string {
  const model = modelOf(body);
  if (model) return model;
  if (pathModel) return pathModel;
  return mode === 'moderations' ? DEFAULT_MODERATION_MODEL : '';
}

function promptTokensOf(mode: Mode, body: Record<string, unknown>, model: string, options: CountOptions): number {
  switch (mode) {
    case 'chat':
      return countChatPromptTokens(body.messages, model, options);
    case 'completions':
      return countInputTokens(body.prompt, model, options);
    case 'edits':
      return countInputTokens(body.input, model, options) + countInputTokens(body.instruction, model, options);
    default:
      return countInputTokens(body.input, model, options);
  }
}

interface ReportedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
}

/**
 * Usage of a JSON answer: the upstream's when it reports any (read from the
 * bytes alone), else counted from the choices (which needs the whole answer parsed).
 */
function usageOfJson(json: NonNullable<UpstreamAnswer['json']>, promptTokens: () => number, model: string, approximate: boolean): TokenUsage {
  const read = topLevelObjectField(json.bytes, 'usage');
  const usage = ('found' in read ? (read.found ? read.value : undefined) : (json.value as { usage?: unknown } | undefined)?.usage) as ReportedUsage | null | undefined;
  if (usage && typeof usage === 'object' && Number(usage.prompt_tokens ?? 0) + Number(usage.completion_tokens ?? 0) > 0) {
    return {
      promptTokens: Number(usage.prompt_tokens) || 0,
      completionTokens: Number(usage.completion_tokens) || 0,
      cachedPromptTokens: Number(usage.prompt_tokens_details?.cached_tokens) || 0,
      estimated: false,
    };
  }
  const parsed = (json.value ?? {}) as { choices?: Array<{ message?: { content?: unknown }; text?: unknown }> };
  const choices = Array.isArray(parsed.choices) ? parsed.choices : [];
  const text = choices.map((choice) => (typeof choice?.message?.content === 'string' ? choice.message.content : typeof choice?.text === 'string' ? choice.text : '')).join('');
  return { promptTokens: promptTokens(), completionTokens: countTextTokens(text, model, { approximate }), cachedPromptTokens: 0, estimated: true };
}

/** The modes whose output a max_tokens limits: a request of these may have its limit lowered to what the balance pays for. */
const LIMITABLE = new Set<Mode>(['chat', 'completions']);

/** OpenAI's reasoning models take max_completion_tokens and refuse max_tokens. */
const limitField = (model: string) => (/^(o1|o3|o4|gpt-5)/.test(model) ? 'max_completion_tokens' : 'max_tokens');

/** A text request as both ways in deliver it: through a Fastify route, or the fast path below. */
interface TextRequest {
  headers: IncomingHttpHeaders;
  ip: string;
  body: unknown;
  /** The body's bytes as the client sent them, when at hand: forwarded as they are when nothing in them changes. */
  raw?: Buffer;
  /** The :model of /v1/engines/:model/embeddings. */
  pathModel?: string;
}

/** Text requests each app is relaying right now (to tell the ledger when one is alone). */
const inFlight = new WeakMap<FastifyInstance, number>();

/**
 * Relays one text request, writing the answer to Node's response directly:
 * the same code serves the Fastify routes (hijacked) and the fast path.
 */
async function relayText(app: FastifyInstance, bookkeeping: Bookkeeping, route: TextRoute, request: TextRequest, response: ServerResponse): Promise<void> {
  inFlight.set(app, (inFlight.get(app) ?? 0) + 1);
  try {
    return await relayTextRequest(app, bookkeeping, route, request, response);
  } finally {
    inFlight.set(app, inFlight.get(app)! - 1);
  }
}

async function relayTextRequest(app: FastifyInstance, bookkeeping: Bookkeeping, route: TextRoute, request: TextRequest, response: ServerResponse): Promise<void> {
  let opened = openJsonRequest(app, request);
  if (opened instanceof Promise) opened = await opened;
  if (isRelayError(opened)) return writeRelayError(response, opened);
  const { caller, body } = opened;
  const limiter = concurrencyLimiter(app);
  const refused = limiter.enter(caller);
  if (refused) return writeRelayError(response, refused);
  try {
    return await relayAdmitted(app, bookkeeping, route, request, response, caller, body);
  } finally {
    limiter.leave(caller);
  }
}

/** The rest of a text request, once its caller holds a place among its concurrent requests. */
async function relayAdmitted(
  app: FastifyInstance,
  bookkeeping: Bookkeeping,
  route: TextRoute,
  request: TextRequest,
  response: ServerResponse,
  caller: RelayCaller,
  body: Record<string, unknown>,
): Promise<void> {
  const { options } = app.ctx;
  const fail = (error: RelayError) => writeRelayError(response, error);
  const model = requestedModel(route.mode, body, request.pathModel);
  if (!model) return fail(relayError(400, 'you must provide a model parameter', 'model_required'));
  if (route.mode === 'edits' && (typeof body.instruction !== 'string' || body.instruction === '')) {
    return fail(relayError(400, 'field instruction is required', 'required_field_missing'));
  }
  const admission = admitModel(app, caller, model);
  if (isRelayError(admission)) return fail(admission);

  const approximate = options.bool('ApproximateTokenEnabled');
  const completionRatio = completionRatioFor(model);
  const clientLimit = Number(body.max_tokens ?? body.max_completion_tokens ?? 0) || 0;
  const maxOutputTokens = maxOutputTokensFor(model, options.json('ModelMaxOutputTokens'));
  const answers = route.mode === 'chat' || route.mode === 'completions' ? Number(body.n ?? 1) || 1 : 1;
  const reservationFor = (promptTokens: number, maxTokens = clientLimit) =>
    reservationQuota({ promptTokens, maxTokens, maxOutputTokens, n: answers, ratio: admission.ratio, completionRatio });
  // Reserve on the prompt's byte bound (no tokenizer on the hot path); only
  // when that is refused does the exact count decide. The count is also
  // what bills an answer that reports no usage, so it is kept once made.
  let countedPromptTokens: number | undefined;
  const promptTokens = () => (countedPromptTokens ??= promptTokensOf(route.mode, body, model, { approximate }));
  const boundPromptTokens = promptTokensOf(route.mode, body, model, { bound: true });
  const hint = { alone: inFlight.get(app) === 1 };
  let reservation = await reserve(app, admission, reservationFor(boundPromptTokens), hint);
  if (isRelayError(reservation) && reservation.code === 'insufficient_quota' && promptTokens() < boundPromptTokens) {
    reservation = await reserve(app, admission, reservationFor(promptTokens()), hint);
  }
  /** The output limit the gateway set because the balance could not pay for the model's maximum. */
  let loweredLimit: number | undefined;
  if (isRelayError(reservation) && reservation.code === 'insufficient_quota' && clientLimit === 0 && LIMITABLE.has(route.mode) && maxOutputTokens > 0) {
    // the client set no limit: answer as much as the balance pays for, if that is worth an answer
    const lowered = await reserveLowered(
      app,
      admission,
      (outputTokens) => reservationFor(promptTokens(), outputTokens),
      (available) => affordableOutputTokens({ available, promptTokens: promptTokens(), maxOutputTokens, n: answers, ratio: admission.ratio, completionRatio }),
      hint,
    );
    if (lowered) {
      reservation = lowered.reservation;
      loweredLimit = lowered.outputTokens;
    }
  }
  if (isRelayError(reservation)) return fail(reservation);

  const streamed = body.stream === true;
  const askUsage = streamed && route.mode === 'chat';
  const clientAskedUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const dispatched = await dispatch(app, caller, {
    requestId: admission.requestId,
    model,
    operation: route.mode, json: loweredLimit === undefined ? body : { ...body, max_tokens: loweredLimit }, // p13-core: what a translating channel encodes
    path: route.upstreamPath,
    headers: streamed ? STREAM_HEADERS : JSON_HEADERS,
    body: (upstreamModel) => {
      const addUsage = askUsage && !clientAskedUsage;
      // nothing to change: the client's own bytes go on, unparsed and unprinted
      if (request.raw && !addUsage && loweredLimit === undefined && upstreamModel === body.model) return request.raw;
      const limit = loweredLimit === undefined ? {} : { [limitField(upstreamModel)]: loweredLimit };
      return JSON.stringify(addUsage ? { ...body, ...limit, model: upstreamModel, stream_options: { ...(body.stream_options as object | undefined), include_usage: true } } : { ...body, ...limit, model: upstreamModel });
    },
    signal: abortOnDisconnect(app, response),
  });
  if (dispatched.outcome !== 'answered') {
    await release(app, reservation);
    // a client that left gets nothing more
    return dispatched.outcome === 'failed' ? fail(dispatched.error) : void response.destroy();
  }
  const { answer } = dispatched;
  const settle = (usage: TokenUsage) =>
    settleLater(app, bookkeeping, admission, reservation, {
      channelId: answer.channel.id,
      charge: computeQuota({
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        cachedPromptTokens: usage.cachedPromptTokens,
        cachedPromptRatio: cachedPromptRatioFor(model),
        ratio: admission.ratio,
        completionRatio,
      }),
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      isStream: streamed,
      estimated: usage.estimated,
    });

  // ---- p13-core: the channel's vendor does not speak OpenAI; translate.ts answers from its decoded answer ----
  if (answer.translated) {
    const usage = await answerTranslated(answer, response, { streamed, clientAskedUsage, promptTokens, model, approximate });
    if (!isRelayError(usage)) return settle(usage);
    await release(app, reservation);
    return fail(usage);
  }
  // ---- end p13-core ----
  const { stream, status, contentType } = answer.response;
  if (streamed && stream && contentType.includes('text/event-stream')) {
    return streamBack({ response, body: stream, clientAskedUsage, promptTokens, model, approximate, settle });
  }
  const pending = answerBytes(answer);
  const bytes = pending instanceof Promise ? await pending : pending;
  if (isRelayError(bytes)) {
    await release(app, reservation);
    return fail(bytes);
  }
  response.writeHead(status, { 'content-type': contentType || 'application/json', 'content-length': bytes.length });
  response.end(bytes);
  settle(answer.json ? usageOfJson(answer.json, promptTokens, model, approximate) : { promptTokens: promptTokens(), completionTokens: 0, cachedPromptTokens: 0, estimated: true });
}

/** A failure nobody caught: the client gets a 500 in OpenAI's shape (or a cut connection mid-answer), never a hang. */
function answerCrash(app: FastifyInstance, response: ServerResponse, error: unknown): void {
  if (isDatabaseUnavailable(error)) {
    // a database restart or a killed connection: quick 503, the pool reconnects by itself
    app.log.warn({ err: error }, 'relay: database unavailable');
    return writeRelayError(response, relayError(503, DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable', 'server_error'));
  }
  app.log.error({ err: error }, 'relay failed');
  writeRelayError(response, relayError(500, 'internal error', null, 'server_error'));
}

export function textRoutes(bookkeeping: Bookkeeping) {
  return async (app: FastifyInstance): Promise<void> => {
    for (const route of TEXT_ROUTES) {
      app.post(route.path, async (request, reply) => {
        reply.hijack();
        const input = { headers: request.headers, ip: request.ip, body: request.body, pathModel: (request.params as { model?: string }).model };
        await relayText(app, bookkeeping, route, input, reply.raw).catch((error: unknown) => answerCrash(app, reply.raw, error));
      });
    }
  };
}

const FAST_PATHS = new Map(TEXT_ROUTES.filter((route) => !route.path.includes(':')).map((route) => [route.path, route]));

/**
 * The hot JSON routes (chat, completions, edits, embeddings, moderations)
 * straight off Node's HTTP server, before Fastify: its request and reply
 * objects, hooks and body parser cost a fifth of a lean relay's throughput.
 * It takes only POSTs with a JSON content type on those exact paths (a
 * trailing slash and a query string allowed) and answers exactly what the
 * Fastify routes would; everything else, including those paths with another
 * method or content type, and every request once the app is closing, goes
 * to Fastify.
 */
export function textFastPath(app: FastifyInstance, bookkeeping: Bookkeeping, options: { trustProxy: boolean; bodyLimit: number; isClosing: () => boolean }) {
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== 'POST' || options.isClosing()) return false;
    const url = request.url ?? '';
    const query = url.indexOf('?');
    let path = query === -1 ? url : url.slice(0, query);
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const route = FAST_PATHS.get(path);
    if (!route || !String(request.headers['content-type'] ?? '').includes('application/json')) return false;
    readJsonBody(request, options.bodyLimit).then(
      (read) => {
        if (isRelayError(read)) return writeRelayError(response, read);
        const forwarded = options.trustProxy ? String(request.headers['x-forwarded-for'] ?? '').split(',')[0].trim() : '';
        const input = { headers: request.headers, ip: forwarded || request.socket.remoteAddress || '', body: read.body, raw: read.raw };
        return relayText(app, bookkeeping, route, input, response);
      },
    ).catch((error: unknown) => answerCrash(app, response, error));
    return true;
  };
}

/** The JSON body, parsed and as bytes, or the 400/413 a client gets for a bad one (the same as Fastify's parser gives). */
function readJsonBody(request: IncomingMessage, limit: number): Promise<{ body: unknown; raw: Buffer } | RelayError> {
  // 'data' and 'end' listeners: cheaper per request than an async iterator
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      request.off('data', onData).off('end', onEnd).resume();
      resolve(relayError(413, `the request body is larger than ${limit} bytes`, 'request_too_large'));
    };
    const onEnd = () => {
      request.off('error', reject);
      if (size === 0) return resolve(relayError(400, 'the request body must be a JSON object', 'invalid_json'));
      const raw = joinChunks(chunks, size);
      try {
        resolve({ body: JSON.parse(raw.toString('utf8')), raw });
      } catch (error) {
        resolve(relayError(400, `the request body is not valid JSON: ${(error as Error).message}`, 'invalid_json'));
      }
    };
    request.on('data', onData).on('end', onEnd).once('error', reject);
  });
}

/** Hands each complete SSE event on as it arrives; bills the reported usage, or counts what was streamed. */
async function streamBack(stream: {
  response: ServerResponse;
  body: Readable;
  clientAskedUsage: boolean;
  /** The prompt's exact count, made only if the stream reports no usage. */
  promptTokens: () => number;
  model: string;
  approximate: boolean;
  settle: (usage: TokenUsage) => void;
}): Promise<void> {
  const { response, body } = stream;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  const watcher = new SseUsageWatcher(!stream.clientAskedUsage);
  let broken = false;
  try {
    await new Promise<void>((resolve, reject) => {
      body.on('data', (chunk: Buffer) => {
        const out = watcher.pushBytes(chunk);
        // a client that reads slower than the upstream writes holds the upstream back
        if (out.length > 0 && !response.write(out)) {
          body.pause();
          response.once('drain', () => body.resume());
        }
      });
      body.once('end', resolve);
      body.once('error', reject);
    });
    const rest = watcher.flush();
    if (rest) response.write(rest);
  } catch {
    // the client left (the upstream call was aborted) or the upstream broke off
    broken = true;
  }
  if (!response.writableEnded) response.end();
  const reported = watcher.reportedUsage();
  stream.settle(
    reported && !broken && reported.promptTokens + reported.completionTokens > 0
      ? { ...reported, estimated: false }
      : { promptTokens: stream.promptTokens(), completionTokens: countTextTokens(watcher.streamedText(), stream.model, { approximate: stream.approximate }), cachedPromptTokens: 0, estimated: true },
  );
}
