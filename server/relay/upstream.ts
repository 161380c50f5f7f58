// One undici connection pool per upstream origin, reused by every request,
// and the relay's own handler for a call through it.
//
// undici's request() wraps each call in an async resource, a promise and a
// Readable for the body, and parses the headers into an object: per request
// that cost more than the rest of the relay's JSON handling. The relay reads
// most answers whole anyway (an error status, or JSON that may hide an error
// object), so UpstreamHandler speaks undici's dispatch protocol itself: those
// answers arrive as one Buffer, and only an answer that is passed on as it
// arrives (an SSE stream, audio) gets a Readable, with backpressure that
// reaches the upstream socket.
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
// the settings and their defaults are part of the configuration (config.ts reads them from the environment)
import { DEFAULT_UPSTREAM_SETTINGS, type UpstreamSettings } from '../config';

export { DEFAULT_UPSTREAM_SETTINGS, type UpstreamSettings };

/** How the relay talks to upstreams; set once per process from the configuration (configureUpstreams). */
let settings: UpstreamSettings = { ...DEFAULT_UPSTREAM_SETTINGS };

/** The settings in force (the WebSocket and credential calls use the same deadlines). */
export function upstreamSettings(): Readonly<UpstreamSettings> {
  return settings;
}

/** Applies to pools made from now on (the app calls it before any request). */
export function configureUpstreams(next: Partial<UpstreamSettings>): void {
  settings = { ...DEFAULT_UPSTREAM_SETTINGS, ...next };
}

/**
 * One pool per origin, with the calls it carries counted. undici would queue
 * calls past its connections without bound (1,000 streams of one token made
 * everyone else wait 86 s); instead a call past maxConnections waits here, in
 * order, at most queueTimeoutMs, and then fails with UpstreamBusy so dispatch
 * can try another channel. Only a call that has to wait gets a timer.
 */
export class OriginPool {
  readonly pool: Pool;
  inFlight = 0;
  private readonly waiting: UpstreamHandler[] = [];

  constructor(
    origin: string,
    readonly limit: number,
    private readonly queueTimeoutMs: number,
    connectTimeoutMs: number,
    firstByteTimeoutMs: number,
    idleTimeoutMs: number,
  ) {
    this.pool = new Pool(origin, {
      connections: limit,
      keepAliveTimeout: 30_000,
      connect: { timeout: connectTimeoutMs },
      headersTimeout: firstByteTimeoutMs,
      bodyTimeout: idleTimeoutMs,
    });
  }

  /** Sends the call now if a connection is free, else queues it (bounded in time). */
  enter(handler: UpstreamHandler): void {
    if (this.inFlight < this.limit && this.waiting.length === 0) {
      this.inFlight += 1;
      handler.send();
      return;
    }
    this.waiting.push(handler);
    handler.waitAtMost(this.queueTimeoutMs);
  }

  /** A call ended (or gave up waiting): its place goes to the next one waiting. */
  leave(): void {
    this.inFlight -= 1;
    this.next();
  }

  /** Takes a call that no longer waits (timed out, or its client left) out of the queue. */
  forget(handler: UpstreamHandler): void {
    const index = this.waiting.indexOf(handler);
    if (index !== -1) this.waiting.splice(index, 1);
  }

  private next(): void {
    while (this.inFlight < this.limit && this.waiting.length > 0) {
      const handler = this.waiting.shift()!;
      this.inFlight += 1;
      handler.send();
    }
  }
}

const pools = new Map<string, OriginPool>();

export function poolFor(origin: string): OriginPool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new OriginPool(
      origin,
      settings.maxConnections,
      settings.queueTimeoutMs,
      settings.connectTimeoutMs,
      settings.firstByteTimeoutMs,
      settings.idleTimeoutMs,
    );
    pools.set(origin, pool);
  }
  return pool;
}

export async function closePools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((origin) => origin.pool.close()));
}

/** No connection to the upstream came free within UPSTREAM_QUEUE_TIMEOUT_MS: nothing was sent. */
export class UpstreamBusy extends Error {}

/** A timeout of undici's (connect, first byte, idle body), by its error code. */
export function isUpstreamTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/**
 * Aborts an upstream call when the client goes away. One listener at most (the
 * call in flight), which is all the relay needs and far cheaper than an
 * AbortController or an EventEmitter per request.
 */
export class DisconnectSignal {
  aborted = false;
  reason: Error | undefined;
  private listener: (() => void) | undefined;

