// One relayed call to the upstreams: pick a channel, send, and when the
// failure belongs to the channel rather than to the request, try another one,
// up to RetryTimes more, all inside the client's one request (no 307 like
// v0.5.3). The caller reserves and charges once, whatever the attempts.
//
// Retried: upstream 5xx, 429, network failures, and a dead key (401
// invalid_api_key / account_deactivated, insufficient_quota). A dead key is
// the channel's fault, not the request's, so the next channel may well
// succeed; the dead channel is never tried twice (tried channels are
// excluded) and is disabled when AutomaticDisableChannelEnabled is on. Other
// 4xx answers (a bad request, an unknown model) would fail anywhere and go
// straight back to the client.
//
// Each channel's adaptor (server/protocols/upstream) says where and how to
// call it and what its failures mean. A channel whose adaptor speaks the
// client's protocol (OpenAI, Azure and every OpenAI-compatible row) gets the
// client's bytes as they are (the zero-parse path; only the target and headers
// come from the adaptor, made once per channel and kept). Any other gets the
// request encoded by its adaptor, over HTTP or a WebSocket, and its answer
// decoded (a stream is read until it shows substance, so a failure at its
// start still counts as the channel's and the next channel may answer);
// translate.ts answers the client from that.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { pipeline, Readable, Transform } from 'node:stream';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/faults';
import { chatRequestProblem, uncarriedToolsReason, upstreamFailure, withArticle } from '../protocols/shared';
import { configuredMaxOutputTokens } from '../billing/prices';
import { catalogMaxOutputTokens } from '../billing/catalog';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamDecoder,
  type EmbeddingRequest,
  type EmbeddingResponse,
  type InboundProtocol,
  type NativePath,
  type NativeStreamReframer,
  type Operation,
  type RerankRequest,
  type RerankResponse,
  type UpstreamAdaptor,
  type UpstreamFailure,
} from '../protocols/types';
import { adaptorForChannelType } from '../protocols/upstream';
import { openAiFailureInOkBody, operationOfOpenAiPath } from '../protocols/upstream/openai';
import { selectChannel, type RoutedChannel } from './channelSelect';
import type { AttemptVerdict, RoutingBook } from './routing';
import { DEFAULT_RETRYABLE_STATUSES, fallbacksOf, parseModelFallbacks, parseStatusList, type ModelFallbacks } from '../../common/routing';
import { withChannelKey } from './channelKeyPick';
import { credentialFor, forgetCredential } from './credentials';
import { followStream } from './followedStream';
import { relayError, unreachableRelayError, upstreamRelayError, type RelayError } from './errors';
import { scrubLine, scrubSecrets } from './scrub';
import type { ChannelAttempt } from '../../common/records';
import type { GatewayMetrics, UpstreamErrorKind } from '../services/metrics';
import type { OptionStore } from '../services/optionStore';
import type { RelayCache } from './relayCache';
import type { RelayCaller } from './tokenAuth';
import { AnswerBrokeOff, callUpstream, isUpstreamTimeout, joinChunks, poolFor, UpstreamBusy, UpstreamResponse, type DisconnectSignal } from './upstream';
import { openWebSocketCall, WebSocketRefused, WebSocketTimeout } from './websocketUpstream';

export interface UpstreamRequest {
  /** What is asked; a channel whose adaptor does not offer it is passed by. */
  operation?: Operation;
  /** The protocol the client speaks (OpenAI's when absent): a channel whose adaptor speaks it gets the client's bytes. */
  inbound?: InboundProtocol;
  /**
   * What a channel that speaks the client's protocol is asked for, when that
   * is not `operation`: a Responses request is `responses` there (its bytes
   * pass) and `chat` of every channel it is translated for.
   */
  passthroughOperation?: Operation;
  /**
   * The client's parsed JSON body: what a channel that does not speak the
   * client's protocol gets, translated by its adaptor (absent for multipart).
   */
  json?: Record<string, unknown>;
  /** A rerank as the route read it: what the channel's adaptor encodes (a rerank is never passed as bytes). */
  rerank?: RerankRequest;
  /** Why a channel that translates cannot take this request (what the chat form would drop); read only by such a channel. */
  untranslatable?: () => string | undefined;
  /** The client's query parameters that matter upstream (Azure and Spark read `api-version`). */
  query?: Readonly<Record<string, string>>;
  /** The model the client asked for: it routes, and channels may map it. */
  model: string;
  /** The client asked for a stream: a vendor that streams at another URL (Gemini's `:streamGenerateContent`) is targeted by it. */
  stream?: boolean;
  /** Upstream path, joined to the channel's base URL, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** The body for one channel, given the model name that channel expects. */
  body: (upstreamModel: string) => string | Buffer;
  signal: DisconnectSignal;
  /** Who the caller says it is (the body's `user`, or the operator's affinity header) when affinity is on: it keeps its channel for a while. */
  affinity?: string;
  /**
   * Names this request in the log and in the error a token holder reads, so an
   * admin can find the upstream's full answer. Made (cheaply) when absent and
   * something failed.
   */
  requestId?: string;
}

export interface UpstreamAnswer {
  channel: RoutedChannel;
  upstreamModel: string;
  /**
   * The upstream's answer: status, content type, headers (parsed when first
   * read), and, for anything but JSON, its body still unread as `stream`.
   */
  response: UpstreamResponse;
  /** A JSON answer, read whole (it had to be, to see an error inside a 200); its value is parsed on first use. */
  json?: { bytes: Buffer; readonly value: unknown };
  /** The request's id, for the log line and the client's error when the answer breaks off. */
  requestId: string;
  log: FastifyBaseLogger;
  /**
   * Set when the channel's vendor does not speak the client's protocol: the
   * answer decoded into OpenAI's shape (translate.ts answers the client from
   * it). `response` is then only a stand-in (status 200, no body).
   */
  translated?: TranslatedAnswer;
}

/** A vendor's answer in OpenAI's shape: whole, or a stream still open. */
export interface TranslatedAnswer {
  adaptor: UpstreamAdaptor;
  call: AdaptorCall;
  chat?: ChatResponse;
  embeddings?: EmbeddingResponse;
  rerank?: RerankResponse;
  stream?: TranslatedStream;
}

export interface TranslatedStream {
  decoder: ChatStreamDecoder;
  /** Chunks decoded while dispatch looked for an early failure, not yet sent. */
  held: ChatChunk[];
  /** The rest of the answer: bytes (HTTP) or one frame per piece (WebSocket); paused. Destroying it ends the upstream call. */
  source: Readable;
  /** True when the upstream had already ended (everything is in `held`). */
  ended: boolean;
}

