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
// call it and what its failures mean; this file only decides which way to
// call it, each way a module of attempts/ with one entry point: the client's
// bytes to a channel that speaks its protocol (passThrough.ts), the client's
// protocol at a vendor's own URL for it (native.ts), the request encoded by
// the adaptor over HTTP or a WebSocket (translated.ts), one call per input for
// an embeddings model that takes one (embeddingsPerInput.ts). The types they
// share, and the answer a route gets, are attempt.ts's; what a failure means
// (for the client, the metrics, the routing book, the next try) is
// attemptVerdicts.ts's.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/faults';
import { operationOfPath, uncarriedToolsReason, withArticle } from '../protocols/shared';
import type { InboundProtocol, Operation, UpstreamAdaptor, UpstreamFailure } from '../protocols/types';
import { adaptorForChannelType } from '../protocols/upstream';
import { selectChannel, type RoutedChannel } from './channelSelect';
import type { RoutingBook } from './routing';
import { fallbacksOf, parseModelFallbacks, type ModelFallbacks } from '../../common/routing';
import { withChannelKey } from './channelKeyPick';
import { relayError, upstreamRelayError, type RelayError } from './errors';
import { failureKind, goesOn, unansweredError, unansweredKind, verdictOf } from './attemptVerdicts';
import { scrubLine, scrubSecrets } from './scrub';
import type { ChannelAttempt } from '../../common/records';
import type { GatewayMetrics } from '../services/metrics';
import type { RelayCache } from './relayCache';
import type { RelayCaller } from './tokenAuth';
import { mappedModel, secretsOf, type Attempt, type AttemptDeps, type UpstreamAnswer, type UpstreamRequest } from './attempt';
import { embeddingsPerInput, embedsPerInput } from './attempts/embeddingsPerInput';
import { nativeCall } from './attempts/native';
import { passThrough } from './attempts/passThrough';
import { droppedToolsOf, translated } from './attempts/translated';
import { videoWay } from './attempts/videoSubmit';

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

/** A call the shutdown cut before its answer came: nothing is charged, and the client hears why. */
const SHUTTING_DOWN = relayError(503, 'the gateway is shutting down; please retry', 'shutting_down', 'server_error');

/**
 * The most attempts a log lists (the first ones and the last): its row stays far below MySQL's 64 KiB TEXT
 * however many channels serve a model, and a row the database refused would hold up the settlements beside it.
 */
const MAX_LISTED_ATTEMPTS = 32;

/** Adds one channel's try to the list, as the log keeps it: the reason without the channel's key, URLs or addresses. */
function noteAttempt(
  tries: ChannelAttempt[] | undefined,
  channel: RoutedChannel,
  status: number,
  reason: string,
  sentAt: number,
): ChannelAttempt[] {
  const list = tries ?? [];
  if (list.length >= MAX_LISTED_ATTEMPTS) list.pop();
  list.push({
    channelId: channel.id,
    channelName: channel.name,
    status,
    reason: scrubLine(reason, secretsOf(channel.key)),
    ms: Date.now() - sentAt,
  });
  return list;
}

/** The operations a channel that does not speak the client's protocol can be asked for: those adaptors encode. */
const TRANSLATABLE = new Set<Operation>(['chat', 'embeddings', 'rerank']);

/** The operations always encoded by the channel's adaptor, even one that speaks the client's protocol: the vendors' shapes differ on one wire. */
const ALWAYS_ENCODED = new Set<Operation>(['rerank']);

/**
 * What dispatch works with, handed in rather than read off the app so that it
 * can be driven without a Fastify instance, and so what it touches is plain.
 */