  /** True when the gateway, not the client, ended the call (shutdown). */
  byGateway = false;

  abort(reason?: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new Error('the client went away');
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }

  /** Calls `listener` on abort (at once if already aborted); replaces any earlier one. */
  onAbort(listener: (() => void) | undefined): void {
    this.listener = listener;
    if (listener && this.aborted) {
      this.listener = undefined;
      listener();
    }
  }
}

/** An upstream's answer. Only its content type is read up front; the other headers when asked for. */
export class UpstreamResponse {
  /** The whole body, for an error status or a JSON answer. */
  bytes?: Buffer;
  /** Any other answer, as it arrives. */
  stream?: Readable;
  private parsedHeaders: IncomingHttpHeaders | undefined;

  constructor(
    readonly status: number,
    private readonly rawHeaders: Buffer[],
    readonly contentType: string,
  ) {}

  get headers(): IncomingHttpHeaders {
    return (this.parsedHeaders ??= parseHeaders(this.rawHeaders));
  }
}

/** Chunks of one body as one Buffer: the chunk itself when it came in one (no copy). */
export function joinChunks(chunks: readonly Buffer[], size: number): Buffer {
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** The call failed after the answer had begun: the upstream was reached, its answer broke off. */
export class AnswerBrokeOff extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** Lower-case names; repeated headers become arrays, as Node's own parser gives them. */
function parseHeaders(raw: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index].toString('latin1').toLowerCase();
    const value = raw[index + 1].toString('utf8');
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = [existing, value];
  }
  return headers;
}

/** The Content-Type among raw headers, or ''. */
function contentTypeOf(raw: Buffer[]): string {
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index];
    // 12 is the length of "content-type": only names that long are decoded and compared
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') return raw[index + 1].toString('latin1');
  }
  return '';
}

/** The call's headers with its request id and, when tracing is on, its trace context: the shared object itself when neither. */
function callHeaders(
  headers: Record<string, string>,
  requestId: string | undefined,
  traceHeaders: Record<string, string> | undefined,
): Record<string, string> {
  if (traceHeaders === undefined) return requestId === undefined ? headers : { ...headers, 'x-request-id': requestId };
  return requestId === undefined ? { ...headers, ...traceHeaders } : { ...headers, ...traceHeaders, 'x-request-id': requestId };
}

/** Answers the relay must look inside before anything reaches the client. */
const readWhole = (status: number, contentType: string) => status < 200 || status >= 300 || contentType.includes('application/json');

