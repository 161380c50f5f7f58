// The relay's context of an app (relay/context.ts), assembled at the edge from
// the app's services (its `ctx`): the node's concurrency limiter and in-flight
// registry, and the channel upkeep and the notices after a charge, handed to
// the relay as plain functions. One of each per app (so per node), keyed by
// the shared `ctx`: route plugins see other instances of the same app.
import type { FastifyInstance } from 'fastify';
import type { Bookkeeping } from '../billing/bookkeeping';
import { remindIfLow } from '../billing/quotaReminder';
import { disableChannelAutomatically, disableChannelKeyAutomatically } from '../channels/autoDisable';
import { channelKeyUsageOf } from '../channels/keyUsage';
import { ConcurrencyLimiter } from '../relay/concurrency';
import { makeRelayContext, type RelayContext } from '../relay/context';
import { RelayRegistry } from '../relay/inflight';
import { sharedPlaces } from '../services/sharedConcurrency';
import { balanceLowEvent } from '../webhooks/triggers';

const contexts = new WeakMap<object, RelayContext>();
const registries = new WeakMap<object, RelayRegistry>();
const limiters = new WeakMap<object, ConcurrencyLimiter>();

/** The registry of one app (so of one node), by its context: route plugins see other instances of the same app. */
export function relayRegistry(app: FastifyInstance): RelayRegistry {
  let registry = registries.get(app.ctx);
  if (!registry) {
    registry = new RelayRegistry();
    registries.set(app.ctx, registry);
  }
  return registry;
}

/** The limiter of one app (so of one node), by its context like the in-flight registry; its counts shared as the process's setup allows. */
export function concurrencyLimiter(app: FastifyInstance): ConcurrencyLimiter {
  let limiter = limiters.get(app.ctx);
  if (!limiter) {
    limiter = new ConcurrencyLimiter(app.ctx.options, sharedPlaces(app.ctx.redis, app.ctx.config.redisKeyPrefix), app.log);
    limiters.set(app.ctx, limiter);
  }
  return limiter;
}

/** The relay context of an app, by its shared `ctx` (route plugins see other instances of the same app). */
export function relayContextOf(app: FastifyInstance, bookkeeping: Bookkeeping): RelayContext {
  let context = contexts.get(app.ctx);
  if (!context) {
    const { db, options, ledger, relayCache, newRequestId, sendMail, redis, config } = app.ctx;
    const log = app.log;
    const channelStatus = { db, options, sendMail, log };
    const keyUsage = channelKeyUsageOf({ db, log });
    context = makeRelayContext({
      db,
      options,
      ledger,
      relayCache,
      bookkeeping,
      newRequestId,
      log,
      metrics: () => app.ctx.metrics,
      limiter: concurrencyLimiter(app),
      registry: relayRegistry(app),
      redis,
      redisKeyPrefix: config.redisKeyPrefix,
      channels: {
        disableChannel: (channelId, reason) => disableChannelAutomatically(channelStatus, channelId, reason),
        disableChannelKey: (channelId, keyId, reason) => disableChannelKeyAutomatically(channelStatus, channelId, keyId, reason),
        noteKeyUse: (keyId, failed) => keyUsage.note(keyId, failed),
      },
      remind: (userId, charge) => void remindIfLow({ db, options, sendMail, port: config.port, log }, userId, charge),
      balanceLow: (userId, charge) => void balanceLowEvent({ db, options, log }, userId, charge),
    });
    contexts.set(app.ctx, context);
  }
  return context;
}
