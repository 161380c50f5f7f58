// The one sequence every /v1 relay route runs. A route declares what is its
// own (how it reads the request, what it reserves, what it asks upstream, how
// it answers and what that costs: a RelayRoute); the pipeline runs the steps
// in order, taking the money steps from billing (server/billing/accounting.ts)
// and owning the places:
//
//   authenticate   the key (from the codec's request), and a JSON object body for JSON routes
//   limits         a place among the caller's concurrent requests     hooks.beforeAdmit
//   read           route.read: the model and the route's own state
//   admit          the key may use the model, and its price           hooks.beforeReserve
//   rate limits    requests and tokens per minute (rateLimits.ts); sets the x-ratelimit-* headers
//   cache lookup   responseCache.ts, when on: a hit holds only its share of the price
//   reserve        route.price (route.reserveAgain when refused)      hooks.beforeDispatch
//   dispatch       route.upstream -> dispatch.ts (channels, retries), or the cache's answer
//   answer         route.answer writes to the client and calls call.settle(...) once
//   settle / log   queued after the answer; or the hold goes back      hooks.afterFinish
//
// A request that ends any other way once its key is known (refused by a limit
// or for quota, no channel, every channel failed, the client left, a crash)
// queues one error log (type 5, no charge) with the status the client got and
// the channels tried: that log is the usage rollups' error.
//
// Whatever way a request ends after its reservation (no upstream answered,
// the answer broke off, the client left, a crash), the hold is settled exactly
// once or given back exactly once, and the caller's place is given back.
// Answers are written to Node's response directly (Fastify's reply is
// hijacked), so the same code serves the Fastify routes and the fast path.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { InboundCodec, InboundError } from '../protocols/inbound';
import type { Operation } from '../protocols/types';
import { admitModel, release, reserve, settleLater, type Admission, type Bill } from '../billing/accounting';
import { modelOf, openJsonRequest } from './intake';
import { abortOnDisconnect } from './inflight';
import type { RelayContext, RelayOutcome } from './context';
import type { RelayTrace, UpstreamAnswer, UpstreamRequest } from './attempt';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/faults';
import { isRelayError, relayError, type RelayError } from './errors';
import type { Reservation } from '../billing/quota';
import { authenticateRelay, type RelayCaller } from './tokenAuth';
import { requestIdOf } from '../../common/requestId';
import type { DisconnectSignal } from './upstream';
import { setRateHeaders, type RateTicket } from './rateLimits';
import type { ChannelAttempt, LogDetails } from '../../common/records';
import { LogType } from '../../common/roles';
import { scrubLine } from './scrub';
import { MODEL_NAME_MAX } from './requestFields';
import { cachedDispatch, hitShare, lookUpBeforeHold, type CacheLookup } from './responseCache';

/** A request as both ways in deliver it: a Fastify route, or the fast path before Fastify. */
export interface RelayInput {
  headers: IncomingHttpHeaders;
  ip: string;
  /** A JSON route's parsed body; a multipart route's bytes. */
  body: unknown;
  /** The JSON body's bytes as the client sent them, when at hand: forwarded as they are when nothing in them changes. */
  raw?: Buffer;
  /** The :model of /v1/engines/:model/embeddings, or the model of Gemini's `models/{model}:{method}`. */
  pathModel?: string;
  /** The method of Gemini's `models/{model}:{method}` (it says whether the answer streams). */
  pathMethod?: string;
  /** The client's query parameters that matter upstream (`api-version`), when it sent any. */
  query?: Readonly<Record<string, string>>;
}

