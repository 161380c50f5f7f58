// One realtime session, once open: frames pass both ways as they came, text
// and binary, with backpressure each way; the relay only reads the few events
// that matter for money (protocols/upstream/realtime.ts finds them without
// parsing the rest) and keeps its own count of the conversation (count.ts).
//
// Money, per response: a client's `response.create` is forwarded only once a
// bound for it is held (holds.ts); a response the server starts by itself
// (server VAD) is held for at `response.created`. Each `response.done` settles
// its hold with the usage it reports and writes its own consume log. A
// `response.create` the balance cannot cover is not forwarded: the client gets
// an `error` event, and the session is closed (1008) once the responses in
// flight are done and settled. Whatever way the session ends (client gone,
// upstream gone, a limit, shutdown), responses in flight are cancelled upstream
// and given a moment to report their usage, then every hold still open goes
// back, except a response's that had begun: one whose usage never came (the
// upstream dropped, or did not answer the cancel in time) is billed as the
// HTTP routes bill a stream the upstream cut, at the gateway's own count of its
// input and of the output that passed to the client, and its log is marked
// estimated and cut off.
import type { default as WebSocket, RawData } from 'ws';
import { reserve } from '../../billing/accounting';
import {
  outputLimitOf,
  realtimeClientInput,
  realtimeErrorEvent,
  realtimeOutputDelta,
  realtimeUsage,
  watchedClientEvent,
  watchedServerEvent,
  type RealtimeUsage,
} from '../../protocols/upstream/realtime';
import type { RoutedChannel } from '../channelSelect';
import type { RelayContext } from '../context';
import { isRelayError, relayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';
import { ConversationCount, cutOffUsage, tokensOfClientFrame, type ResponseCount } from './count';
import { giveBackHold, responseBound, settleHold, type Hold } from './holds';
import type { RealtimeSessions } from './index';
import { quietRepeatedEnds } from './quietEnds';

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
/** How long a response in flight may take to report its usage once the session ends. */
const CANCEL_GRACE_MS = 2_000;
/** Bytes queued towards one side before the other side is paused, and resumed below the low mark. */
const HIGH_WATER = 1 << 20;
const LOW_WATER = 1 << 18;

/** A WebSocket's readyState values (ws's CONNECTING and .OPEN, as the standard numbers them). */
const CONNECTING = 0;
const OPEN = 1;

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

/** A session joined to its upstream: the relay loop, the money of its responses, and its end. */
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
  /** The gateway's own count of the conversation, for a response whose usage never comes. */
  private readonly conversation = new ConversationCount();

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
    quietRepeatedEnds(client);
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

  /** Any frame either way: the idle deadline starts again, and the node counts as serving users (batches go at their busy pace). */
  private touch(): void {
    this.ctx.lastInteractiveAt = Date.now();
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
      const delta = this.conversation.counts.size > 0 ? realtimeOutputDelta(data) : undefined;
      if (delta) this.conversation.countOutput(delta, this.client.readyState === OPEN);
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
    if (input && this.upstream.readyState === OPEN) this.conversation.countInput(input);
    this.pass(this.upstream, this.client!, data, isBinary);
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
    const bound = responseBound(
      this.ctx,
      this.caller,
      this.model,
      this.requestId,
      this.context + this.added + own,
      outputLimit ?? this.sessionOutputLimit,
    );
    if (isRelayError(bound)) return bound;
    const reservation = await reserve(this.ctx, bound.admission, bound.amount);
    if (isRelayError(reservation)) return reservation;
    this.added = 0;
    return { admission: bound.admission, reservation, closed: false };
  }

  private onServerEvent(type: string, event: Record<string, unknown>): void {
    const response = (event.response ?? {}) as Record<string, unknown>;
    const responseId = typeof response.id === 'string' ? response.id : '';
    switch (type) {
      case 'session.created':
      case 'session.updated': {
        // the upstream's account of the session in force (a client's session.update is answered by session.updated)
        this.sessionOutputLimit = outputLimitOf(event.session);
        this.conversation.sessionSaid((event.session ?? {}) as Record<string, unknown>);
        return;
      }
      case 'input_audio_buffer.committed':
        this.conversation.bufferCommitted();
        return;
      case 'input_audio_buffer.cleared':
        this.conversation.bufferCleared();
        return;
      case 'response.created':
        this.conversation.startCount(responseId);
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
        this.conversation.reportCount(responseId, usage);
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
    settleHold(this.ctx, this.model, this.channel.id, hold, usage, how);
  }

  /**
   * A response that began and never reported its usage: billed, as the HTTP routes bill a stream the upstream
   * cut, at the gateway's count (count.ts), estimated.
   */
  private settleCutOff(hold: Hold, count: ResponseCount, why: string): void {
    const usage = cutOffUsage(count, this.model, { approximate: this.ctx.options.bool('ApproximateTokenEnabled') });
    this.settle(hold, usage, {
      estimated: true,
      detail: `realtime cut off (${why}): billed at the gateway's count of its input and of the output that passed`,
    });
  }

  private giveBack(hold: Hold): Promise<void> {
    return giveBackHold(this.ctx, hold);
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
      const count = this.conversation.counts.get(responseId);
      if (count) this.settleCutOff(hold, count, why);
    }
    this.conversation.counts.clear();
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
