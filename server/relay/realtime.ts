// OpenAI's Realtime API relayed: GET /v1/realtime?model=... upgraded to a
// WebSocket and joined to one upstream session (an OpenAI or Azure channel,
// or a type whose row says it serves realtime). Frames pass both ways as they
// came, text and binary; the relay only reads the few events that matter for
// money (protocols/upstream/realtime.ts finds them without parsing the rest).
//
// Before the upgrade, as on the HTTP routes: the key (the Authorization
// header, or the browser's `openai-insecure-api-key.<key>` subprotocol), a
// place among the caller's concurrent requests (held for the session), the
// model's admission and price, and a balance that covers one response; then a
// channel is chosen and its upstream opened (the next channel on failure, up
// to RetryTimes more). Any refusal is an HTTP error, never a socket that opens
// and closes.
//
// Money, per response: a client's `response.create` is forwarded only once a
// bound for it is held (billing/realtimePrices.ts); a response the server
// starts by itself (server VAD) is held for at `response.created`. Each
// `response.done` settles its hold with the usage it reports and writes its
// own consume log. A `response.create` the balance cannot cover is not
// forwarded: the client gets an `error` event, and the session is closed
// (1008) once the responses in flight are done and settled. Whatever way the
// session ends (client gone, upstream gone, a limit, shutdown), responses in
// flight are cancelled upstream and given a moment to report their usage,
// then every hold still open goes back, except a response's that had begun:
// one whose usage never came (the upstream dropped, or did not answer the
// cancel in time) is billed as the HTTP routes bill a stream the upstream cut,
// at the gateway's own count of its input and of the output that passed to the
// client, and its log is marked estimated and cut off.
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { default as WebSocket, RawData, WebSocketServer } from 'ws';
import { admitModel, balancesOf, release, reserve, settleLater, type Admission } from '../billing/accounting';
import { catalogMaxOutputTokens, contextWindowFor } from '../billing/catalog';
import { completionRatioFor } from '../billing/prices';
import { realtimeBound, realtimeCharge, realtimeRatios } from '../billing/realtimePrices';
import type { Reservation } from '../billing/quota';
import { isUpstreamFailure, type HttpTarget } from '../protocols/types';
import {
  audioBytesPerSecond,
  namesAudioFormat,
  outputLimitOf,
  REALTIME_AUDIO_TOKENS_PER_SECOND,
  realtimeClientInput,
  realtimeErrorEvent,
  realtimeOutputDelta,
  realtimeTarget,
  realtimeUsage,
  servesRealtime,
  speaksRealtimeBeta,
  watchedClientEvent,
  watchedServerEvent,
  type RealtimeClientInput,
  type RealtimeUsage,
} from '../protocols/upstream/realtime';
import { countTextTokens } from '../protocols/inbound/tokenCount';
import { channelConfigOf, mappedModel } from './attempt';
import { selectChannel, type RoutedChannel } from './channelSelect';
import { withChannelKey } from './channelKeyPick';
import type { RelayContext } from './context';
import { isRelayError, relayError, type RelayError } from './errors';
import { modelNameProblem } from './requestFields';
import { authenticateRelay, type RelayCaller } from './tokenAuth';
import { upstreamSettings } from './upstream';
import { scrubLine } from './scrub';
import { LogType } from '../../common/roles';
import type { LogDetails } from '../../common/records';

/** The session limits (the RealtimeIdleSeconds and RealtimeMaxSeconds options). */
export interface RealtimeLimits {
  idleMs: number;
  maxMs: number;
}

/** Close codes the relay itself uses (docs/relay.md, "Realtime"). */
export const REALTIME_CLOSE = {
  insufficientQuota: 1008,
  shutdown: 1001,
  idle: 4408,
  tooLong: 4410,
  upstreamFailed: 1011,
} as const;

/** The bytes that may name a response.create (watchedClientEvent reads such a frame). */
const RESPONSE_CREATE_MARK = '"response.create"';
/** Output tokens held for a response when neither the client nor the catalog gives a limit. */
const DEFAULT_OUTPUT_BOUND = 4096;
/** The output a session's opening checks the balance for. */
const PROBE_OUTPUT_TOKENS = 16;
/** The input held for a response when the catalog knows no context window. */
const DEFAULT_CONTEXT_WINDOW = 128_000;
/** How long a response in flight may take to report its usage once the session ends. */
const CANCEL_GRACE_MS = 2_000;
/** Bytes queued towards one side before the other side is paused, and resumed below the low mark. */
const HIGH_WATER = 1 << 20;
const LOW_WATER = 1 << 18;

/** One response's hold and what it was asked with. */
interface Hold {
  admission: Admission;
  reservation: Reservation;
  /** The client's event_id of its response.create, when it gave one: an error about it gives the hold back. */
  eventId?: string;
  closed: boolean;
}