/** undici's dispatch handler protocol (the callbacks its HTTP/1.1 client calls), for one call. */
class UpstreamHandler {
  private abortCall: ((error: Error) => void) | undefined;
  private response: UpstreamResponse | undefined;
  private chunks: Buffer[] | undefined;
  private size = 0;
  private resumeUpstream: (() => void) | undefined;
  private finished = false;
  private answered = false;
  /** Chunks of a streamed answer that came in the current read of the socket, passed on together (see onData). */
  private arriving: Buffer[] | undefined;
  private arrivingSize = 0;
  /** What the reader said to the last chunk handed on: false asks the upstream to pause. */
  private wantsMore = true;
  private readonly handOn = () => this.handOnArrived();
  /** 0 before the call has a place in its pool, 1 while it holds one, 2 once it gave it back. */
  private place = 0;
  private waitTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly origin: OriginPool,
    private readonly call: UpstreamCall,
    private readonly signal: DisconnectSignal,
    private readonly resolve: (response: UpstreamResponse) => void,
    private readonly reject: (error: Error) => void,
  ) {
    signal.onAbort(() => {
      if (this.place === 0) this.stopWaiting(signal.reason!);
      else this.abortCall?.(signal.reason!);
    });
  }

  /** Dispatches the call on a place the pool gave it. */
  send(): void {
    this.place = 1;
    if (this.waitTimer) {
      clearTimeout(this.waitTimer);
      this.waitTimer = undefined;
    }
    try {
      const { path, headers, body, requestId, traceHeaders } = this.call;
      this.origin.pool.dispatch(
        {
          method: this.call.method ?? 'POST',
          path,
          headers: callHeaders(headers, requestId, traceHeaders),
          body,
        },
        this,
      );
    } catch (error) {
      this.onError(error as Error);
    }
  }

  waitAtMost(ms: number): void {
    this.waitTimer = setTimeout(() => this.stopWaiting(new UpstreamBusy(`no connection to the upstream came free within ${ms} ms`)), ms);
  }

  private stopWaiting(error: Error): void {
    if (this.place !== 0) return;
    this.place = 2;
    if (this.waitTimer) clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    this.origin.forget(this);
    this.signal.onAbort(undefined);
    this.answered = true;
    this.reject(error);
  }

  private givePlaceBack(): void {
    if (this.place !== 1) return;
    this.place = 2;
    this.origin.leave();
  }

  onConnect(abort: (error: Error) => void): void {
    if (this.signal.aborted) return abort(this.signal.reason!);
    this.abortCall = abort;
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the answer is still to come
    const contentType = contentTypeOf(rawHeaders);
    this.response = new UpstreamResponse(status, rawHeaders, contentType);
    if (readWhole(status, contentType)) {
      this.chunks = [];
      return true;
    }
    this.resumeUpstream = resume;
    this.response.stream = new Readable({
      read: () => this.resumeUpstream?.(),
      destroy: (error, callback) => {
        // the reader gave up (the client left): stop the upstream too
        if (!this.finished) this.abortCall?.(error ?? new Error('the answer was not read'));
        callback(error);
      },
    });
    this.answer();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.chunks) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return true;
    }
    // An SSE upstream sends each event as its own HTTP chunk, and undici hands
    // on each one by one, all within the same read of the socket: twenty
    // events that came in one packet were twenty reads of the stream and
    // twenty writes to the client. Chunks of one read go on together once
    // that read is parsed (a microtask later); chunks that come apart in time
    // still go on as each arrives.
    if (this.arriving) {
      this.arriving.push(chunk);
    } else {
      this.arriving = [chunk];
      queueMicrotask(this.handOn);
    }
    this.arrivingSize += chunk.length;
    // false pauses the upstream socket until the reader asks for more (read() above)
    return this.wantsMore;
  }

  private handOnArrived(): void {
    const arriving = this.arriving;
    if (!arriving) return;
    this.arriving = undefined;
    const chunk = joinChunks(arriving, this.arrivingSize);
    this.arrivingSize = 0;
    const stream = this.response!.stream!;
    // a reader that gave up in the meantime gets nothing more
    this.wantsMore = !stream.destroyed && stream.push(chunk);
  }

  onComplete(): void {
    this.finished = true;
    this.givePlaceBack();
    this.signal.onAbort(undefined);
    if (this.chunks) {
      this.response!.bytes = joinChunks(this.chunks, this.size);
      this.chunks = undefined;
      this.answer();
    } else {
      this.handOnArrived();
      this.response!.stream!.push(null);
    }
  }

  onError(error: Error): void {
    this.finished = true;
    this.givePlaceBack();
    this.signal.onAbort(undefined);
    if (!this.answered) {
      this.answered = true;
      this.reject(this.response ? new AnswerBrokeOff(error.message, isUpstreamTimeout(error)) : error);
    } else {
      // what arrived before the break still reaches the reader (and is billed), then the error
      this.handOnArrived();
      this.response!.stream?.destroy(error);
    }
  }

  private answer(): void {
    if (this.answered) return;
    this.answered = true;
    this.resolve(this.response!);
  }
}

export interface UpstreamCall {
  /** POST unless said (a followed stream is a GET: relay/followedStream.ts). */
  method?: 'GET' | 'POST';
  path: string;
  /** Often an object shared by many calls: never changed here. */
  headers: Record<string, string>;
  /** Absent for a GET. */
  body?: string | Buffer;
  /** The client's request's X-Request-Id, sent on as the upstream's so the two logs can be matched. */
  requestId?: string;
  /** The attempt's `traceparent` (and `tracestate`) when tracing is on (server/telemetry). */
  traceHeaders?: Record<string, string>;
}

/**
 * Calls an upstream (a POST, or the GET of a followed stream). Resolves once the answer is read whole (error statuses,
 * JSON) or has begun (anything else, as `stream`); rejects when the upstream
 * cannot be reached, breaks off before the answer is whole (AnswerBrokeOff),
 * no connection comes free in time (UpstreamBusy), or the signal aborts the call.
 */
export function callUpstream(origin: OriginPool, call: UpstreamCall, signal: DisconnectSignal): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason!);
    origin.enter(new UpstreamHandler(origin, call, signal, resolve, reject));
  });
}