/** What a route declares: its own steps; the pipeline runs them between its shared ones. */
export interface RelayRoute<State> {
  /** What is asked upstream (routing skips channels whose adaptor lacks it; hooks and metrics name it). */
  operation: Operation;
  /** The client-side protocol: reads the request and the answer's usage, shapes errors. */
  inbound: InboundCodec;
  /** 'json': a JSON object body, checked with the key; 'multipart': the upload's bytes, read by the route. */
  body: 'json' | 'multipart';
  /** Sets `call.model` and returns the route's state for the later steps, or refuses the request (nothing held yet). */
  read(call: RelayCall<State>): State | RelayError;
  /** The most the request can cost: what is held before the call. */
  price(call: RelayCall<State>): number;
  /** The tokens charged to a tokens-per-minute limit when admitted (corrected by the settlement); absent: 0. */
  tokenEstimate?(call: RelayCall<State>): number;
  /**
   * When the hold at `price` was refused for lack of quota: another try (a
   * tighter count, a lowered output limit), or the refusal stands.
   */
  reserveAgain?(call: RelayCall<State>, refused: RelayError, hint: { alone: boolean }): Promise<Reservation | RelayError>;
  /** The request for dispatch (use `call.signal`, `call.admission.requestId`). */
  upstream(call: RelayCall<State>): UpstreamRequest;
  /**
   * Writes the answer and calls `call.settle` once with what it costs. An
   * error (the answer broke off before anything was written) gives the hold
   * back and goes to the client; returning without settling gives it back too.
   */
  answer(call: RelayCall<State>, answer: UpstreamAnswer): Promise<RelayError | undefined> | RelayError | undefined;
}

/** One request going through the pipeline: what each step found, for the next ones. */
export class RelayCall<State = unknown> {
  caller!: RelayCaller;
  /** The JSON body (a JSON route), else empty. */
  body: Record<string, unknown> = EMPTY_BODY;
  /** The model asked for (set by route.read). */
  model = '';
  state!: State;
  admission!: Admission;
  reservation!: Reservation;
  signal!: DisconnectSignal;
  /** The channel that answered, or failed last (0: none could be tried); undefined until dispatch ends. */
  channelId: number | undefined;
  /** The tokens-per-minute charge, corrected when the request is settled or given back. */
  rateTicket: RateTicket | undefined;
  /** What was billed, once settled (the metrics read it after the request). */
  bill: Bill | undefined;
  /** Date.now() of the answer's first streamed write (0: none yet, or the answer came whole). */
  firstChunkAt = 0;
  /** Date.now() as the request arrived. */
  startedAt = 0;
  /** The channels dispatch tried, when any failed. */
  attempts: ChannelAttempt[] | undefined;
  /** The model that answered, when the group's fallback list gave another than the one asked for. */
  fallbackModel: string | undefined;
  /** What the client was refused with, when it was. */
  error: RelayError | undefined;
  /** What the response cache made of the request before its hold (responseCache.ts); undefined with the cache off. */
  cacheLookup: CacheLookup | undefined;
  /** Set when the answer came from the response cache: the bill it makes (responseCache.ts). */
  billOfHit: ((bill: Bill) => Bill) | undefined;
  /** The call's trace when tracing is on (server/telemetry). */
  trace: RelayTrace | undefined;
  /** Set once the reservation is settled or given back: neither happens twice. */
  private closed = false;

  constructor(
    readonly ctx: RelayContext,
    readonly route: RelayRoute<State>,
    readonly input: RelayInput,
    readonly response: ServerResponse,
  ) {}

  /** Replaces the hold by the real charge and queues the log; once. */
  settle(bill: Bill): void {
    if (this.closed) throw new Error('a relayed request was settled after its reservation was closed');
    this.closed = true;
    if (this.billOfHit) bill = this.billOfHit(bill);
    this.bill = bill;
    settleLater(this.ctx, this.admission, this.reservation, bill, {
      protocol: this.route.inbound.protocol,
      operation: this.route.operation,
      ttftMs: this.firstChunkAt > 0 ? this.firstChunkAt - this.startedAt : undefined,
      attempts: this.attempts,
      fallbackModel: this.fallbackModel,
      traceId: this.trace?.traceId,
    });
    if (this.rateTicket) this.ctx.rateLimits.correct(this.rateTicket, bill.promptTokens + bill.completionTokens);
  }

  /** Gives the hold back, unless it was settled or given back already. */
  release(): Promise<void> | undefined {
    if (this.closed) return undefined;
    this.closed = true;
    if (this.rateTicket) this.ctx.rateLimits.correct(this.rateTicket, 0);
    return release(this.ctx, this.reservation);
  }

  get settledOrReleased(): boolean {
    return this.closed;
  }

  /** The client's error, in its protocol's shape. */
  fail(error: RelayError): void {
    this.error = error;
    writeInboundError(this.response, this.route.inbound, error);
  }
}