/** The conversation a response started from, as the gateway counts it (used only when its usage never comes). */
interface InputCount {
  /** Text and audio tokens of the conversation as the upstream last reported it (a response.done's input plus output). */
  reportedText: number;
  reportedAudio: number;
  /** Text added since (the session's instructions too while nothing is reported), counted with the tokenizer only when needed. */
  texts: string[];
  /** Seconds of input audio added since. */
  audioSeconds: number;
}

/** A response the upstream began: its input when it began, and the output that passed to the client. */
interface ResponseCount {
  input: InputCount;
  /** How far into the session's additions its input reached: they leave the count once its usage is reported. */
  mark: { texts: number; audioSeconds: number };
  /** Text by output part (text, transcript, function-call arguments). */
  outputTexts: Map<string, string>;
  outputAudioSeconds: number;
}

/** Tokens for seconds of audio at a rate, rounded up, without float noise turning 6 into 7. */
const audioTokens = (seconds: number, perSecond: number) => Math.ceil(Number((seconds * perSecond).toFixed(6)));

/** A WebSocket's readyState values (ws's CONNECTING and .OPEN, as the standard numbers them). */
const CONNECTING = 0;
const OPEN = 1;

/** ws, loaded at the first upgrade: a gateway that never opens a realtime session does not carry it (about 1.5 MiB of heap). */
let wsModule: Promise<typeof import('ws')> | undefined;
const loadWs = () => (wsModule ??= import('ws'));

/** The sessions open on this node, so a shutdown can end them (and give back what they hold) before the ledger closes. */
export class RealtimeSessions {
  readonly open = new Set<RealtimeSession>();
  /** The upgrade handler, made at the first upgrade. */
  private server: WebSocketServer | undefined;

  async upgrader(): Promise<WebSocketServer> {
    if (this.server) return this.server;
    const { WebSocketServer } = await loadWs();
    this.server ??= new WebSocketServer({
      noServer: true,
      // the browser form names `realtime` among its subprotocols (with the key and the beta flag): that one is answered
      handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false),
      maxPayload: 16 * 1024 * 1024,
    });
    return this.server;
  }

  constructor(
    readonly ctx: RelayContext,
    readonly limits: () => RealtimeLimits,
    /** Whether X-Forwarded-For is believed (TRUSTED_PROXY), as for the HTTP routes. */
    readonly trustProxy = false,
  ) {}

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((session) => session.end(REALTIME_CLOSE.shutdown, 'server shutting down')));
    this.server?.close();
  }
}

/** Writes an HTTP refusal on a socket that asked to upgrade. */
function refuseUpgrade(socket: Duplex, error: RelayError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } });
  const retry = error.retryAfter !== undefined ? `Retry-After: ${error.retryAfter}\r\n` : '';
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}

/** The key as a Bearer header: the Authorization header, or the subprotocol `openai-insecure-api-key.<key>` browsers send. */
export function realtimeAuthorization(headers: IncomingMessage['headers']): string | undefined {
  if (headers.authorization) return headers.authorization;
  const protocols = (headers['sec-websocket-protocol'] ?? '').split(',').map((part) => part.trim());
  const key = protocols.find((protocol) => protocol.startsWith('openai-insecure-api-key.'));
  return key ? `Bearer ${key.slice('openai-insecure-api-key.'.length)}` : undefined;
}

/** The client's address: behind a trusted proxy the first X-Forwarded-For entry (as Fastify reads it), else the socket's. */
function clientAddress(request: IncomingMessage, trustProxy: boolean): string {
  const forwarded = request.headers['x-forwarded-for'];
  const first = trustProxy && typeof forwarded === 'string' ? forwarded.split(',')[0].trim() : '';
  return first || request.socket.remoteAddress || '';
}

/** The largest response a session holds for: the client's limit, else the catalog's, else DEFAULT_OUTPUT_BOUND. */
const outputBoundOf = (model: string, limit: number | undefined) => limit ?? catalogMaxOutputTokens(model) ?? DEFAULT_OUTPUT_BOUND;