/**
 * `attempts`: every channel sent the request, in order, when any failed (an
 * answer at the first try lists none: nothing to tell, nothing made).
 */
export type Dispatched =
  /** `fallbackModel`: the model that answered when it is not the one asked for (the group's fallback list). */
  | { outcome: 'answered'; answer: UpstreamAnswer; attempts?: ChannelAttempt[]; fallbackModel?: string }
  /** `channelId`: the channel tried last, 0 when none could be (the usage rollups count the error there). */
  | { outcome: 'failed'; error: RelayError; channelId: number; attempts?: ChannelAttempt[] }
  | { outcome: 'aborted'; attempts?: ChannelAttempt[] };

/** Parsed model mappings by their text, so a mapped channel costs one JSON.parse, not one per request. */
const parsedMappings = new Map<string, Readonly<Record<string, unknown>>>();
const MAX_CACHED_MAPPINGS = 1000;

function parseMapping(text: string): Readonly<Record<string, unknown>> {
  let mapping = parsedMappings.get(text);
  if (!mapping) {
    try {
      const parsed: unknown = JSON.parse(text);
      mapping = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      mapping = {};
    }
    // edited mappings leave old texts behind; start over rather than grow without bound
    if (parsedMappings.size >= MAX_CACHED_MAPPINGS) parsedMappings.clear();
    parsedMappings.set(text, mapping);
  }
  return mapping;
}

/** A whole body as one Buffer: the chunk itself when it came in one (no copy). */
function readAll(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    body.once('end', () => resolve(joinChunks(chunks, size)));
    body.once('error', reject);
  });
}

/** A JSON answer whose value is parsed on first use (undefined when it is not valid JSON). A class: an object literal with a getter costs far more to make. */
class LazyJson {
  private parsed: { value: unknown } | undefined;

  constructor(readonly bytes: Buffer) {}

  get value(): unknown {
    if (!this.parsed) {
      try {
        this.parsed = { value: JSON.parse(this.bytes.toString('utf8')) };
      } catch {
        this.parsed = { value: undefined };
      }
    }
    return this.parsed.value;
  }
}

/** The key an error object needs, as bytes (a string needle is converted on every search). */
const ERROR_KEY = Buffer.from('"error"');

/** The whole body of an answer (at once when it was read already); an upstream that breaks off mid-body is a 502, so the caller can release. */
export function answerBytes(answer: UpstreamAnswer): Buffer | Promise<Buffer | RelayError> {
  if (answer.json) return answer.json.bytes;
  return readAll(answer.response.stream!).catch((error: Error) => {
    const { requestId } = answer;
    answer.log.warn({ requestId, channelId: answer.channel.id, detail: scrubSecrets(error.message, secretsOf(answer.channel.key)) }, 'upstream answer broke off');
    return isUpstreamTimeout(error) ? relayError(504, `the upstream answer stalled (request id ${requestId})`, 'upstream_timeout', 'server_error') : unreachableRelayError(true, requestId);
  });
}

/** The model a channel expects: its model_mapping entry, else the requested name. */
export function mappedModel(channel: RoutedChannel, model: string): string {
  if (!channel.model_mapping || channel.model_mapping === '{}') return model;
  const target = parseMapping(channel.model_mapping)[model];
  return typeof target === 'string' && target ? target : model;
}

/**
 * A channel key as the scrubbers take it: a key of several secrets
 * (`APIKey|SecretKey`, `APPID|APISecret|APIKey`) one per line, so each part is
 * scrubbed where an upstream quotes it alone.
 */
export const secretsOf = (key: string) => key.replace(/\|/g, '\n');

/** What a channel's adaptor knows of it. */
export function channelConfigOf(channel: Pick<RoutedChannel, 'type' | 'key' | 'base_url' | 'other'>): ChannelConfig {
  return { type: channel.type, key: channel.key, baseUrl: channel.base_url ?? '', other: channel.other ?? '' };
}

/** A passthrough target: where to send, and the key's headers merged into each headers object the routes pass. */
interface PassthroughTarget {
  origin: string;
  /** The path and query to ask the origin for. */
  path: string;
  /** The adaptor's headers other than content-type and accept (which the route's own win): the key. */
  auth: Record<string, string>;
  /** The route's headers with `auth`, per headers object (the routes pass shared constants; weak, so a one-off object is not kept). */
  merged: WeakMap<Record<string, string>, Record<string, string>>;
}

/**
 * Passthrough targets per channel object, by operation, upstream model, stream
 * and api-version (the only inputs a passthrough adaptor's target reads):
 * URL parsing and header building once per channel and route, not per
 * request. Weak: a reloaded channel (an edited key or base URL) is a new object.
 */
const passthroughTargets = new WeakMap<RoutedChannel, Map<string, PassthroughTarget | UpstreamFailure>>();
const MAX_TARGETS_PER_CHANNEL = 100;

function passthroughTarget(
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  stream: boolean,
  query: UpstreamRequest['query'],
): PassthroughTarget | UpstreamFailure {
  let byCall = passthroughTargets.get(channel);
  if (!byCall) {
    byCall = new Map();
    passthroughTargets.set(channel, byCall);
  }
  const version = query?.['api-version'];
  // an OpenAI-speaking adaptor's URL does not change with the stream, Gemini's does: each stream flag has its entry
  const asked = stream ? `${operation}\0stream` : operation;
  const key = version === undefined ? `${asked}\0${upstreamModel}` : `${asked}\0${upstreamModel}\0${version}`;
  let target = byCall.get(key);
  if (!target) {
    const config = channelConfigOf(channel);
    const call: AdaptorCall = { channel: config, operation, model: upstreamModel, stream, responseId: '', now: 0, query };
    const made = adaptor.target(config, call);
    if (isUpstreamFailure(made)) {
      target = made;
    } else {
      const url = new URL(made.url);
      const auth: Record<string, string> = {};
      for (const [name, value] of Object.entries(made.headers)) {
        const lower = name.toLowerCase();
        if (lower !== 'content-type' && lower !== 'accept') auth[lower] = value;
      }
      target = { origin: url.origin, path: url.pathname + url.search, auth, merged: new WeakMap() };
    }
    if (byCall.size >= MAX_TARGETS_PER_CHANNEL) byCall.clear();
    byCall.set(key, target);
  }
  return target;
}

function passthroughHeaders(target: PassthroughTarget, headers: Record<string, string>): Record<string, string> {
  let merged = target.merged.get(headers);
  if (!merged) {
    merged = { ...headers, ...target.auth };
    target.merged.set(headers, merged);
  }
  return merged;
}

