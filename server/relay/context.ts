// What the relay pipeline works with, passed explicitly rather than dug out of
// the Fastify instance: the database, options, ledger, cache, bookkeeping, the
// node's request ids and log, its concurrency limiter and in-flight registry,
// and the hook points where rate limits and metrics plug in. What it needs of
// the channels (switching a dead one off, tallying key use) and of the
// notices after a charge it is handed as plain functions.
// One per app (so per node): plugins/relayContext.ts makes it once from the
// app's services, and the fast path and the Fastify routes share it.
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import type { OptionStore } from '../services/optionStore';
import type { GatewayMetrics } from '../services/metrics';
import type { Admission, MoneyContext } from '../billing/accounting';
import type { Bookkeeping } from '../billing/bookkeeping';
import type { QuotaLedger } from '../billing/quota';
import type { ConcurrencyLimiter } from './concurrency';
import { dispatch, type DispatchDeps, type Dispatched } from './dispatch';
import type { RelayTrace, UpstreamRequest } from './attempt';
import { RoutingBook } from './routing';
import type { RelayError } from './errors';
import type { RelayRegistry } from './inflight';
import { webhookMayWant } from '../webhooks/events';
import type { RelayCache } from './relayCache';
import { RelayRateLimiter } from './rateLimits';
import { BudgetTracker } from '../billing/budgets';
import { moneyUnit } from '../billing/money';
import type { RelayCaller } from './tokenAuth';
import type { RelayCall } from './pipeline';
import { responseCacheStore, type ResponseCacheStore } from './responseCacheStore';

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
  /** Sends a request to the upstreams (dispatch.ts). */
  dispatch: (caller: RelayCaller, request: UpstreamRequest) => Promise<Dispatched>;
  hooks: RelayHooks;
  /** Relayed requests in flight on this node (a reservation made alone may skip the ledger's batching). */
  inFlight: number;
  /** When this node last started or ended an interactive request (ms): batch lines run slowly while it is recent (batches/selfRun.ts). */
  lastInteractiveAt: number;
  /** What this process remembers of the channels' recent answers (routing.ts): cooldowns, breakers, affinity. */
  routing: RoutingBook;
  /** Where the exact response cache keeps its answers (responseCacheStore.ts): Redis when configured, else the database. */
  responseCache?: ResponseCacheStore;
  /** Opens a relayed call's trace when tracing is on (server/telemetry/tracingPlugin.ts); absent, nothing is traced. */
  tracing?: (call: RelayCall) => RelayTrace;
}

/** What the relay needs of the channels, as functions the edge builds (channels/autoDisable.ts, channels/keyUsage.ts). */
export type ChannelUpkeep = Pick<DispatchDeps, 'disableChannel' | 'disableChannelKey' | 'noteKeyUse'>;

/** What a relay context is made of: the node's services, and the functions it is handed. */
export interface RelayContextDeps {
  db: Kysely<Database>;
  options: OptionStore;
  ledger: QuotaLedger;
  relayCache: RelayCache;
  bookkeeping: Bookkeeping;
  newRequestId: () => string;
  log: MoneyContext['log'];
  /** The node's metrics when METRICS_ENABLED is on; read on every dispatch, as they may attach after this context is made. */
  metrics: () => GatewayMetrics | undefined;
  limiter: ConcurrencyLimiter;
  registry: RelayRegistry;
  /** The rate limits' shared counts, and the prefix of their keys. */
  redis?: Redis;
  redisKeyPrefix?: string;
  channels: ChannelUpkeep;
  /** The low-balance e-mail and the user.balance_low event after a charge (MoneyContext's). */
  remind: MoneyContext['remind'];
  balanceLow: MoneyContext['balanceLow'];
}

/** A node's relay context, from its services and what it is handed; make it once per app (plugins/relayContext.ts). */
export function makeRelayContext(deps: RelayContextDeps): RelayContext {
  const { db, options, ledger, relayCache, newRequestId, log } = deps;
  const routing = new RoutingBook(options);
  // made once: the metrics are read through a getter, as the metrics plugin may attach after this context is made
  const dispatchDeps: DispatchDeps = {
    db,
    options,
    log,
    get metrics() {
      return deps.metrics();
    },
    relayCache,
    newRequestId,
    book: routing,
    disableChannel: deps.channels.disableChannel,
    disableChannelKey: deps.channels.disableChannelKey,
    noteKeyUse: deps.channels.noteKeyUse,
  };
  return {
    db,
    options,
    ledger,
    cache: relayCache,
    bookkeeping: deps.bookkeeping,
    budgets: new BudgetTracker(
      () => options.get('TimeZone'),
      () => moneyUnit(options),
    ),
    newRequestId,
    log,
    limiter: deps.limiter,
    rateLimits: new RelayRateLimiter(options, deps.redis, deps.redisKeyPrefix),
    registry: deps.registry,
    dispatch: (caller, request) => dispatch(dispatchDeps, caller, request),
    remind: deps.remind,
    balanceLow: deps.balanceLow,
    balanceLowWanted: () => webhookMayWant(db, 'user.balance_low'),
    hooks: { beforeAdmit: [], beforeReserve: [], beforeDispatch: [], afterFinish: [], firstChunk: [] },
    inFlight: 0,
    lastInteractiveAt: 0,
    routing,
    responseCache: responseCacheStore(db, deps.redis, deps.redisKeyPrefix),
  };
}