/** Handles one upgrade request on the gateway's server; answers every path (404 for anything but /v1/realtime). */
export async function handleRealtimeUpgrade(
  sessions: RealtimeSessions,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const { ctx } = sessions;
  socket.on('error', () => socket.destroy());
  const upgrader = await sessions.upgrader();
  const url = new URL(request.url ?? '/', 'http://gateway');
  if (url.pathname.replace(/\/+$/, '') !== '/v1/realtime')
    return refuseUpgrade(socket, relayError(404, `no WebSocket at ${url.pathname}`, 'not_found'));
  const model = url.searchParams.get('model') ?? '';
  if (!model)
    return refuseUpgrade(socket, relayError(400, 'the model query parameter is required: /v1/realtime?model=...', 'invalid_request_error'));
  const badName = modelNameProblem(model);
  if (badName) return refuseUpgrade(socket, badName);
  const headers = { authorization: realtimeAuthorization(request.headers) };
  const ip = clientAddress(request, sessions.trustProxy);
  const caller = await authenticateRelay(ctx.db, { ip, headers }, ctx.cache, ctx.ledger);
  if (isRelayError(caller)) return refuseUpgrade(socket, caller);
  const startedAt = Date.now();
  const requestId =
    typeof request.headers['x-request-id'] === 'string' && /^[\w.:-]{1,128}$/.test(request.headers['x-request-id'])
      ? request.headers['x-request-id']
      : ctx.newRequestId();
  // once the key is known, a refusal is an error log too, as on the HTTP routes
  const refuse = (error: RelayError) => {
    recordRefusal(ctx, caller, model, requestId, error, startedAt);
    refuseUpgrade(socket, error);
  };
  // a session counts as one request against the key's requests per minute
  const limited = ctx.rateLimits.admit(caller, 0);
  if (limited) {
    const decision = await limited;
    if (decision.refused) return refuse(decision.refused);
  }
  let refused = ctx.limiter.enter(caller);
  if (refused instanceof Promise) refused = await refused;
  if (refused) return refuse(refused);
  let session: RealtimeSession | undefined;
  try {
    const admission = admitModel(ctx, caller, model, requestId);
    if (isRelayError(admission)) return refuse(admission);
    // the balance must cover a short response before a session opens: read, not held (a hold on
    // PostgreSQL and MySQL would take a quota lease that the first response then could not use)
    const payer = {
      userId: Number(caller.user.id),
      tokenId: Number(caller.token.id),
      limitedToken: Number(caller.token.unlimited_quota) !== 1,
    };
    if ((await balancesOf(ctx, payer)).available < firstBound(ctx, admission)) {
      return refuse(relayError(429, 'the quota cannot cover a realtime response', 'insufficient_quota', 'insufficient_quota'));
    }
    const query = url.searchParams.get('api-version');
    const opened = await openUpstream(
      ctx,
      caller,
      model,
      query ? { 'api-version': query } : {},
      socket,
      requestId,
      speaksRealtimeBeta(request.headers),
    );
    if (isRelayError(opened)) return refuse(opened);
    if (socket.destroyed) {
      opened.upstream.terminate();
      return;
    }
    session = new RealtimeSession(sessions, caller, model, requestId, opened.channel, opened.upstream, opened.early);
    const started = session;
    socket.once('close', () => started.abandon());
    upgrader.handleUpgrade(request, socket, head, (client) => started.start(client));
  } finally {
    // the place is the session's while it lives; anything that never became one gives it back now
    if (!session) ctx.limiter.leave(caller);
  }
}

/** The error log of a session refused once its key was known: nothing charged, queued beside the settlements. */
function recordRefusal(
  ctx: RelayContext,
  caller: RelayCaller,
  model: string,
  requestId: string,
  error: RelayError,
  startedAt: number,
): void {
  const now = Date.now();
  const details: LogDetails = { protocol: 'openai', operation: 'realtime', status: error.status };
  if (error.code !== null && error.code !== undefined) details.errorCode = String(error.code);
  ctx.bookkeeping.recordFailure({
    userId: Number(caller.user.id),
    username: caller.user.username,
    type: LogType.error,
    content: scrubLine(error.message),
    quota: 0,
    tokenName: caller.token.name,
    tokenId: Number(caller.token.id),
    modelName: model,
    channelId: 0,
    elapsedMs: now - startedAt,
    isStream: true,
    createdAt: Math.floor(now / 1000),
    requestId,
    details,
  });
}

/**
 * What the balance must cover for a session to open: a short response
 * (PROBE_OUTPUT_TOKENS of audio). Each response is held for its own bound as
 * it starts; this only keeps an empty balance from opening sessions.
 */
function firstBound(ctx: RelayContext, admission: Admission): number {
  const ratios = realtimeRatios(admission, completionRatioFor(admission.model, ctx.options.json('CompletionRatio')));
  return realtimeBound(ratios, 0, PROBE_OUTPUT_TOKENS);
}

interface OpenedUpstream {
  channel: RoutedChannel;
  upstream: WebSocket;
  /** Frames the upstream sent before the client's side was open (session.created). */
  early: Array<{ data: Buffer; isBinary: boolean }>;
}