/** A call the shutdown cut before its answer came: nothing is charged, and the client hears why. */
const SHUTTING_DOWN = relayError(503, 'the gateway is shutting down; please retry', 'shutting_down', 'server_error');

/** What the client hears when no upstream answered, by the last failure: no address or detail (those go to the log), the request id. */
function unansweredError(error: unknown, requestId: string): RelayError {
  if (error instanceof UpstreamBusy) return relayError(503, `the upstream is busy, please retry later (request id ${requestId})`, 'upstream_busy', 'server_error');
  const timedOut = error instanceof AnswerBrokeOff ? error.timedOut : error instanceof WebSocketTimeout || isUpstreamTimeout(error);
  if (timedOut) return relayError(504, `the upstream timed out (request id ${requestId})`, 'upstream_timeout', 'server_error');
  return unreachableRelayError(error instanceof AnswerBrokeOff, requestId);
}

/** The metrics' kind of an upstream that never answered, by the same reading as unansweredError. */
function unansweredKind(error: unknown): UpstreamErrorKind {
  if (error instanceof UpstreamBusy) return 'busy';
  const timedOut = error instanceof AnswerBrokeOff ? error.timedOut : error instanceof WebSocketTimeout || isUpstreamTimeout(error);
  if (timedOut) return 'timeout';
  return error instanceof AnswerBrokeOff ? 'broke_off' : 'network';
}

/**
 * The most attempts a log lists (the first ones and the last): its row stays far below MySQL's 64 KiB TEXT
 * however many channels serve a model, and a row the database refused would hold up the settlements beside it.
 */
const MAX_LISTED_ATTEMPTS = 32;

/** Adds one channel's try to the list, as the log keeps it: the reason without the channel's key, URLs or addresses. */
function noteAttempt(tries: ChannelAttempt[] | undefined, channel: RoutedChannel, status: number, reason: string, sentAt: number): ChannelAttempt[] {
  const list = tries ?? [];
  if (list.length >= MAX_LISTED_ATTEMPTS) list.pop();
  list.push({ channelId: channel.id, channelName: channel.name, status, reason: scrubLine(reason, secretsOf(channel.key)), ms: Date.now() - sentAt });
  return list;
}

/** What one attempt on one channel came to. */
type Attempt =
  | { outcome: 'answered'; answer: UpstreamAnswer }
  /** `staleCredential`: the cached credential the vendor refused with a 401 (translated() retries once with a fresh one). */
  | { outcome: 'failed'; failure: UpstreamFailure; staleCredential?: string }
  /** Nothing answered (network, timeout, busy): the error for the client, the detail for the log. */
  | { outcome: 'unanswered'; error: unknown }
  | { outcome: 'aborted' };

/** The operations a channel that does not speak the client's protocol can be asked for: those adaptors encode. */
const TRANSLATABLE = new Set<Operation>(['chat', 'embeddings', 'rerank']);

/** The operations always encoded by the channel's adaptor, even one that speaks the client's protocol: the vendors' shapes differ on one wire. */
const ALWAYS_ENCODED = new Set<Operation>(['rerank']);

/**
 * What dispatch works with, handed in rather than read off the app so that it
 * can be driven without a Fastify instance, and so what it touches is plain.
 */
export interface DispatchDeps {
  db: Kysely<Database>;
  options: OptionStore;
  log: FastifyBaseLogger;
  /** Absent when METRICS_ENABLED is off. */
  metrics?: GatewayMetrics;
  relayCache: RelayCache;
  newRequestId: () => string;
  /** What this process remembers of the channels' recent answers (cooldowns, breakers, affinity). */
  book: RoutingBook;
  /** Takes a channel whose key is dead out of rotation (when the operator allows it); whether it did. */
  disableChannel: (channelId: number, reason: string) => Promise<boolean>;
  /** Sets one dead key of a multi-key channel aside (and the channel, when it was its last live key); whether it did. */
  disableChannelKey: (channelId: number, keyId: number, reason: string) => Promise<boolean>;
  /** Tallies a call made with a key of a multi-key channel (batched: keyUsage.ts). */
  noteKeyUse: (keyId: number, failed: boolean) => void;
}

export async function dispatch(deps: DispatchDeps, caller: RelayCaller, request: UpstreamRequest): Promise<Dispatched> {
  const attempts = 1 + Math.max(0, Math.floor(deps.options.number('RetryTimes')));
  const affinityKey = request.affinity === undefined ? undefined : `${caller.user.group}\0${request.model}\0${request.affinity}`;
  const run: DispatchRun = {
    deps,
    caller,
    request,
    operation: request.operation ?? operationOfOpenAiPath(request.path),
    tried: [],
    deadKeys: [],
    tries: undefined,
    lastError: relayError(503, `no channel available for model ${request.model}`, 'model_not_available', 'server_error'),
    affinityKey,
    affinity: affinityKey === undefined ? undefined : deps.book.affinityOf(affinityKey),
  };
  stages: for (const stage of routeStages(deps, caller, request.model)) {
    // a resting channel is the last resort of a request no channel took, not one more try after failures
    if (stage.resting && run.tried.length > 0) break;
    for (let attempt = 0; attempt < (stage.resting ? 1 : attempts); attempt += 1) {
      const step = await tryNextChannel(run, stage, attempt);
      if (step === NO_CHANNEL) break;
      if (step === SKIPPED) attempt -= 1;
      else if (step === STOPPED) break stages;
      else if (step !== TRIED) return step;
    }
  }
  return { outcome: 'failed', error: run.lastError, channelId: run.tried.at(-1) ?? 0, attempts: run.tries };
}

/** One dispatch as it goes: what was asked, and what the channels tried so far said. */
interface DispatchRun {
  deps: DispatchDeps;
  caller: RelayCaller;
  request: UpstreamRequest;
  operation: Operation | undefined;
  /** Channel ids tried: none is tried twice, whatever the model. */
  tried: number[];
  /** Made at the first failure: an answer at the first try costs nothing here. */
  tries: ChannelAttempt[] | undefined;
  /** What the client hears if nothing answers. */
  lastError: RelayError;
  /** Keys of multi-key channels that proved dead during this request: their channel may still answer with another. */
  deadKeys: number[];
  /** (group, model, caller) when affinity is on, and the channel (and key) it keeps. */
  affinityKey: string | undefined;
  affinity: { channelId: number; keyId: number | undefined } | undefined;
}