export interface DispatchDeps extends AttemptDeps {
  db: Kysely<Database>;
  /** Absent when METRICS_ENABLED is off. */
  metrics?: GatewayMetrics;
  relayCache: RelayCache;
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
    operation: request.operation ?? operationOfPath(request.path),
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
  const { deps } = run;
  const { book } = deps;
  const picked = pickChannel(run, stage);
  const channel = picked instanceof Promise ? await picked : picked;
  if (!isChannel(channel)) return channel;
  const way = wayOn(run, channel, stage.model);
  if (way === SKIPPED) return way;
  const sentAt = Date.now();
  if (!book.empty) book.attempting(channel.id);
  const traced = run.request.trace?.attempt(channel, stage.model, run.request);
  const result = await way.call();
  traced?.end(result, deps.options);
  if (channel.keyId !== undefined) deps.noteKeyUse(channel.keyId, result.outcome === 'failed' || result.outcome === 'unanswered');
  if (!book.empty || result.outcome !== 'answered') {
    const verdict = verdictOf(result);
    book.record(channel.id, verdict, channel.keyId);
    // a key's own rate limit: the channel's other keys may answer this very request (the resting key is passed by)
    if (verdict === 'overloaded' && channel.keyId !== undefined) run.tried.pop();
  }
  if (result.outcome === 'answered') return servedBy(run, stage, channel, result, sentAt);
  if (result.outcome === 'aborted') return abortedOn(run, channel, sentAt);
  return result.outcome === 'unanswered'
    ? unanswered(run, channel, result.error, sentAt, attempt)
    : failed(run, channel, result.failure, sentAt, attempt);
}

/** The channel answered: the dispatch ends with its answer (affinity kept, the fallback model and the attempts noted). */
function servedBy(
  run: DispatchRun,
  stage: RouteStage,
  channel: RoutedChannel,
  result: Extract<Attempt, { outcome: 'answered' }>,
  sentAt: number,
): Dispatched {
  const { book } = run.deps;
  if (run.affinityKey !== undefined && (run.affinity?.channelId !== channel.id || run.affinity.keyId !== channel.keyId)) {
    book.served(run.affinityKey, channel.id, channel.keyId);
  }
  const served: Dispatched = stage.model === run.request.model ? result : { ...result, fallbackModel: stage.model };
  if (!run.tries) return served;
  return { ...served, attempts: noteAttempt(run.tries, channel, result.answer.response.status, 'answered', sentAt) };
}

/** The call was aborted: by the client leaving, or by the gateway shutting down (a failure the client is told of). */
function abortedOn(run: DispatchRun, channel: RoutedChannel, sentAt: number): Dispatched {
  const { request } = run;
  run.tries = noteAttempt(
    run.tries,
    channel,
    0,
    request.signal.byGateway ? SHUTTING_DOWN.message : 'the client left before the answer',
    sentAt,
  );
  return request.signal.byGateway
    ? { outcome: 'failed', error: SHUTTING_DOWN, channelId: channel.id, attempts: run.tries }
    : { outcome: 'aborted', attempts: run.tries };
}

const isChannel = (picked: RoutedChannel | Step): picked is RoutedChannel => typeof picked === 'object' && 'id' in picked;

/**
 * The stage's next channel (with one of its keys, for a channel of several), or the step that ends the stage's
 * try. A promise only when the database had to be read: a cached pick costs the hot path no turn of the loop.
 */
function pickChannel(run: DispatchRun, stage: RouteStage): RoutedChannel | Step | Promise<RoutedChannel | Step> {
  const { deps, caller } = run;
  let channel: ReturnType<typeof selectChannel>;
  try {
    channel = selectChannel(deps.db, caller.user.group, stage.model, {
      exclude: run.tried,
      pinnedChannelId: caller.pinnedChannelId,
      cache: deps.relayCache,
      book: deps.book,
      affinity: run.affinity?.channelId,
      resting: stage.resting,
    });
  } catch (error) {
    return databaseDown(run, error, run.tried.at(-1) ?? 0);
  }
  if (channel instanceof Promise) {
    return channel.then(
      (found) => withKey(run, stage, found),
      (error: unknown) => databaseDown(run, error, run.tried.at(-1) ?? 0),
    );
  }
  return withKey(run, stage, channel);
}