/** Picks a channel that serves realtime and opens its session; the next channel on failure, up to RetryTimes more. */
async function openUpstream(
  ctx: RelayContext,
  caller: RelayCaller,
  model: string,
  query: Record<string, string>,
  client: Duplex,
  requestId: string,
  beta: boolean,
): Promise<OpenedUpstream | RelayError> {
  const exclude: number[] = [];
  let tries = Math.max(0, ctx.options.number('RetryTimes')) + 1;
  let lastError = relayError(503, `no channel available for model ${model}`, 'model_not_available', 'server_error');
  while (tries > 0 && !client.destroyed) {
    let picked = selectChannel(ctx.db, caller.user.group, model, {
      exclude,
      pinnedChannelId: caller.pinnedChannelId,
      cache: ctx.cache,
      book: ctx.routing,
    });
    if (picked instanceof Promise) picked = await picked;
    if (!picked) break;
    exclude.push(picked.id);
    // a channel of a type that serves no realtime is passed by without counting as a try
    if (!servesRealtime(picked.type)) continue;
    tries -= 1;
    let channel: RoutedChannel | undefined = picked;
    if (picked.multi_key) {
      const keyed = withChannelKey(ctx.db, picked, [], Math.random, ctx.cache);
      channel = keyed instanceof Promise ? await keyed : keyed;
      if (!channel) continue;
    }
    const target = realtimeTarget(channelConfigOf(channel), mappedModel(channel, model), query, beta);
    if (isUpstreamFailure(target)) {
      ctx.log.warn({ channelId: channel.id, requestId }, `realtime: ${target.message}`);
      continue;
    }
    const result = await connect(target, requestId, client);
    if ('upstream' in result) return { channel, ...result };
    ctx.log.warn(
      { channelId: channel.id, requestId, status: result.status },
      `realtime: the upstream refused the session: ${result.message}`,
    );
    lastError =
      result.status === 400 || result.status === 404
        ? relayError(result.status, `the upstream refused the session (request id ${requestId})`, 'invalid_request_error')
        : relayError(502, `the upstream service could not open the session (request id ${requestId})`, 'upstream_error', 'server_error');
  }
  return lastError;
}

/** Opens the upstream WebSocket; resolves once it is open, or with why not. */
async function connect(
  target: HttpTarget,
  requestId: string,
  client: Duplex,
): Promise<Omit<OpenedUpstream, 'channel'> | { status: number; message: string }> {
  const { default: WebSocket } = await loadWs();
  return new Promise((resolve) => {
    const early: OpenedUpstream['early'] = [];
    const upstream = new WebSocket(target.url, {
      headers: { ...target.headers, 'x-request-id': requestId },
      handshakeTimeout: upstreamSettings().connectTimeoutMs,
      maxPayload: 16 * 1024 * 1024,
    });
    let settled = false;
    const done = (value: Omit<OpenedUpstream, 'channel'> | { status: number; message: string }) => {
      if (settled) return;
      settled = true;
      client.off('close', clientLeft);
      resolve(value);
    };
    // the client may leave while the upstream is being opened
    const clientLeft = () => {
      upstream.terminate();
      done({ status: 499, message: 'the client left' });
    };
    client.once('close', clientLeft);
    upstream.on('message', (data: RawData, isBinary: boolean) => early.push({ data: data as Buffer, isBinary }));
    upstream.once('open', () => done({ upstream, early }));
    upstream.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done({ status: response.statusCode ?? 502, message: Buffer.concat(chunks).toString('utf8').slice(0, 500) }));
      response.on('error', (error) => done({ status: 502, message: error.message }));
      upstream.terminate();
    });
    upstream.on('error', (error) => done({ status: 502, message: error.message }));
  });
}

/** A close code one side may send on for the other: its own, when it may be sent, else `fallback`. */
function sendableCode(code: number, fallback: number): number {
  return (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999) ? code : fallback;
}

/** A close reason within the 123 bytes a close frame allows. */
function closeReason(reason: string): string {
  let text = reason;
  while (Buffer.byteLength(text) > 123) text = text.slice(0, -1);
  return text;
}

/**
 * The most tokens a client frame can add to the conversation: its bytes (no
 * token stands for less than one), except an audio append, whose base64 audio
 * is billed by its seconds (about 64k characters a second of PCM16, some ten
 * tokens): one token per 1,000 bytes. The frame's type is read from the frame
 * parsed (`input`), never from a substring a text could carry.
 */
function tokensOfClientFrame(frame: Buffer, input: RealtimeClientInput | undefined): number {
  if (input?.bufferedAudioBytes !== undefined) return Math.ceil(frame.length / 1000);
  // an item's audio parts are audio too: their base64 at the same rate, the rest of the frame by its bytes
  const audioCharacters = Math.min(frame.length, Math.ceil((input?.itemAudioBytes ?? 0) / 3) * 4);
  return frame.length - audioCharacters + Math.ceil(audioCharacters / 1000);
}