/** What one step of a dispatch came to, when it did not end it. */
const NO_CHANNEL = Symbol('no channel left for this model');
const SKIPPED = Symbol('a channel passed by without spending an attempt');
const TRIED = Symbol('a channel failed; the next may answer');
const STOPPED = Symbol('a failure no other channel would mend');
type Step = Dispatched | typeof NO_CHANNEL | typeof SKIPPED | typeof TRIED | typeof STOPPED;

/** Picks the next channel for the stage's model and sends the request to it. */
async function tryNextChannel(run: DispatchRun, stage: RouteStage, attempt: number): Promise<Step> {
  const { deps, caller, request, operation } = run;
  const { book } = deps;
  const { model } = stage;
  let channel: ReturnType<typeof selectChannel>;
  try {
    channel = selectChannel(deps.db, caller.user.group, model, {
      exclude: run.tried,
      pinnedChannelId: caller.pinnedChannelId,
      cache: deps.relayCache,
      book,
      affinity: run.affinity?.channelId,
      resting: stage.resting,
    });
    if (channel instanceof Promise) channel = await channel;
  } catch (error) {
    // the caller holds a reservation: a failed outcome makes it release that before answering
    if (!isDatabaseUnavailable(error)) throw error;
    return { outcome: 'failed', error: relayError(503, DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable', 'server_error'), channelId: run.tried.at(-1) ?? 0, attempts: run.tries };
  }
  if (!channel) return NO_CHANNEL;
  run.tried.push(channel.id);
  if (channel.multi_key) {
    // a key resting after a 429 is passed by like a resting channel, unless this is the last resort
    const resting = stage.resting || book.empty ? undefined : (keyId: number) => book.keyRestingUntil(keyId) > 0;
    let keyed: ReturnType<typeof withChannelKey>;
    try {
      const preferred = run.affinity?.channelId === channel.id ? run.affinity.keyId : undefined;
      keyed = withChannelKey(deps.db, channel, run.deadKeys, Math.random, deps.relayCache, resting, preferred);
      if (keyed instanceof Promise) keyed = await keyed;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      return { outcome: 'failed', error: relayError(503, DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable', 'server_error'), channelId: channel.id, attempts: run.tries };
    }
    if (!keyed) {
      // every live key rests: the channel rests with them (until the first wakes) and stays free for the last resort;
      // or every key is set aside (the channel is being disabled). Either way the next channel may answer.
      if (resting && book.restChannelWithKeys(channel.id)) run.tried.pop();
      return SKIPPED;
    }
    channel = keyed;
  }
  const adaptor = adaptorForChannelType(channel.type);
  const inbound = request.inbound ?? 'openai';
  // OpenAI's chat decides on `speaks` alone; only another protocol asks the channel's type
  const passes = adaptor !== undefined && !(operation && ALWAYS_ENCODED.has(operation)) && (adaptor.speaks === inbound || adaptor.alsoSpeaks?.(channel.type, inbound) === true);
  const asked = passes && request.passthroughOperation !== undefined ? request.passthroughOperation : operation;
  const upstreamModel = mappedModel(channel, model);
  // the vendor serves the client's protocol for this model at a URL of its own (Claude on Bedrock for a Messages client)
  const native = !passes && asked === 'chat' && adaptor?.native?.inbound === inbound && adaptor.native.serves(upstreamModel);
  if (!adaptor || !asked || !adaptor.operations.has(asked) || adaptor.servesOperation?.(channel.type, asked) === false || (!passes && !native && !(TRANSLATABLE.has(asked) && request.json))) {
    // not this channel's to answer: the next one may be (the attempt is not spent on it)
    run.lastError = relayError(
      501,
      adaptor ? `channel type ${channel.type} does not offer ${asked ?? request.path}` : `channel type ${channel.type} is unknown to this relay`,
      'channel_type_unsupported',
      'server_error',
    );
    return SKIPPED;
  }
  const dropped = !passes && !native && asked === 'chat' && request.json ? droppedToolsOf(adaptor, upstreamModel, request.json) : undefined;
  const refusesDrop = dropped !== undefined && deps.options.get('ToolRefusalGroups').split(',').includes(caller.user.group);
  const uncarried = !passes && !native && asked === 'chat' ? (request.untranslatable?.() ?? (refusesDrop && dropped ? uncarriedToolsReason(dropped) : undefined)) : undefined;
  if (uncarried) {
    // dropping a tool the client relies on would change what the model can do behind its back: this channel is
    // passed by (the attempt is not spent on it), as one that speaks the client's protocol may still take it
    run.lastError = relayError(400, `this request cannot be sent to ${withArticle(adaptor.protocol)} channel: ${uncarried}`, 'unsupported_tool');
    return SKIPPED;
  }
  const sentAt = Date.now();
  if (!book.empty) book.attempting(channel.id);
  const result = passes
    ? await passThrough(deps, adaptor, channel, asked, upstreamModel, request)
    : native
      ? await nativeCall(deps, adaptor, adaptor.native!, channel, asked, upstreamModel, request)
      : await translated(deps, adaptor, channel, asked, upstreamModel, request);
  if (channel.keyId !== undefined) deps.noteKeyUse(channel.keyId, result.outcome === 'failed' || result.outcome === 'unanswered');
  if (!book.empty || result.outcome !== 'answered') {
    const verdict = verdictOf(result);
    book.record(channel.id, verdict, channel.keyId);
    // a key's own rate limit: the channel's other keys may answer this very request (the resting key is passed by)
    if (verdict === 'overloaded' && channel.keyId !== undefined) run.tried.pop();
  }
  if (result.outcome === 'answered') {
    if (run.affinityKey !== undefined && (run.affinity?.channelId !== channel.id || run.affinity.keyId !== channel.keyId)) {
      book.served(run.affinityKey, channel.id, channel.keyId);
    }
    const served: Dispatched = model === request.model ? result : { ...result, fallbackModel: model };
    if (!run.tries) return served;
    return { ...served, attempts: noteAttempt(run.tries, channel, result.answer.response.status, 'answered', sentAt) };
  }
  if (result.outcome === 'aborted') {
    run.tries = noteAttempt(run.tries, channel, 0, request.signal.byGateway ? SHUTTING_DOWN.message : 'the client left before the answer', sentAt);
    return request.signal.byGateway ? { outcome: 'failed', error: SHUTTING_DOWN, channelId: channel.id, attempts: run.tries } : { outcome: 'aborted', attempts: run.tries };
  }
  const requestId = (request.requestId ??= deps.newRequestId());
  if (result.outcome === 'unanswered') {
    run.tries = noteAttempt(run.tries, channel, 0, (result.error as Error).message, sentAt);
    // the detail (an internal address, a TLS complaint) is for the admin, in the log; nothing reached the client yet,
    // so each of these is the channel's failure and the next channel may answer
    deps.log.warn(
      { requestId, userId: caller.user.id, tokenId: caller.token.id, channelId: channel.id, attempt, detail: scrubSecrets((result.error as Error).message, secretsOf(channel.key)) },
      'upstream call failed',
    );
    run.lastError = unansweredError(result.error, requestId);
    deps.metrics?.upstreamError(channel.id, unansweredKind(result.error));
    return TRIED;
  }
  const { failure } = result;
  run.tries = noteAttempt(run.tries, channel, failure.status, failure.message, sentAt);
  if (failure.deadKey && channel.keyId !== undefined) {
    // one dead key of many: set aside alone, and its channel may be tried again with another key
    run.deadKeys.push(channel.keyId);
    run.tried.pop();
    try {
      await deps.disableChannelKey(channel.id, channel.keyId, scrubSecrets(failure.message, secretsOf(channel.key)));
    } catch (error) {
      deps.log.error({ err: error, channelId: channel.id, keyId: channel.keyId }, 'could not set a dead channel key aside');
    }
  } else if (failure.deadKey) {
    try {
      await deps.disableChannel(channel.id, scrubSecrets(failure.message, secretsOf(channel.key)));
    } catch (error) {
      deps.log.error({ err: error, channelId: channel.id }, 'could not disable a channel with a dead key');
    }
  }
  run.lastError = upstreamRelayError(failure.status, failure, secretsOf(channel.key), requestId);
  deps.metrics?.upstreamError(channel.id, failure.deadKey ? 'dead_key' : failure.status === 429 ? 'rate_limited' : failure.status >= 500 ? 'server_error' : 'client_error');
  deps.log.warn(
    {
      requestId,
      userId: caller.user.id,
      tokenId: caller.token.id,
      channelId: channel.id,
      status: failure.status,
      attempt,
      type: failure.type,
      code: failure.code,
      detail: scrubSecrets(failure.message, secretsOf(channel.key)),
    },
    'upstream failed',
  );
  return goesOn(deps.options, failure) ? TRIED : STOPPED;
}

/** One pass of the dispatch: a model, and whether it may take a resting channel. */
interface RouteStage {
  model: string;
  resting: boolean;
}

/**
 * The passes of one dispatch: the asked model; then each fallback model of the
 * caller's group in order; then, when some channel rests, the asked model's
 * resting channel whose rest ends first, since nothing else could answer. A
 * key pinned to one channel gets that channel alone.
 */
function routeStages(deps: DispatchDeps, caller: RelayCaller, model: string): RouteStage[] {
  if (caller.pinnedChannelId !== undefined) return [{ model, resting: false }];
  const fallbacks = fallbacksOf(modelFallbacks(deps.options.get('ModelFallbacks')), caller.user.group, model);
  const stages: RouteStage[] = [{ model, resting: false }];
  for (const fallback of fallbacks) stages.push({ model: fallback, resting: false });
  if (!deps.book.empty) stages.push({ model, resting: true });
  return stages;
}

/** The ModelFallbacks option parsed, by its text (an invalid text, which the option store refuses to save, has none). */
let fallbacksText = '';
let fallbacksParsed: ModelFallbacks = {};
function modelFallbacks(text: string): ModelFallbacks {
  if (text !== fallbacksText) {
    fallbacksParsed = parseModelFallbacks(text) ?? {};
    fallbacksText = text;
  }
  return fallbacksParsed;
}

/** The RetryableStatusCodes option parsed, by its text. */
let retryableText = '';
let retryableTest: (status: number) => boolean = () => false;
function retryableStatus(options: OptionStore, status: number): boolean {
  const text = options.get('RetryableStatusCodes');
  if (text !== retryableText) {
    retryableTest = parseStatusList(text) ?? parseStatusList(DEFAULT_RETRYABLE_STATUSES)!;
    retryableText = text;
  }
  return retryableTest(status);
}

/**
 * Whether a failure sends the request on to another channel: a dead key
 * always does; a status the operator lists as retryable does; and a 4xx the
 * adaptor says another channel may take (a request this vendor's format
 * cannot carry) does whatever the list, since the list is about upstream
 * answers and that one never reached an upstream.
 */
function goesOn(options: OptionStore, failure: UpstreamFailure): boolean {
  if (failure.deadKey || retryableStatus(options, failure.status)) return true;
  return failure.retryable && failure.status < 500 && failure.status !== 429;
}

/** What an attempt says of its channel: a 429 or an overload rests it, a 5xx or no answer counts toward its breaker. */
function verdictOf(result: Attempt): AttemptVerdict {
  switch (result.outcome) {
    case 'answered':
      return 'answered';
    case 'aborted':
      return 'neutral';
    case 'unanswered':
      // the gateway's own pool queue was full: that says nothing of the channel
      return result.error instanceof UpstreamBusy ? 'neutral' : 'failed';
    case 'failed': {
      const { failure } = result;
      if (failure.deadKey) return 'neutral';
      if (failure.status === 429 || failure.status === 529 || (failure.status === 503 && /overload/i.test(`${failure.type ?? ''} ${failure.code ?? ''} ${failure.message}`))) return 'overloaded';
      return failure.status >= 500 ? 'failed' : 'neutral';
    }
  }
}

/** The zero-parse path: the client's bytes to a channel that speaks its protocol, the answer's bytes back. */
async function passThrough(deps: DispatchDeps, adaptor: UpstreamAdaptor, channel: RoutedChannel, operation: Operation, upstreamModel: string, request: UpstreamRequest): Promise<Attempt> {
  const target = passthroughTarget(adaptor, channel, operation, upstreamModel, request.stream === true, request.query);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  let response: UpstreamResponse;
  try {
    response = await callUpstream(
      poolFor(target.origin),
      { path: target.path, headers: passthroughHeaders(target, request.headers), body: request.body(upstreamModel), requestId: request.requestId },
      request.signal,
    );
  } catch (error) {
    return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
  }
  const { bytes } = response;
  let json: UpstreamAnswer['json'];
  if (response.status < 200 || response.status >= 300) {
    return { outcome: 'failed', failure: adaptor.failure(response.status, bytes!.toString('utf8')) };
  }
  if (bytes) {
    json = new LazyJson(bytes);
    // an error object needs the key "error": without those bytes the answer is not one, and
    // is parsed only when its value is asked for (once the client has it)
    const error = bytes.indexOf(ERROR_KEY) === -1 ? undefined : (json.value as { error?: unknown } | undefined)?.error;
    if (error && typeof error === 'object') {
      const text = bytes.toString('utf8');
      return { outcome: 'failed', failure: adaptor.speaks === 'openai' ? openAiFailureInOkBody(text) : adaptor.failure(response.status, text) };
    }
  }
  return { outcome: 'answered', answer: { channel, upstreamModel, response, json, requestId: (request.requestId ??= deps.newRequestId()), log: deps.log } };
}

/**
 * The native path: the client's request, as the adaptor's native path has it
 * (a few fields changed), to the vendor's URL for it, signed; a whole answer
 * passed back as it came (as `passThrough` does), a stream re-framed into the
 * client's wire as it arrives, so the route passes and bills it as it does
 * the answer of a channel that speaks the client's protocol. The stream is
 * read until its first event, so a failure at its start is the channel's.
 */
async function nativeCall(
  deps: DispatchDeps,
  adaptor: UpstreamAdaptor,
  path: NativePath,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<Attempt> {
  const config = channelConfigOf(channel);
  const requestId = (request.requestId ??= deps.newRequestId());
  const call: AdaptorCall = { channel: config, operation, model: upstreamModel, stream: request.stream === true, responseId: '', now: Math.floor(Date.now() / 1000), query: request.query };
  let target = path.target(config, call);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  let body: string;
  try {
    body = path.encode(request.body(upstreamModel), request.headers, call);
  } catch (error) {
    return { outcome: 'failed', failure: upstreamFailure(400, (error as Error).message, { type: 'invalid_request_error', code: 'invalid_request_error', retryable: false }) };
  }
  if (adaptor.sign) {
    target = await adaptor.sign(target, body, config, call);
    if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  }
  const url = new URL(target.url);
  let response: UpstreamResponse;
  try {
    response = await callUpstream(poolFor(url.origin), { path: url.pathname + url.search, headers: target.headers, body, requestId }, request.signal);
  } catch (error) {
    return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
  }
  if (response.status < 200 || response.status >= 300) return { outcome: 'failed', failure: adaptor.failure(response.status, response.bytes!.toString('utf8')) };
  const answered = (answer: UpstreamResponse, json?: UpstreamAnswer['json']): Attempt => ({
    outcome: 'answered',
    answer: { channel, upstreamModel, response: answer, json, requestId, log: deps.log },
  });
  if (response.bytes) return answered(response, new LazyJson(response.bytes));
  if (!response.stream) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered with an empty body') };
  const source = response.stream;
  source.on('error', ignoreError);
  if (!call.stream) {
    source.destroy();
    return { outcome: 'failed', failure: upstreamFailure(502, `the upstream answered a whole call with ${response.contentType || 'no content type'}`, { retryable: true }) };
  }
  const reframer = path.reframe(call);
  const early = await readNativeStart(source, reframer);
  if (early.error) {
    source.destroy();
    if (request.signal.aborted) return { outcome: 'aborted' };
    return { outcome: 'unanswered', error: early.error instanceof AnswerBrokeOff ? early.error : new AnswerBrokeOff(early.error.message, isUpstreamTimeout(early.error)) };
  }
  const failure = reframer.failure();
  if (failure && !reframer.begun()) {
    source.destroy();
    return { outcome: 'failed', failure };
  }
  if (early.ended && !reframer.begun()) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream stream ended without an answer', { retryable: true }) };
  const reframed = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, reframer.push(chunk));
    },
    flush(done) {
      try {
        done(null, reframer.end());
      } catch (error) {
        done(error as Error);
      }
    },
  });
  if (early.text) reframed.push(early.text);
  if (early.ended) reframed.end();
  // an upstream that breaks off errors the re-framed stream (the route then bills by its count); a client
  // that leaves destroys it, and the upstream call with it
  else pipeline(source, reframed, ignoreError);
  const answer = new UpstreamResponse(200, [], 'text/event-stream');
  answer.stream = reframed;
  return answered(answer);
}

/** Reads a native stream until its first event for the client, a failure, or the end; leaves it paused. */
function readNativeStart(source: Readable, reframer: NativeStreamReframer): Promise<{ text: string; ended: boolean; error?: Error }> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (ended: boolean, error?: Error) => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      if (!ended) source.pause();
      resolve({ text, ended, error });
    };
    const onData = (piece: Buffer) => {
      text += reframer.push(piece);
      if (reframer.failure() || reframer.begun()) finish(false);
    };
    const onEnd = () => {
      try {
        text += reframer.end();
        finish(true);
      } catch (error) {
        finish(true, error as Error);
      }
    };
    const onError = (error: Error) => finish(true, error);
    source.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/** A stand-in for the `response` of a translated answer (its body is the translation's). */