const EMPTY_BODY: Record<string, unknown> = Object.freeze({});

/** An error written straight to Node's response; a response already begun is cut instead. */
export function writeInboundError(
  response: ServerResponse,
  codec: InboundCodec,
  error: RelayError | (InboundError & { status: number; retryAfter?: number }),
): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = codec.errorBody(error);
  response.writeHead(error.status, {
    'content-type': codec.contentType,
    'content-length': Buffer.byteLength(text),
    ...(error.retryAfter !== undefined ? { 'retry-after': String(error.retryAfter) } : {}),
  });
  response.end(text);
}

/** Runs one request through the pipeline. Throws only on a failure nobody expected (the caller answers 500). */
export async function runRelay<State>(
  ctx: RelayContext,
  route: RelayRoute<State>,
  input: RelayInput,
  response: ServerResponse,
): Promise<void> {
  ctx.inFlight += 1;
  const call = new RelayCall(ctx, route, input, response);
  const startedAt = (call.startedAt = ctx.lastInteractiveAt = Date.now());
  if (ctx.tracing) call.trace = ctx.tracing(call);
  let outcome: RelayOutcome = 'refused';
  try {
    outcome = await authenticated(call);
  } catch (error) {
    // the caller answers it with answerCrash: the log says what the client gets
    call.error ??= crashError(error);
    throw error;
  } finally {
    ctx.inFlight -= 1;
    ctx.lastInteractiveAt = Date.now();
    if (outcome !== 'settled' && call.caller) recordFailure(call);
    if (ctx.hooks.afterFinish.length > 0)
      for (const hook of ctx.hooks.afterFinish) hook(outcome, route.operation, call.admission, startedAt, call.channelId, call);
  }
}

/** The status of an answer the client never waited for (nginx's "client closed request"). */
export const CLIENT_GONE_STATUS = 499;

/** The error log of a request refused or failed once its key was known: nothing charged, queued beside the settlements. */
function recordFailure(call: RelayCall<unknown>): void {
  const { caller, error, attempts, route, response } = call;
  const now = Date.now();
  // without an error, the client left, or (rarely) an answer was written whole and billed nothing
  const gone = !response.writableFinished;
  const status = error?.status ?? (gone ? CLIENT_GONE_STATUS : response.statusCode);
  const { code, content } = failureNote(error, gone);
  const details: LogDetails = { protocol: route.inbound.protocol, operation: route.operation, status };
  if (code !== undefined) details.errorCode = code;
  if (call.trace?.traceId) details.traceId = call.trace.traceId;
  if (attempts) {
    details.attempts = attempts;
    details.retries = Math.max(0, attempts.length - 1);
  }
  call.ctx.bookkeeping.recordFailure({
    userId: Number(caller.user.id),
    username: caller.user.username,
    type: LogType.error,
    content,
    quota: 0,
    tokenName: caller.token.name,
    tokenId: Number(caller.token.id),
    // a request refused as it was read may still name its model; a row the database refused would hold up the settlements it is written with
    modelName: (call.model || modelOf(call.body) || call.input.pathModel || '').slice(0, MODEL_NAME_MAX).replaceAll('\u0000', ''),
    channelId: call.channelId ?? 0,
    elapsedMs: now - call.startedAt,
    isStream: streamedCall(call),
    createdAt: Math.floor(now / 1000),
    requestId: requestIdOf(call.input.headers),
    details,
  });
}

/** A failure's error code and log text: its error's, or (without one) why nothing was billed. */
function failureNote(error: RelayError | undefined, gone: boolean): { code: string | undefined; content: string } {
  if (error) return { code: error.code === null ? undefined : String(error.code), content: scrubLine(error.message) };
  return gone
    ? { code: 'client_gone', content: 'the client left before the answer' }
    : { code: 'nothing_billed', content: 'the answer billed nothing' };
}

/** Whether the client asked for a stream; a body the codec cannot read says no. */
function streamedCall(call: RelayCall<unknown>): boolean {
  try {
    return call.route.body === 'json' && call.route.inbound.streamed(call.body, call.input.pathMethod);
  } catch {
    return false;
  }
}