export class RealtimeSession {
  private client: WebSocket | undefined;
  private readonly ctx: RelayContext;
  private readonly pending: Hold[] = [];
  private readonly active = new Map<string, Hold>();
  /** Client frames wait here in order while a response.create is being held for. */
  private clientChain: Promise<void> = Promise.resolve();
  /** Frames waiting in clientChain. */
  private queued = 0;
  /** Holds and settlements, in the order their events came. */
  private moneyChain: Promise<void> = Promise.resolve();
  /** The session's output limit (session.update / session.created), undefined for "inf". */
  private sessionOutputLimit: number | undefined;
  /** The conversation's size after the last response (its input and output tokens). */
  private context = 0;
  /** Tokens the client added since the last hold (an estimate). */
  private added = 0;
  /** Set when the session is to close once nothing is in flight. */
  private closing: { code: number; reason: string } | undefined;
  private ended: Promise<void> | undefined;
  /** Set once every hold open at the end went back: a hold made later goes straight back too. */
  private wound = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;
  // the gateway's own count of the conversation, for a response whose usage never comes
  private instructions = '';
  private inputBytesPerSecond = audioBytesPerSecond(undefined, 'input');
  private outputBytesPerSecond = audioBytesPerSecond(undefined, 'output');
  /** The conversation's tokens as the last response.done reported them; undefined before any. */
  private reported: { text: number; audio: number } | undefined;
  /** Texts added since the last report; `droppedTexts` counts those removed from the front over the session. */
  private addedTexts: string[] = [];
  private droppedTexts = 0;
  /** Seconds of audio the conversation gained over the session, and how many of them a report has covered. */
  private addedAudioSeconds = 0;
  private reportedAudioSeconds = 0;
  /** Audio appended to the input buffer and not yet committed. */
  private bufferedAudioSeconds = 0;
  /** The responses in flight, by id: what they started from and what of them passed. */
  private readonly counts = new Map<string, ResponseCount>();

  constructor(
    private readonly sessions: RealtimeSessions,
    private readonly caller: RelayCaller,
    private readonly model: string,
    private readonly requestId: string,
    private readonly channel: RoutedChannel,
    private readonly upstream: WebSocket,
    private readonly early: Array<{ data: Buffer; isBinary: boolean }>,
  ) {
    this.ctx = sessions.ctx;
    sessions.open.add(this);
    this.upstream.removeAllListeners('message');
    this.upstream.on('message', (data: RawData, isBinary: boolean) => this.fromUpstream(data as Buffer, isBinary));
    this.upstream.on(
      'close',
      (code: number, reason: Buffer) =>
        void this.end(
          code === 1005 ? 1000 : sendableCode(code, REALTIME_CLOSE.upstreamFailed),
          reason.toString() || 'the upstream closed the session',
          'upstream',
        ),
    );
    this.upstream.on('error', (error) => {
      this.ctx.log.warn({ err: error, requestId: this.requestId }, 'realtime: upstream socket failed');
      void this.end(REALTIME_CLOSE.upstreamFailed, 'the upstream session failed', 'upstream');
    });
  }

  get inFlight(): number {
    return this.pending.length + this.active.size;
  }

  /** The client's socket went away before its side opened: the session ends with nothing to pass. */
  abandon(): void {
    if (!this.client) void this.end(1000, 'the client left', 'client');
  }

  start(client: WebSocket): void {
    if (this.ended) {
      client.close(1000, 'the session ended');
      return;
    }
    this.client = client;
    client.on('message', (data: RawData, isBinary: boolean) => this.fromClient(data as Buffer, isBinary));
    client.on(
      'close',
      (code: number, reason: Buffer) =>
        void this.end(sendableCode(code, 1000), reason.toString() || 'the client closed the session', 'client'),
    );
    client.on('error', () => void this.end(1000, 'the client connection failed', 'client'));
    const { idleMs, maxMs } = this.sessions.limits();
    if (maxMs > 0)
      this.maxTimer = setTimeout(
        () => void this.end(REALTIME_CLOSE.tooLong, `the session reached its time limit of ${Math.round(maxMs / 1000)} s`),
        maxMs,
      );
    this.idleMs = idleMs;
    this.touch();
    for (const { data, isBinary } of this.early.splice(0)) this.fromUpstream(data, isBinary);
  }

  private idleMs = 0;

  /** Any frame either way: the idle deadline starts again. */
  private touch(): void {
    if (this.idleMs <= 0 || this.ended) return;
    if (this.idleTimer) this.idleTimer.refresh();
    else
      this.idleTimer = setTimeout(
        () => void this.end(REALTIME_CLOSE.idle, `no frame for ${Math.round(this.idleMs / 1000)} s`),
        this.idleMs,
      );
  }

