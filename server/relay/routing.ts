// What the relay remembers of each channel's recent answers, so routing does
// not flap: a 429 or an overload answer puts the channel in a cooldown that
// doubles with each repeat and ends by itself, never a disable; consecutive
// failures (5xx, no answer) within a window open the channel's circuit
// breaker, which after a while lets one probe request through (half-open) and
// closes again on its success. A resting channel is passed by while another
// channel of the model, or of one of its fallback models, can take the
// request; when none can, the request goes to the resting channel whose rest
// ends first (as the breaker's probe), so a deployment with one channel per
// model answers as its upstream does rather than with a refusal of its own.
//
// The book lives in each process: a node (or worker) learns of a channel's
// trouble from its own requests. That is enough for what it is for (keep one
// process from sending into a failing channel again and again); no request
// waits on another node to find it out.
//
// A multi-key channel's key that answers 429 rests alone; the channel rests
// only once every live key of it does.
//
// Affinity: a caller named by the request (its `user`, or a header the
// operator chooses) keeps the channel that last served it for a while, so an
// upstream's prompt cache keeps hitting.
import type { IncomingHttpHeaders } from 'node:http';
import type { OptionStore } from '../services/optionStore';

/** How an attempt on a channel ended, as routing reads it. */
export type AttemptVerdict = 'answered' | 'overloaded' | 'failed' | 'neutral';

interface ChannelMemory {
  /** Until when it rests after a 429 or an overload (ms since the epoch). */
  coolUntil: number;
  /** Rests in a row, for the doubling; back to 0 after an answer. */
  coolStreak: number;
  /** Failures in a row, the first of them at `firstFailureAt`. */
  failures: number;
  firstFailureAt: number;
  /** Until when its breaker is open; 0 when closed. */
  openUntil: number;
  /** True while the one probe of a half-open breaker is in flight. */
  probing: boolean;
}

/** Resting keys kept before those whose rest is over are dropped (a streak is forgotten with them). */
const MAX_RESTING_KEYS = 10_000;

/** The most callers kept for affinity; the oldest go first. */
const MAX_AFFINITY_ENTRIES = 100_000;

export class RoutingBook {
  private readonly memory = new Map<number, ChannelMemory>();
  /** Keys of multi-key channels resting after a 429: by key id, with their channel's id. */
  private readonly keys = new Map<number, { channelId: number; coolUntil: number; coolStreak: number }>();
  private readonly affinity = new Map<string, { channelId: number; keyId: number | undefined; until: number }>();

  /** The clock (ms since the epoch); tests move it instead of waiting out a rest. */
  clock: () => number = Date.now;

  constructor(private readonly options: Pick<OptionStore, 'number'>) {}

  private now(): number {
    return this.clock();
  }

  /** Until when a channel rests (cooldown or open breaker), or 0 when it may take a request now. */
  restingUntil(channelId: number): number {
    const state = this.memory.get(channelId);
    if (!state) return 0;
    const now = this.now();
    let until = state.coolUntil > now ? state.coolUntil : 0;
    if (state.openUntil > 0) {
      // open, or half-open with its probe already out
      if (state.openUntil > now) until = Math.max(until, state.openUntil);
      else if (state.probing) until = Math.max(until, now + 1000);
    }
    return until;
  }

  /** Whether any channel or key has a record: when none has, routing skips every lookup. */
  get empty(): boolean {
    return this.memory.size === 0 && this.keys.size === 0;
  }

  /** Until when a key of a multi-key channel rests, or 0. */
  keyRestingUntil(keyId: number): number {
    const state = this.keys.get(keyId);
    return state && state.coolUntil > this.now() ? state.coolUntil : 0;
  }

  /**
   * Every live key of a channel rests: the channel rests too, until its first
   * key wakes, so routing passes it by as a whole. Whether any key rested.
   */
  restChannelWithKeys(channelId: number): boolean {
    const now = this.now();
    let wake = Infinity;
    for (const state of this.keys.values())
      if (state.channelId === channelId && state.coolUntil > now) wake = Math.min(wake, state.coolUntil);
    if (wake === Infinity) return false;
    const current = this.memory.get(channelId) ?? {
      coolUntil: 0,
      coolStreak: 0,
      failures: 0,
      firstFailureAt: 0,
      openUntil: 0,
      probing: false,
    };
    current.coolUntil = Math.max(current.coolUntil, wake);
    this.memory.set(channelId, current);
    return true;
  }

  /** A 429 on one key of a multi-key channel: that key rests, doubling with repeats, and the channel's other keys go on. */
  private restKey(channelId: number, keyId: number): void {
    const base = this.options.number('ChannelCooldownSeconds') * 1000;
    if (base <= 0) return;
    const now = this.now();
    if (this.keys.size >= MAX_RESTING_KEYS) for (const [id, old] of this.keys) if (old.coolUntil <= now) this.keys.delete(id);
    const state = this.keys.get(keyId) ?? { channelId, coolUntil: 0, coolStreak: 0 };
    const most = Math.max(base, this.options.number('ChannelCooldownMaxSeconds') * 1000);
    state.coolStreak = Math.min(state.coolStreak + 1, 30);
    state.coolUntil = now + Math.min(most, base * 2 ** (state.coolStreak - 1));
    this.keys.set(keyId, state);
  }

