// What the relay pipeline works with, passed explicitly rather than dug out of
// the Fastify instance: the database, options, ledger, cache, bookkeeping, the
// node's request ids and log, its concurrency limiter and in-flight registry,
// and the hook points where rate limits and metrics plug in.
// One per app (so per node), made once and shared by the fast path and the
// Fastify routes.
import type { FastifyInstance } from 'fastify';
import type { OptionStore } from '../services/optionStore';
import type { Admission, MoneyContext } from '../billing/accounting';
import type { Bookkeeping } from '../billing/bookkeeping';
import { concurrencyLimiter, type ConcurrencyLimiter } from './concurrency';
import { dispatch, type DispatchDeps, type Dispatched } from './dispatch';
import type { UpstreamRequest } from './attempt';
import { RoutingBook } from './routing';
import type { RelayError } from './errors';
import { relayRegistry, type RelayRegistry } from './inflight';
import { remindIfLow } from '../billing/quotaReminder';
import { disableChannelAutomatically, disableChannelKeyAutomatically } from '../channels/autoDisable';
import { channelKeyUsageOf } from '../channels/keyUsage';
import { balanceLowEvent } from '../webhooks/triggers';
import { webhookMayWant } from '../webhooks/events';
import type { RelayCache } from './relayCache';
import { RelayRateLimiter } from './rateLimits';
import { BudgetTracker } from '../billing/budgets';
import type { RelayCaller } from './tokenAuth';
import type { RelayCall } from './pipeline';

/** How a relayed request ended, for the hooks that run after it (metrics). */
export type RelayOutcome =
  /** Answered and settled (the charge is queued). */
  | 'settled'
  /** Refused before anything was reserved, or its reservation given back: the client got an error. */
  | 'refused'
  /** The client left, or the answer broke off: what was delivered is billed or the hold given back. */
  | 'aborted';

/**
 * The pipeline's hook points. Each list runs in order and is skipped at no
 * cost when empty. A `before` hook may refuse the request with an error (the
 * client gets it, and nothing is reserved or everything reserved goes back);
 * an `after` hook only observes. Hooks must not throw.
 */
export interface RelayHooks {
  /** The caller is known and holds its place among its concurrent requests; nothing is admitted yet (rate limits). */
  beforeAdmit: Array<(caller: RelayCaller, operation: string) => RelayError | undefined>;
  /** The model is admitted and priced; nothing is reserved yet (per-model limits). */
  beforeReserve: Array<(admission: Admission, operation: string) => RelayError | undefined>;
  /** The quota is held; the upstream is about to be called. */
  beforeDispatch: Array<(admission: Admission, operation: string) => RelayError | undefined>;
  /**
   * The request is over: settled, refused or aborted (metrics, the request log). `admission` is
   * undefined when it never got that far; `channelId` when it never reached dispatch (0: no channel could be tried).
   */
  afterFinish: Array<
    (
      outcome: RelayOutcome,
      operation: string,
      admission: Admission | undefined,
      startedAt: number,
      channelId: number | undefined,
      call: RelayCall,
    ) => void
  >;
  /** The answer's first streamed write is going out (open streams, time to first token); an empty list times nothing. */
  firstChunk: Array<(call: RelayCall) => void>;
}

/** The money side's context (billing/accounting.ts), and what the relay itself needs beside it. */
export interface RelayContext extends MoneyContext {
  options: OptionStore;
  cache: RelayCache;
  limiter: ConcurrencyLimiter;
  /** Requests and tokens per minute per key and per user, across nodes through Redis. */
  rateLimits: RelayRateLimiter;
  /** The calls in flight, so a shutdown can cut them at the end of its grace. */
  registry: RelayRegistry;
  /** Sends a request to the upstreams (dispatch.ts, which still takes the app for the channel auto-disable). */
  dispatch: (caller: RelayCaller, request: UpstreamRequest) => Promise<Dispatched>;
  hooks: RelayHooks;
  /** Relayed requests in flight on this node (a reservation made alone may skip the ledger's batching). */
  inFlight: number;
  /** What this process remembers of the channels' recent answers (routing.ts): cooldowns, breakers, affinity. */
  routing: RoutingBook;
}

const contexts = new WeakMap<object, RelayContext>();

/** The relay context of an app, by its shared `ctx` (route plugins see other instances of the same app). */
export function relayContextOf(app: FastifyInstance, bookkeeping: Bookkeeping): RelayContext {
  let context = contexts.get(app.ctx);
  if (!context) {
    const { db, options, ledger, relayCache, newRequestId } = app.ctx;
    const routing = new RoutingBook(options);
    const keyUsage = channelKeyUsageOf(app);
    // made once: metrics and the cache are read through getters, as the metrics plugin may attach after this context is made
    const dispatchDeps: DispatchDeps = {
      db,
      options,
      log: app.log,
      get metrics() {
        return app.ctx.metrics;
      },
      get relayCache() {
        return app.ctx.relayCache;
      },
      newRequestId,
      book: routing,
      disableChannel: (channelId, reason) => disableChannelAutomatically(app, channelId, reason),
      disableChannelKey: (channelId, keyId, reason) => disableChannelKeyAutomatically(app, channelId, keyId, reason),
      noteKeyUse: (keyId, failed) => keyUsage.note(keyId, failed),
    };
    context = {
      db,
      options,
      ledger,
      cache: relayCache,
      bookkeeping,
      budgets: new BudgetTracker(() => options.get('TimeZone')),
      newRequestId,
      log: app.log,
      limiter: concurrencyLimiter(app),
      rateLimits: new RelayRateLimiter(options, app.ctx.redis, app.ctx.config.redisKeyPrefix),
      registry: relayRegistry(app),
      dispatch: (caller, request) => dispatch(dispatchDeps, caller, request),
      remind: (userId, charge) => void remindIfLow(app, userId, charge),
      balanceLow: (userId, charge) => void balanceLowEvent(app, userId, charge),
      balanceLowWanted: () => webhookMayWant(db, 'user.balance_low'),
      hooks: { beforeAdmit: [], beforeReserve: [], beforeDispatch: [], afterFinish: [], firstChunk: [] },
      inFlight: 0,
      routing,
    };
    contexts.set(app.ctx, context);
  }
  return context;
}