/** Step: authenticate, then hold a place among the caller's concurrent requests for the rest. */
async function authenticated<State>(call: RelayCall<State>): Promise<RelayOutcome> {
  const { ctx, route } = call;
  // a protocol with its key elsewhere than the Authorization header says where
  const input = route.inbound.authorization
    ? { ...call.input, headers: { authorization: route.inbound.authorization(call.input.headers) } }
    : call.input;
  if (route.body === 'json') {
    let opened = openJsonRequest(ctx, input);
    if (opened instanceof Promise) opened = await opened;
    if (isRelayError(opened)) return refuse(call, opened);
    call.caller = opened.caller;
    if (opened.refused) return refuse(call, opened.refused);
    call.body = opened.body;
  } else {
    let caller = authenticateRelay(ctx.db, input, ctx.cache, ctx.ledger);
    if (caller instanceof Promise) caller = await caller;
    if (isRelayError(caller)) return refuse(call, caller);
    call.caller = caller;
  }
  let refused = ctx.limiter.enter(call.caller);
  if (refused instanceof Promise) refused = await refused;
  if (refused) return refuse(call, refused);
  try {
    return await admitted(call);
  } finally {
    ctx.limiter.leave(call.caller);
  }
}

/** Steps: read, admit, reserve, dispatch, answer, settle (or give the hold back). */
async function admitted<State>(call: RelayCall<State>): Promise<RelayOutcome> {
  const { ctx, route } = call;
  const { hooks } = ctx;
  if (hooks.beforeAdmit.length > 0) {
    const refused = firstRefusal(hooks.beforeAdmit, (hook) => hook(call.caller, route.operation));
    if (refused) return refuse(call, refused);
  }
  const state = route.read(call);
  if (isRelayError(state)) return refuse(call, state);
  call.state = state;
  const admission = admitModel(ctx, call.caller, call.model, requestIdOf(call.input.headers));
  if (isRelayError(admission)) return refuse(call, admission);
  call.admission = admission;
  if (hooks.beforeReserve.length > 0) {
    const refused = firstRefusal(hooks.beforeReserve, (hook) => hook(admission, route.operation));
    if (refused) return refuse(call, refused);
  }
  const unreserved = await reserved(call, admission);
  if (unreserved) return unreserved;
  return dispatchedAndAnswered(call, admission);
}

/** Steps: the caller's rate limits, then the reservation; the outcome when either refuses. */
async function reserved<State>(call: RelayCall<State>, admission: Admission): Promise<RelayOutcome | undefined> {
  const { ctx, route, response } = call;
  const limited = ctx.rateLimits.admit(call.caller, route.tokenEstimate?.(call) ?? 0);
  if (limited) {
    const decision = await limited;
    setRateHeaders(response, decision.headers);
    if (decision.refused) return refuse(call, decision.refused);
    call.rateTicket = decision.ticket;
  }
  const hint = { alone: ctx.inFlight === 1 };
  let reservation: Reservation | RelayError;
  try {
    const looking = lookUpBeforeHold(call);
    const lookup = (call.cacheLookup = looking && (await looking));
    // a hit holds only its share of the price: by default nothing, and the ledger is not written
    const price = lookup?.cached ? Math.ceil(route.price(call) * hitShare(ctx.options)) : route.price(call);
    reservation = await reserve(ctx, admission, price, hint);
    if (isRelayError(reservation) && reservation.code === 'insufficient_quota' && route.reserveAgain) {
      // held as if it were not cached; a lowered output limit changes what goes upstream, and so the key
      reservation = await route.reserveAgain(call, reservation, hint);
      if (lookup && !isRelayError(reservation)) call.cacheLookup = await lookUpBeforeHold(call);
    }
  } catch (error) {
    // the database failed the reservation: no tokens were used either
    if (call.rateTicket) ctx.rateLimits.correct(call.rateTicket, 0);
    throw error;
  }
  if (isRelayError(reservation)) {
    // refused for quota: it used no tokens, so its estimate goes back to the tokens-per-minute limit
    if (call.rateTicket) ctx.rateLimits.correct(call.rateTicket, 0);
    return refuse(call, reservation);
  }
  call.reservation = reservation;
  return undefined;
}