const TRANSLATED_RESPONSE = new UpstreamResponse(200, [], 'application/json');

/** A chunk worth holding the stream for: once one comes, the answer has begun for real. */
const hasSubstance = (chunk: ChatChunk) =>
  chunk.usage != null || chunk.choices.some((choice) => choice.finish_reason || choice.delta.content || choice.delta.reasoning_content || choice.delta.tool_calls?.length);

/**
 * A strict vendor refuses an output limit above its model's (a Claude Code
 * request asks 32,000 of any model): the limit is lowered to the catalog's
 * for the model the channel serves. A model the catalog does not know keeps
 * the client's limit.
 */
function withinModelOutput(request: ChatRequest, catalog: Readonly<Record<string, number>>): ChatRequest {
  const most = configuredMaxOutputTokens(request.model, catalog);
  if (most === undefined) return request;
  if (typeof request.max_tokens === 'number' && request.max_tokens > most) request.max_tokens = most;
  if (typeof request.max_completion_tokens === 'number' && request.max_completion_tokens > most) request.max_completion_tokens = most;
  return request;
}

/**
 * Embeddings from a model that takes one text a call (Bedrock's Titan): one
 * translated call per input, in order, joined into one answer (indexes in the
 * client's order, usage summed); the first failure is the attempt's.
 */