  /** Marks the start of an attempt: a half-open breaker's attempt is its probe. */
  attempting(channelId: number): void {
    const state = this.memory.get(channelId);
    if (state && state.openUntil > 0 && state.openUntil <= this.now()) state.probing = true;
  }

  /** What an attempt came to; `keyId`: the key of a multi-key channel it was sent with. */
  record(channelId: number, verdict: AttemptVerdict, keyId?: number): void {
    const state = this.memory.get(channelId);
    if (verdict === 'answered') {
      // a healthy answer forgets everything: the channel (and the key) is as good as new
      if (state) this.memory.delete(channelId);
      if (keyId !== undefined) this.keys.delete(keyId);
      return;
    }
    if (verdict === 'overloaded' && keyId !== undefined) {
      // the key's own rate limit: the channel's other keys may answer
      this.restKey(channelId, keyId);
      if (state) state.probing = false;
      return;
    }
    if (verdict === 'neutral') {
      // the request's own fault, or the client left: says nothing of the channel, but a probe is over
      if (state) state.probing = false;
      return;
    }
    const now = this.now();
    const current = state ?? { coolUntil: 0, coolStreak: 0, failures: 0, firstFailureAt: 0, openUntil: 0, probing: false };
    if (verdict === 'overloaded') {
      const base = this.options.number('ChannelCooldownSeconds') * 1000;
      if (base > 0) {
        const most = Math.max(base, this.options.number('ChannelCooldownMaxSeconds') * 1000);
        current.coolStreak = Math.min(current.coolStreak + 1, 30);
        current.coolUntil = now + Math.min(most, base * 2 ** (current.coolStreak - 1));
      }
    } else {
      this.failed(current, now);
    }
    current.probing = false;
    if (current.coolUntil > now || current.openUntil > 0 || current.failures > 0) this.memory.set(channelId, current);
  }

  private failed(state: ChannelMemory, now: number): void {
    const threshold = Math.floor(this.options.number('CircuitBreakerFailures'));
    if (threshold <= 0) return;
    if (state.openUntil > 0) {
      // a failed probe (or a failure while open): open again for the full time
      state.openUntil = now + this.options.number('CircuitBreakerOpenSeconds') * 1000;
      return;
    }
    const window = this.options.number('CircuitBreakerWindowSeconds') * 1000;
    if (state.failures === 0 || now - state.firstFailureAt > window) {
      state.failures = 0;
      state.firstFailureAt = now;
    }
    state.failures += 1;
    if (state.failures >= threshold) state.openUntil = now + this.options.number('CircuitBreakerOpenSeconds') * 1000;
  }

  /** The channel (and key, on a multi-key channel) a caller was last served by for (group, model), while its affinity lasts. */
  affinityOf(key: string): { channelId: number; keyId: number | undefined } | undefined {
    const entry = this.affinity.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.affinity.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Remembers the channel and key that served a caller, for RoutingAffinitySeconds (from this answer on). */
  served(key: string, channelId: number, keyId: number | undefined): void {
    const seconds = this.options.number('RoutingAffinitySeconds');
    if (seconds <= 0) return;
    this.affinity.delete(key);
    if (this.affinity.size >= MAX_AFFINITY_ENTRIES) this.affinity.delete(this.affinity.keys().next().value!);
    this.affinity.set(key, { channelId, keyId, until: this.now() + seconds * 1000 });
  }

  /** What the channel list shows of a channel's rest; undefined when it has none. */
  stateOf(channelId: number): { restingUntil: number; breaker: 'closed' | 'open' | 'half-open'; failures: number } | undefined {
    const state = this.memory.get(channelId);
    if (!state) return undefined;
    const now = this.now();
    return { restingUntil: this.restingUntil(channelId), breaker: breakerOf(state.openUntil, now), failures: state.failures };
  }
}

/** A breaker's state: closed, open until `openUntil`, or half-open once that passed. */
function breakerOf(openUntil: number, now: number): 'closed' | 'open' | 'half-open' {
  if (openUntil === 0) return 'closed';
  return openUntil > now ? 'open' : 'half-open';
}

/** The longest caller name kept for affinity; a longer one is not a name but a payload. */
const MAX_AFFINITY_NAME = 256;

/** The body's `user`, when the body is an object. */
const bodyUser = (body: unknown): unknown => (body && typeof body === 'object' ? (body as { user?: unknown }).user : undefined);

/** Who a request says it is, for affinity (the operator's header, else the body's `user`), when affinity is on. */
export function affinityCaller(
  options: Pick<OptionStore, 'number' | 'get'>,
  headers: IncomingHttpHeaders,
  body: unknown,
): string | undefined {
  if (options.number('RoutingAffinitySeconds') <= 0) return undefined;
  const header = options.get('RoutingAffinityHeader').trim().toLowerCase();
  const value = header ? headers[header] : bodyUser(body);
  return typeof value === 'string' && value !== '' && value.length <= MAX_AFFINITY_NAME ? value : undefined;
}