  /** Sends a frame on, pausing the sender while the receiver's queue is long. */
  private pass(to: WebSocket, from: WebSocket, data: Buffer, isBinary: boolean): void {
    if (to.readyState !== OPEN) return;
    to.send(data, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount < LOW_WATER) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER && !from.isPaused) from.pause();
  }

  private fromUpstream(data: Buffer, isBinary: boolean): void {
    // until the client's side is open, frames wait in order (session.created comes at once)
    if (!this.client) {
      this.early.push({ data, isBinary });
      return;
    }
    this.touch();
    if (!isBinary) {
      const delta = this.counts.size > 0 ? realtimeOutputDelta(data) : undefined;
      if (delta) this.countOutput(delta);
      else {
        const watched = watchedServerEvent(data);
        if (watched) this.onServerEvent(watched.type, watched.event);
      }
    }
    this.pass(this.client, this.upstream, data, isBinary);
  }

  private fromClient(data: Buffer, isBinary: boolean): void {
    this.touch();
    // most frames (audio, items) pass at once; a response.create, and whatever follows it until it is held, wait in order
    if (this.queued === 0 && (isBinary || !data.includes(RESPONSE_CREATE_MARK))) {
      if (!this.ended && this.client) this.passFromClient(data, isBinary);
      return;
    }
    this.queued += 1;
    this.clientChain = this.clientChain
      .then(() => this.clientFrame(data, isBinary))
      .catch((error: unknown) => this.crash(error))
      .finally(() => (this.queued -= 1));
  }

  private passFromClient(data: Buffer, isBinary: boolean): void {
    const input = isBinary ? undefined : realtimeClientInput(data);
    this.added += isBinary ? Math.ceil(data.length / 1000) : tokensOfClientFrame(data, input);
    if (input && this.upstream.readyState === OPEN) this.countInput(input);
    this.pass(this.upstream, this.client!, data, isBinary);
  }

  /** What a client frame adds to the conversation, in the gateway's count. */
  private countInput(input: RealtimeClientInput): void {
    if (input.bufferedAudioBytes) this.bufferedAudioSeconds += input.bufferedAudioBytes / this.inputBytesPerSecond;
    if (input.itemAudioBytes) this.addedAudioSeconds += input.itemAudioBytes / this.inputBytesPerSecond;
    if (input.texts) this.addedTexts.push(...input.texts);
  }

  /** An output delta on its way to the client: counted for its response. */
  private countOutput(delta: NonNullable<ReturnType<typeof realtimeOutputDelta>>): void {
    const count = this.counts.get(delta.responseId);
    if (!count || this.client?.readyState !== OPEN) return;
    if (delta.text) count.outputTexts.set(delta.part, (count.outputTexts.get(delta.part) ?? '') + delta.text);
    if (delta.audioBytes) count.outputAudioSeconds += delta.audioBytes / this.outputBytesPerSecond;
  }

  /** A response begins: the conversation it starts from, as counted now. */
  private startCount(responseId: string): void {
    const texts = this.reported ? [...this.addedTexts] : [this.instructions, ...this.addedTexts];
    this.counts.set(responseId, {
      input: {
        reportedText: this.reported?.text ?? 0,
        reportedAudio: this.reported?.audio ?? 0,
        texts: texts.filter(Boolean),
        audioSeconds: this.addedAudioSeconds - this.reportedAudioSeconds,
      },
      mark: { texts: this.droppedTexts + this.addedTexts.length, audioSeconds: this.addedAudioSeconds },
      outputTexts: new Map(),
      outputAudioSeconds: 0,
    });
  }

  /** A response reported its usage: the conversation is what it says, plus what was added after the response began. */
  private reportCount(responseId: string, usage: RealtimeUsage): void {
    const count = this.counts.get(responseId);
    this.counts.delete(responseId);
    if (!count || usage.inputTokens + usage.outputTokens === 0) return;
    this.reported = { text: usage.textInputTokens + usage.textOutputTokens, audio: usage.audioInputTokens + usage.audioOutputTokens };
    const drop = count.mark.texts - this.droppedTexts;
    if (drop > 0) {
      this.addedTexts.splice(0, drop);
      this.droppedTexts += drop;
    }
    this.reportedAudioSeconds = Math.max(this.reportedAudioSeconds, count.mark.audioSeconds);
  }

  private async clientFrame(data: Buffer, isBinary: boolean): Promise<void> {
    if (this.ended || !this.client) return;
    const watched = isBinary ? undefined : watchedClientEvent(data);
    if (watched?.type === 'response.create') {
      const eventId = typeof watched.event.event_id === 'string' ? watched.event.event_id : undefined;
      if (this.closing) {
        this.client.send(realtimeErrorEvent('session_closing', `the session is closing: ${this.closing.reason}`, eventId));
        return;
      }
      // later frames wait for this hold: nothing overtakes the response they may belong to
      this.client.pause();
      // the response's own instructions, input items and tools are billed as its input: the frame's bytes bound them
      const hold = await this.hold(outputLimitOf(watched.event.response), data.length).finally(() => this.client?.resume());
      if (isRelayError(hold)) {
        this.client.send(
          realtimeErrorEvent(
            hold.code === 'insufficient_quota' ? 'insufficient_quota' : String(hold.code ?? 'refused'),
            hold.message,
            eventId,
          ),
        );
        this.closeWhenIdle(
          REALTIME_CLOSE.insufficientQuota,
          hold.code === 'insufficient_quota' ? 'insufficient quota' : 'response refused',
        );
        return;
      }
      if (this.ended || this.wound) {
        await this.giveBack(hold);
        return;
      }
      hold.eventId = eventId;
      this.pending.push(hold);
      this.pass(this.upstream, this.client, data, isBinary);
      return;
    }
    this.passFromClient(data, isBinary);
  }

  /** Holds the bound of one response (`own`: tokens its response.create carries) at the prices in force now; a refusal when the balance cannot cover it. */
  private async hold(outputLimit: number | undefined, own = 0): Promise<Hold | RelayError> {
    const admission = admitModel(this.ctx, this.caller, this.model, this.requestId);
    if (isRelayError(admission)) return admission;
    const ratios = realtimeRatios(admission, completionRatioFor(this.model, this.ctx.options.json('CompletionRatio')));
    const input = Math.min(contextWindowFor(this.model) ?? DEFAULT_CONTEXT_WINDOW, this.context + this.added + own);
    const amount = realtimeBound(ratios, input, outputBoundOf(this.model, outputLimit ?? this.sessionOutputLimit));
    const reservation = await reserve(this.ctx, admission, amount);
    if (isRelayError(reservation)) return reservation;
    this.added = 0;
    return { admission, reservation, closed: false };
  }

  private onServerEvent(type: string, event: Record<string, unknown>): void {
    const response = (event.response ?? {}) as Record<string, unknown>;
    const responseId = typeof response.id === 'string' ? response.id : '';
    switch (type) {
      case 'session.created':
      case 'session.updated': {
        // the upstream's account of the session in force (a client's session.update is answered by session.updated)
        this.sessionOutputLimit = outputLimitOf(event.session);
        const session = (event.session ?? {}) as Record<string, unknown>;
        if (typeof session.instructions === 'string') this.instructions = session.instructions;
        if (namesAudioFormat(session, 'input')) this.inputBytesPerSecond = audioBytesPerSecond(session, 'input');
        if (namesAudioFormat(session, 'output')) this.outputBytesPerSecond = audioBytesPerSecond(session, 'output');
        return;
      }
      case 'input_audio_buffer.committed':
        this.addedAudioSeconds += this.bufferedAudioSeconds;
        this.bufferedAudioSeconds = 0;
        return;
      case 'input_audio_buffer.cleared':
        this.bufferedAudioSeconds = 0;
        return;
      case 'response.created':
        this.startCount(responseId);
        this.money(async () => {
          let hold = this.pending.shift();
          if (!hold) {
            // the server started it (server VAD): held now; if the balance cannot cover it, or the session is
            // closing, it is cancelled
            const held = this.closing
              ? relayError(409, `the session is closing: ${this.closing.reason}`, 'session_closing')
              : await this.hold(outputLimitOf(response));
            if (isRelayError(held)) {
              this.upstream.send(JSON.stringify({ type: 'response.cancel', response_id: responseId }));
              this.client?.send(realtimeErrorEvent(String(held.code), held.message));
              this.closeWhenIdle(REALTIME_CLOSE.insufficientQuota, 'insufficient quota');
              return;
            }
            hold = held;
          }
          // a session already wound up keeps nothing
          if (this.wound) return this.giveBack(hold);
          this.active.set(responseId, hold);
        });
        return;
      case 'response.done': {
        const usage = realtimeUsage(response);
        this.reportCount(responseId, usage);
        this.money(() => {
          const hold = this.active.get(responseId) ?? this.pending.shift();
          this.active.delete(responseId);
          if (!hold) return;
          this.context = usage.inputTokens + usage.outputTokens;
          this.settle(hold, usage, {
            detail: `realtime ${typeof response.status === 'string' ? response.status : 'completed'}: audio in ${usage.audioInputTokens}, audio out ${usage.audioOutputTokens}`,
          });
          if (this.closing && this.inFlight === 0) void this.end(this.closing.code, this.closing.reason);
        });
        return;
      }
      case 'error': {
        // a response.create the upstream refused never becomes a response: its hold goes back
        const about = (event.error as { event_id?: unknown } | undefined)?.event_id;
        if (typeof about !== 'string') return;
        this.money(async () => {
          const index = this.pending.findIndex((hold) => hold.eventId === about);
          if (index === -1) return;
          const [hold] = this.pending.splice(index, 1);
          await this.giveBack(hold);
          if (this.closing && this.inFlight === 0) void this.end(this.closing.code, this.closing.reason);
        });
        return;
      }
    }
  }

  private money(step: () => Promise<void> | void): void {
    this.moneyChain = this.moneyChain.then(step).catch((error: unknown) => this.crash(error));
  }

  /** Settles a hold at a usage: the upstream's report, or (estimated) the gateway's count of a response cut off. */
  private settle(hold: Hold, usage: RealtimeUsage, how: { detail: string; estimated?: boolean }): void {
    if (hold.closed) return;
    hold.closed = true;
    const ratios = realtimeRatios(hold.admission, completionRatioFor(this.model, this.ctx.options.json('CompletionRatio')));
    const { charge, formula } = realtimeCharge(ratios, usage);
    settleLater(
      this.ctx,
      hold.admission,
      hold.reservation,
      {
        channelId: this.channel.id,
        charge,
        promptTokens: usage.inputTokens,
        completionTokens: usage.outputTokens,
        isStream: true,
        estimated: how.estimated === true,
        detail: how.detail,
        formula,
      },
      { protocol: 'openai', operation: 'realtime' },
    );
  }

  /**
   * A response that began and never reported its usage: billed, as the HTTP routes bill a stream the upstream
   * cut, at the gateway's count (estimated, nothing cached): the conversation it started from (what the upstream
   * last reported, plus text added since by the model's tokenizer and audio at OpenAI's documented tokens per
   * second) and the output that passed to the client (text by the tokenizer, audio by its length).
   */
  private settleCutOff(hold: Hold, count: ResponseCount, why: string): void {
    const options = { approximate: this.ctx.options.bool('ApproximateTokenEnabled') };
    const tokens = (texts: Iterable<string>) => {
      let total = 0;
      for (const text of texts) total += countTextTokens(text, this.model, options);
      return total;
    };
    const textInput = count.input.reportedText + tokens(count.input.texts);
    const audioInput = count.input.reportedAudio + audioTokens(count.input.audioSeconds, REALTIME_AUDIO_TOKENS_PER_SECOND.input);
    const textOutput = tokens(count.outputTexts.values());
    const audioOutput = audioTokens(count.outputAudioSeconds, REALTIME_AUDIO_TOKENS_PER_SECOND.output);
    const usage: RealtimeUsage = {
      inputTokens: textInput + audioInput,
      outputTokens: textOutput + audioOutput,
      textInputTokens: textInput,
      audioInputTokens: audioInput,
      cachedTextInputTokens: 0,
      cachedAudioInputTokens: 0,
      textOutputTokens: textOutput,
      audioOutputTokens: audioOutput,
    };
    this.settle(hold, usage, {
      estimated: true,
      detail: `realtime cut off (${why}): billed at the gateway's count of its input and of the output that passed`,
    });
  }

  private async giveBack(hold: Hold): Promise<void> {
    if (hold.closed) return;
    hold.closed = true;
    await release(this.ctx, hold.reservation);
  }

  /** Closes the session once the responses in flight are done and settled; no new response is held meanwhile. */
  private closeWhenIdle(code: number, reason: string): void {
    this.closing ??= { code, reason };
    if (this.inFlight === 0) void this.end(code, reason);
  }

  private crash(error: unknown): void {
    this.ctx.log.error({ err: error, requestId: this.requestId }, 'realtime: the session failed');
    void this.end(REALTIME_CLOSE.upstreamFailed, 'gateway error');
  }

  /**
   * Ends the session: responses in flight are cancelled upstream and given
   * CANCEL_GRACE_MS to report their usage (unless the upstream is gone), the
   * upstream is closed, every hold still open goes back, then the client is
   * closed and the caller's place given back. Once; later calls wait for the first.
   */
  end(code: number, reason: string, closedBy?: 'client' | 'upstream'): Promise<void> {
    this.ended ??= this.finish(code, closeReason(reason), closedBy);
    return this.ended;
  }

  private async finish(code: number, reason: string, closedBy?: 'client' | 'upstream'): Promise<void> {
    clearTimeout(this.idleTimer);
    clearTimeout(this.maxTimer);
    this.closing ??= { code, reason };
    if (closedBy !== 'upstream' && this.inFlight > 0 && this.upstream.readyState === OPEN) {
      this.upstream.send(JSON.stringify({ type: 'response.cancel' }));
      await this.settledOrTimedOut();
    }
    if (this.upstream.readyState === OPEN || this.upstream.readyState === CONNECTING) {
      if (closedBy === 'client') this.upstream.close(code, reason);
      else this.upstream.close(1000, 'the session ended');
    }
    // what the chains are still doing finishes first, then nothing open stays held
    await this.clientChain;
    await this.moneyChain;
    this.wound = true;
    // a response that began and never reported its usage is billed at the gateway's count; one never begun goes back
    const why =
      closedBy === 'upstream'
        ? `the upstream ended the session before its usage came: ${code} ${reason}`
        : `no usage came within ${CANCEL_GRACE_MS / 1000} s of the session's end: ${code} ${reason}`;
    for (const [responseId, hold] of this.active) {
      const count = this.counts.get(responseId);
      if (count) this.settleCutOff(hold, count, why);
    }
    this.counts.clear();
    const open = [...this.pending.splice(0), ...this.active.values()];
    this.active.clear();
    await Promise.all(
      open.map((hold) =>
        this.giveBack(hold).catch((error: unknown) => this.ctx.log.error({ err: error }, 'realtime: could not give back a hold')),
      ),
    );
    // the client is closed last: by then what the session used is settled and nothing it held is held
    if (closedBy !== 'client' && this.client?.readyState === OPEN) this.client.close(code, reason);
    this.ctx.limiter.leave(this.caller);
    this.sessions.open.delete(this);
  }

  /** Waits until nothing is in flight (the money chain settled it), at most CANCEL_GRACE_MS. */
  private async settledOrTimedOut(): Promise<void> {
    const deadline = Date.now() + CANCEL_GRACE_MS;
    while (this.inFlight > 0 && Date.now() < deadline && this.upstream.readyState === OPEN) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await this.moneyChain;
    }
  }
}