async function embeddingsOneByOne(deps: DispatchDeps, adaptor: UpstreamAdaptor, channel: RoutedChannel, upstreamModel: string, request: UpstreamRequest, inputs: unknown[]): Promise<Attempt> {
  const joined: EmbeddingResponse = { object: 'list', data: [], model: upstreamModel, usage: { prompt_tokens: 0, total_tokens: 0 } };
  let last: Attempt | undefined;
  for (const [index, input] of inputs.entries()) {
    last = await translated(deps, adaptor, channel, 'embeddings', upstreamModel, { ...request, json: { ...request.json, input } }, false);
    if (last.outcome !== 'answered') return last;
    const part = last.answer.translated?.embeddings;
    if (!part) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered an embedding with no vector', { retryable: true }) };
    for (const item of part.data) joined.data.push({ ...item, index: index + item.index });
    joined.usage.prompt_tokens += part.usage.prompt_tokens;
    joined.usage.total_tokens += part.usage.total_tokens;
    joined.model = part.model;
  }
  if (!last || last.outcome !== 'answered')
    return { outcome: 'failed', failure: upstreamFailure(400, 'no input to embed', { type: 'invalid_request_error', code: 'invalid_request_error', retryable: false }) };
  return { outcome: 'answered', answer: { ...last.answer, translated: { ...last.answer.translated!, embeddings: joined } } };
}