/** A database that cannot be reached ends the dispatch (the caller releases its reservation); any other error is thrown on. */
function databaseDown(run: DispatchRun, error: unknown, channelId: number): Step {
  if (!isDatabaseUnavailable(error)) throw error;
  return {
    outcome: 'failed',
    error: relayError(503, DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable', 'server_error'),
    channelId,
    attempts: run.tries,
  };
}

/** The picked channel, with one of its keys when it holds several (SKIPPED when none of them may be used now). */
function withKey(
  run: DispatchRun,
  stage: RouteStage,
  channel: RoutedChannel | undefined,
): RoutedChannel | Step | Promise<RoutedChannel | Step> {
  if (!channel) return NO_CHANNEL;
  run.tried.push(channel.id);
  if (!channel.multi_key) return channel;
  const { deps } = run;
  const { book } = deps;
  // a key resting after a 429 is passed by like a resting channel, unless this is the last resort
  const resting = stage.resting || book.empty ? undefined : (keyId: number) => book.keyRestingUntil(keyId) > 0;
  let keyed: ReturnType<typeof withChannelKey>;
  try {
    const preferred = run.affinity?.channelId === channel.id ? run.affinity.keyId : undefined;
    keyed = withChannelKey(deps.db, channel, run.deadKeys, Math.random, deps.relayCache, resting, preferred);
  } catch (error) {
    return databaseDown(run, error, channel.id);
  }
  if (keyed instanceof Promise) {
    return keyed.then(
      (found) => keyedOrSkipped(run, channel, resting, found),
      (error: unknown) => databaseDown(run, error, channel.id),
    );
  }
  return keyedOrSkipped(run, channel, resting, keyed);
}

/** A channel with its key; or, when every live key rests or is set aside, SKIPPED (the next channel may answer). */
function keyedOrSkipped(
  run: DispatchRun,
  channel: RoutedChannel,
  resting: ((keyId: number) => boolean) | undefined,
  keyed: RoutedChannel | undefined,
): RoutedChannel | Step {
  if (keyed) return keyed;
  // every live key rests: the channel rests with them (until the first wakes) and stays free for the last resort;
  // or every key is set aside (the channel is being disabled)
  if (resting && run.deps.book.restChannelWithKeys(channel.id)) run.tried.pop();
  return SKIPPED;
}

/**
 * How this channel is called for the request (a module of attempts/), or
 * SKIPPED when it cannot take it: its type does not offer the operation, or
 * its vendor's format would drop what the client relies on (the attempt is
 * not spent on it; one that speaks the client's protocol may still take it).
 */
function wayOn(run: DispatchRun, channel: RoutedChannel, model: string): { call: () => Promise<Attempt> } | typeof SKIPPED {
  const { deps, request, operation } = run;
  const adaptor = adaptorForChannelType(channel.type);
  const inbound = request.inbound ?? 'openai';
  const passes = speaksClient(adaptor, channel.type, inbound, operation);
  const asked = passes && request.passthroughOperation !== undefined ? request.passthroughOperation : operation;
  const upstreamModel = mappedModel(channel, model);
  // the vendor serves the client's protocol for this model at a URL of its own (Claude on Bedrock for a Messages client)
  const native = !passes && asked === 'chat' && adaptor?.native?.inbound === inbound && adaptor.native.serves(upstreamModel);
  // a video asked of a vendor whose Videos API is not OpenAI's (Veo) goes by its video adaptor
  const video = videoWay(deps, adaptor, asked, channel, upstreamModel, request);
  if (video) return video;
  if (
    !adaptor ||
    !asked ||
    !takesOperation(adaptor, channel.type, asked, passes || native || (TRANSLATABLE.has(asked) && !!request.json))
  ) {
    run.lastError = relayError(
      501,
      adaptor
        ? `channel type ${channel.type} does not offer ${asked ?? request.path}`
        : `channel type ${channel.type} is unknown to this relay`,
      'channel_type_unsupported',
      'server_error',
    );
    return SKIPPED;
  }
  if (passes) return { call: () => passThrough(deps, adaptor, channel, asked, upstreamModel, request) };
  if (native) return { call: () => nativeCall(deps, adaptor, adaptor.native!, channel, asked, upstreamModel, request) };
  return translatedWay(run, adaptor, channel, asked, upstreamModel);
}

/** Whether the channel takes the client's protocol as it is for the operation (its request then passes through). */
function speaksClient(
  adaptor: UpstreamAdaptor | undefined,
  type: number,
  inbound: InboundProtocol,
  operation: Operation | undefined,
): boolean {
  // OpenAI's chat decides on `speaks` alone; only another protocol asks the channel's type
  return (
    adaptor !== undefined &&
    !(operation && ALWAYS_ENCODED.has(operation)) &&
    (adaptor.speaks === inbound || adaptor.alsoSpeaks?.(type, inbound) === true)
  );
}

/** Whether the channel's type offers the operation, and some way (`reachable`: passed, native or translated) takes the request to it. */
function takesOperation(adaptor: UpstreamAdaptor, type: number, asked: Operation, reachable: boolean): boolean {
  return adaptor.operations.has(asked) && adaptor.servesOperation?.(type, asked) !== false && reachable;
}

/**
 * How a channel whose vendor does not speak the client's protocol is called:
 * the request translated (each input apart for embeddings the vendor takes one
 * at a time), or SKIPPED when the translation would drop what the client relies on.
 */
function translatedWay(
  run: DispatchRun,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  asked: Operation,
  upstreamModel: string,
): { call: () => Promise<Attempt> } | typeof SKIPPED {
  const { deps, caller, request } = run;
  const dropped = asked === 'chat' && request.json ? droppedToolsOf(adaptor, upstreamModel, request.json) : undefined;
  const refusesDrop = dropped !== undefined && deps.options.get('ToolRefusalGroups').split(',').includes(caller.user.group);
  const uncarried =
    asked === 'chat' ? (request.untranslatable?.() ?? (refusesDrop && dropped ? uncarriedToolsReason(dropped) : undefined)) : undefined;
  if (uncarried) {
    // dropping a tool the client relies on would change what the model can do behind its back
    run.lastError = relayError(
      400,
      `this request cannot be sent to ${withArticle(adaptor.protocol)} channel: ${uncarried}`,
      'unsupported_tool',
    );
    return SKIPPED;
  }
  if (asked === 'embeddings' && embedsPerInput(adaptor, upstreamModel, request.json)) {
    const { input } = request.json;
    return { call: () => embeddingsPerInput(deps, adaptor, channel, upstreamModel, request, input) };
  }
  return { call: () => translated(deps, adaptor, channel, asked, upstreamModel, request) };
}

/** No answer came (network, timeout, busy): the detail for the admin, the next channel may answer. */
function unanswered(run: DispatchRun, channel: RoutedChannel, error: unknown, sentAt: number, attempt: number): Step {
  const { deps, caller, request } = run;
  const requestId = (request.requestId ??= deps.newRequestId());
  run.tries = noteAttempt(run.tries, channel, 0, (error as Error).message, sentAt);
  // the detail (an internal address, a TLS complaint) is for the admin, in the log; nothing reached the client yet,
  // so each of these is the channel's failure and the next channel may answer
  deps.log.warn(
    {
      requestId,
      userId: caller.user.id,
      tokenId: caller.token.id,
      channelId: channel.id,
      attempt,
      detail: scrubSecrets((error as Error).message, secretsOf(channel.key)),
    },
    'upstream call failed',
  );
  run.lastError = unansweredError(error, requestId);
  deps.metrics?.upstreamError(channel.id, unansweredKind(error));
  return TRIED;
}

/** The channel refused: a dead key is set aside (or its channel disabled), and the request goes on when another channel may answer. */
async function failed(run: DispatchRun, channel: RoutedChannel, failure: UpstreamFailure, sentAt: number, attempt: number): Promise<Step> {
  const { deps, caller, request } = run;
  const requestId = (request.requestId ??= deps.newRequestId());
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
  deps.metrics?.upstreamError(channel.id, failureKind(failure));
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