/** Steps: dispatch, answer, settle (or give the hold back). */
async function dispatchedAndAnswered<State>(call: RelayCall<State>, admission: Admission): Promise<RelayOutcome> {
  const { ctx, route, response } = call;
  const { hooks } = ctx;
  try {
    if (hooks.beforeDispatch.length > 0) {
      const refused = firstRefusal(hooks.beforeDispatch, (hook) => hook(admission, route.operation));
      if (refused) {
        await call.release();
        return refuse(call, refused);
      }
    }
    call.signal = abortOnDisconnect(ctx, response);
    // the cache's lookup built it already (after any lowered limit), only without the signal made just now
    const upstream = call.cacheLookup?.request ?? route.upstream(call);
    upstream.signal = call.signal;
    if (call.trace) upstream.trace = call.trace;
    const dispatched = await cachedDispatch(call, upstream, call.cacheLookup);
    call.attempts = dispatched.attempts;
    if (dispatched.outcome === 'answered') {
      call.channelId = dispatched.answer.channel.id;
      call.fallbackModel = dispatched.fallbackModel;
    } else if (dispatched.outcome === 'failed') call.channelId = dispatched.channelId;
    if (dispatched.outcome !== 'answered') {
      await call.release();
      // a client that left gets nothing more
      if (dispatched.outcome === 'failed') return refuse(call, dispatched.error);
      response.destroy();
      return 'aborted';
    }
    // only an answer that comes as a stream (an unread body, or a translated stream) can begin before it ends
    if (dispatched.answer.response.stream !== undefined || dispatched.answer.translated?.stream !== undefined) watchFirstChunk(call);
    let failed = route.answer(call, dispatched.answer);
    if (failed instanceof Promise) failed = await failed;
    if (failed) {
      await call.release();
      return refuse(call, failed);
    }
    if (!call.settledOrReleased) {
      // an answer step that billed nothing: the hold goes back
      await call.release();
      return 'aborted';
    }
    return 'settled';
  } catch (error) {
    // nobody expected this failure: whatever is still held goes back before the 500
    await call
      .release()
      ?.catch((releaseError: unknown) => ctx.log.error({ err: releaseError }, 'could not give back the hold of a failed request'));
    throw error;
  }
}

/** A failure nobody caught: the client gets a 500 in its protocol's shape (or a cut connection mid-answer), never a hang. */
export function answerCrash(ctx: RelayContext, codec: InboundCodec, response: ServerResponse, error: unknown): void {
  // a database restart or a killed connection: quick 503, the pool reconnects by itself
  if (isDatabaseUnavailable(error)) ctx.log.warn({ err: error }, 'relay: database unavailable');
  else ctx.log.error({ err: error }, 'relay failed');
  writeInboundError(response, codec, crashError(error));
}

const crashError = (error: unknown): RelayError =>
  isDatabaseUnavailable(error)
    ? relayError(503, DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable', 'server_error')
    : relayError(500, 'internal error', null, 'server_error');

/**
 * Notes the answer's first streamed write, for the log's time to first token and the firstChunk hooks (a
 * whole answer is written by end() alone and never counts): the write method is wrapped for that one call, then put back.
 */
function watchFirstChunk(call: RelayCall<unknown>): void {
  const { response } = call;
  // the original method, put back after the first write (and called on the response itself)
  // eslint-disable-next-line @typescript-eslint/unbound-method -- it is restored and called with response as this
  const write = response.write;
  response.write = function firstWrite(this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
    response.write = write;
    call.firstChunkAt = Date.now();
    for (const hook of call.ctx.hooks.firstChunk) hook(call);
    return (write as (...written: unknown[]) => boolean).apply(this, args);
  } as ServerResponse['write'];
}

function refuse(call: RelayCall<unknown>, error: RelayError): RelayOutcome {
  call.fail(error);
  return 'refused';
}

function firstRefusal<Hook>(hooks: Hook[], run: (hook: Hook) => RelayError | undefined): RelayError | undefined {
  for (const hook of hooks) {
    const refused = run(hook);
    if (refused) return refused;
  }
  return undefined;
}

/** A route as it is registered: the client's path (Fastify syntax, POST) and the steps it declares. */
export interface RelayDeclaration {
  path: string;
  /** Any state: each route has its own, and the pipeline never reads it. */
  route: RelayRoute<unknown>;
}