/**
 * The translated path, sent again once with a fresh credential when the
 * vendor answered 401 to a cached one (a Vertex AI access token revoked
 * before its time, its key rotated). A credential refused with a 401 is
 * dropped from the cache (translatedOnce), so no later call fails on it until
 * its renewal; as nothing reached the client yet, this call is sent once more
 * with a credential exchanged now. A fresh one refused too is the key's
 * failure, classified as any other, and is dropped as well.
 */
async function translated(deps: DispatchDeps, adaptor: UpstreamAdaptor, channel: RoutedChannel, operation: Operation, upstreamModel: string, request: UpstreamRequest, split = true): Promise<Attempt> {
  const attempt = await translatedOnce(deps, adaptor, channel, operation, upstreamModel, request, split);
  if (attempt.outcome !== 'failed' || attempt.staleCredential === undefined) return attempt;
  if (request.signal.aborted) return { outcome: 'aborted' };
  deps.log.info({ requestId: request.requestId, channelId: channel.id, status: attempt.failure.status }, 'the upstream refused a cached credential: trying once more with a fresh one');
  return translatedOnce(deps, adaptor, channel, operation, upstreamModel, request, split);
}

/** The built-in tools of a chat-form request this channel's vendor has nothing like (web search where it has no search), or undefined. */
function droppedToolsOf(adaptor: UpstreamAdaptor, upstreamModel: string, json: Record<string, unknown>): string[] | undefined {
  return json.web_search_options !== undefined && json.web_search_options !== null && adaptor.webSearch?.(upstreamModel) !== true ? ['web_search'] : undefined;
}

