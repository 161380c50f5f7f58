// OpenAI's Realtime API relayed: GET /v1/realtime?model=... upgraded to a
// WebSocket and joined to one upstream session (an OpenAI or Azure channel,
// or a type whose row says it serves realtime). This file takes the upgrade
// and keeps the sessions open on this node; the session itself (frames, money
// per response, its end) is session.ts, the upstream's opening upstream.ts.
//
// Before the upgrade, as on the HTTP routes: the key (the Authorization
// header, or the browser's `openai-insecure-api-key.<key>` subprotocol), a
// place among the caller's concurrent requests (held for the session), the
// model's admission and price, and a balance that covers one response; then a
// channel is chosen and its upstream opened (the next channel on failure, up
// to RetryTimes more). Any refusal is an HTTP error, never a socket that opens
// and closes.
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { admitModel, balancesOf, type Admission } from '../../billing/accounting';
import { completionRatioFor } from '../../billing/prices';
import { realtimeBound, realtimeRatios } from '../../billing/realtimePrices';
import { speaksRealtimeBeta } from '../../protocols/upstream/realtime';
import type { RelayContext } from '../context';
import { isRelayError, relayError, type RelayError } from '../errors';
import { modelNameProblem } from '../requestFields';
import { authenticateRelay, type RelayCaller } from '../tokenAuth';
import { scrubLine } from '../scrub';
import { LogType } from '../../../common/roles';
import type { LogDetails } from '../../../common/records';
import { REALTIME_CLOSE, RealtimeSession } from './session';
import { loadWs, openUpstream } from './upstream';

/** The session limits (the RealtimeIdleSeconds and RealtimeMaxSeconds options). */
export interface RealtimeLimits {
  idleMs: number;
  maxMs: number;
}

/** The output a session's opening checks the balance for. */
const PROBE_OUTPUT_TOKENS = 16;

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
    const bound = firstBound(ctx, admission);
    if (!cachedBalanceCovers(caller, payer.limitedToken, bound) && (await balancesOf(ctx, payer)).available < bound) {
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
 * Whether the key's cached rows (at most a second old, relayCache.ts) show the balance covering `bound`:
 * then the database is not read. A shortfall there is read again from the database (and the node's quota
 * lease), so a balance topped up a moment ago opens its session. The gate keeps only an empty balance out:
 * each response is held on its own before it runs.
 */
function cachedBalanceCovers(caller: RelayCaller, limitedToken: boolean, bound: number): boolean {
  const userQuota = Number(caller.user.quota);
  const available = limitedToken ? Math.min(userQuota, Number(caller.token.remain_quota)) : userQuota;
  return available >= bound;
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