/** The translated path: the request encoded by the channel's adaptor, its answer decoded into OpenAI's shape. */
async function translatedOnce(
  deps: DispatchDeps,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
  split: boolean,
): Promise<Attempt> {
  const config = channelConfigOf(channel);
  const json = request.json!;
  if (split && operation === 'embeddings' && Array.isArray(json.input) && json.input.length > 1 && adaptor.embeddingsPerInput?.(upstreamModel)) {
    // a list of token ids is one input, not several
    if (!json.input.every((item) => typeof item === 'number')) return embeddingsOneByOne(deps, adaptor, channel, upstreamModel, request, json.input);
  }
  const clientStreams = operation === 'chat' && json.stream === true;
  // a request an adaptor cannot read is the client's fault, whichever channel: a 400 before anything is sent
  const problem = operation === 'chat' ? chatRequestProblem(json) : undefined;
  if (problem) return { outcome: 'failed', failure: upstreamFailure(400, problem.message, { type: 'invalid_request_error', code: 'invalid_request_error', retryable: false }) };
  let credential = credentialFor(adaptor, config);
  // a credential from the cache, which the vendor may have revoked since (one exchanged now is not retried)
  const cachedCredential = typeof credential === 'string' ? credential : undefined;
  if (credential instanceof Promise) credential = await credential;
  const used = typeof credential === 'string' ? credential : undefined;
  /** A refusal of the call. A 401 drops the credential from the cache; when it came from there, translated() retries once. */
  const refused = (status: number, body: string): Attempt => {
    if (status === 401 && used !== undefined) forgetCredential(adaptor, config, used);
    return { outcome: 'failed', failure: adaptor.failure(status, body), staleCredential: status === 401 ? cachedCredential : undefined };
  };
  if (isUpstreamFailure(credential)) return { outcome: 'failed', failure: credential };
  if (request.signal.aborted) return { outcome: 'aborted' };
  const dropped = operation === 'chat' ? droppedToolsOf(adaptor, upstreamModel, json) : undefined;
  const call: AdaptorCall = {
    channel: config,
    droppedTools: dropped,
    operation,
    model: upstreamModel,
    stream: clientStreams,
    responseId: `chatcmpl-${(request.requestId ??= deps.newRequestId()).replace(/[^A-Za-z0-9]/g, '')}`,
    now: Math.floor(Date.now() / 1000),
    credential,
    query: request.query,
    modelMaxOutputTokens: catalogMaxOutputTokens(upstreamModel),
  };
  let target = adaptor.target(config, call);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  let body: string;
  try {
    if (operation === 'chat') {
      const chat: ChatRequest = { ...(json as unknown as ChatRequest), model: upstreamModel };
      // a built-in tool this vendor has nothing like goes no further (the answer says so: call.droppedTools)
      if (dropped) delete chat.web_search_options;
      body = adaptor.encodeChat(withinModelOutput(chat, deps.options.json('ModelMaxOutputTokens')), call);
    } else if (operation === 'rerank') {
      if (!adaptor.encodeRerank || !request.rerank) return { outcome: 'failed', failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot encode rerank`, { retryable: true }) };
      body = adaptor.encodeRerank({ ...request.rerank, model: upstreamModel }, call);
    } else if (adaptor.encodeEmbeddings) {
      body = adaptor.encodeEmbeddings({ ...(json as unknown as EmbeddingRequest), model: upstreamModel }, call);
    } else {
      return { outcome: 'failed', failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot encode ${operation}`, { retryable: true }) };
    }
  } catch (error) {
    // an input the vendor's format cannot carry (token arrays to Gemini embeddings...): another channel may take it
    return {
      outcome: 'failed',
      failure: upstreamFailure(400, `this request cannot be sent to ${withArticle(adaptor.protocol)} channel: ${(error as Error).message}`, {
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        retryable: true,
      }),
    };
  }
  if (adaptor.sign) {
    target = await adaptor.sign(target, body, config, call);
    if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  }
  const answered = (translatedAnswer: TranslatedAnswer): Attempt => ({
    outcome: 'answered',
    answer: { channel, upstreamModel, response: TRANSLATED_RESPONSE, requestId: request.requestId!, log: deps.log, translated: translatedAnswer },
  });

  let source: Readable;
  /** The decoder of a followed stream (followedStream.ts), which knows when its usage has come. */
  let followedDecoder: ChatStreamDecoder | undefined;
  if (adaptor.transport === 'websocket') {
    try {
      source = await openWebSocketCall(target, body, request.signal, request.requestId);
    } catch (error) {
      if (request.signal.aborted) return { outcome: 'aborted' };
      if (error instanceof WebSocketRefused) return refused(error.status, error.body);
      return { outcome: 'unanswered', error };
    }
  } else {
    const url = new URL(target.url);
    let response: UpstreamResponse;
    try {
      response = await callUpstream(poolFor(url.origin), { path: url.pathname + url.search, headers: target.headers, body, requestId: request.requestId }, request.signal);
    } catch (error) {
      return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
    }
    if (response.status < 200 || response.status >= 300) return refused(response.status, response.bytes!.toString('utf8'));
    let following: Readable | undefined;
    if (clientStreams && adaptor.followStream) {
      // the answer only says where the stream is (Replicate's prediction): follow it (followedStream.ts)
      const followed = await followStream(adaptor, config, call, response, request.signal, request.requestId, deps.log);
      if ('failure' in followed) return { outcome: 'failed', failure: followed.failure };
      if ('aborted' in followed) return { outcome: 'aborted' };
      if ('error' in followed) return { outcome: 'unanswered', error: followed.error };
      followedDecoder = followed.decoder;
      following = followed.source;
    } else if (response.bytes && !(clientStreams && !response.contentType.includes('json'))) {
      // a whole answer (an error in a 200 included), even to a streamed call: some vendors answer a refusal as JSON
      const text = response.bytes.toString('utf8');
      if (operation === 'rerank') return rerankAttempt(adaptor, text, call, answered);
      if (operation === 'embeddings') {
        const decoded = adaptor.decodeEmbeddings!(text, call);
        return isUpstreamFailure(decoded) ? { outcome: 'failed', failure: decoded } : answered({ adaptor, call, embeddings: decoded });
      }
      if (clientStreams) {
        const decoder = adaptor.decodeChatStream(call);
        const held = [...decoder.push(response.bytes), ...decoder.end()];
        const failure = decoder.failure();
        if (failure) return { outcome: 'failed', failure };
        if (held.length > 0) return answered({ adaptor, call, stream: { decoder, held, source: emptySource(), ended: true } });
      }
      const decoded = adaptor.decodeChat(text, call);
      return isUpstreamFailure(decoded) ? { outcome: 'failed', failure: decoded } : answered({ adaptor, call, chat: decoded });
    }
    if (following) source = following;
    else if (!response.stream) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered with an empty body') };
    else source = response.stream;
    if (!clientStreams) {
      // a whole answer that came as something else than JSON (text/plain): read it, then decode it
      const read = await readAll(source).then(
        (whole) => whole,
        (error: Error) => error,
      );
      if (read instanceof Error) return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error: new AnswerBrokeOff(read.message, isUpstreamTimeout(read)) };
      const text = read.toString('utf8');
      if (operation === 'rerank') return rerankAttempt(adaptor, text, call, answered);
      const decoded = operation === 'embeddings' ? adaptor.decodeEmbeddings!(text, call) : adaptor.decodeChat(text, call);
      if (isUpstreamFailure(decoded)) return { outcome: 'failed', failure: decoded };
      return answered(operation === 'embeddings' ? { adaptor, call, embeddings: decoded as EmbeddingResponse } : { adaptor, call, chat: decoded as ChatResponse });
    }
  }
  // a stream (or a WebSocket's frames): read until it shows substance, fails, or ends; a non-streamed
  // call to a stream-only vendor reads it to the end (translate.ts folds it into one answer)
  // an error after the readers let go (the client left, the call was aborted) must not go unhandled
  source.on('error', ignoreError);
  const decoder = followedDecoder ?? adaptor.decodeChatStream(call);
  const early = await readStreamStart(source, decoder, !clientStreams);
  if (early.error) {
    source.destroy();
    return request.signal.aborted
      ? { outcome: 'aborted' }
      : {
          outcome: 'unanswered',
          error: early.error instanceof AnswerBrokeOff || early.error instanceof WebSocketTimeout ? early.error : new AnswerBrokeOff(early.error.message, isUpstreamTimeout(early.error)),
        };
  }
  const failure = decoder.failure();
  if (failure) {
    source.destroy();
    return { outcome: 'failed', failure };
  }
  if (early.ended && early.held.length === 0) {
    return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream stream ended without an answer') };
  }
  return answered({ adaptor, call, stream: { decoder, held: early.held, source, ended: early.ended } });
}

const ignoreError = () => undefined;

/** A whole rerank answer decoded by the channel's adaptor: answered, or the failure it holds. */
function rerankAttempt(adaptor: UpstreamAdaptor, text: string, call: AdaptorCall, answered: (translatedAnswer: TranslatedAnswer) => Attempt): Attempt {
  if (!adaptor.decodeRerank) return { outcome: 'failed', failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot decode rerank`, { retryable: true }) };
  const decoded = adaptor.decodeRerank(text, call);
  return isUpstreamFailure(decoded) ? { outcome: 'failed', failure: decoded } : answered({ adaptor, call, rerank: decoded });
}

/** The source of a stream that came whole: nothing more to read. */
const emptySource = () => Readable.from([]);

/**
 * Reads a stream into its decoder until a chunk of substance, a failure the
 * vendor reported, or the end (to the end when `whole`). Leaves it paused.
 */
function readStreamStart(source: Readable, decoder: ChatStreamDecoder, whole: boolean): Promise<{ held: ChatChunk[]; ended: boolean; error?: Error }> {
  return new Promise((resolve) => {
    const held: ChatChunk[] = [];
    const finish = (ended: boolean, error?: Error) => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      if (!ended) source.pause();
      resolve({ held, ended, error });
    };
    const onData = (piece: Buffer | string) => {
      const chunks = decoder.push(piece);
      held.push(...chunks);
      if (decoder.failure()) return finish(false);
      if (decoder.done()) {
        // the vendor's own end of answer: whatever follows (a socket's close) adds nothing
        held.push(...decoder.end());
        source.destroy();
        return finish(true);
      }
      if (!whole && chunks.some(hasSubstance)) finish(false);
    };
    const onEnd = () => {
      held.push(...decoder.end());
      finish(true);
    };
    const onError = (error: Error) => finish(true, error);
    source.on('data', onData).once('end', onEnd).once('error', onError);
  });
}
