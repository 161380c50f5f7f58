// The services plugin: opens the database (migrated, with what a dead process
// held given back), loads the options, connects Redis when configured, starts
// this node's lease and job runner, and decorates the instance with `ctx`
// (plugins/context.ts), which every later plugin and route reads. The relay's
// context and bookkeeping are made here too, so the hooks that observe them
// (plugins/metrics.ts, plugins/logging.ts) find them made. On close it stops
// and closes all of it.
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { DEFAULT_OPTION_SYNC_SECONDS, DEFAULT_REDIS_COMMAND_TIMEOUT_MS, type Config } from '../config';
import { bookkeepingFor } from '../billing/bookkeeping';
import { kyselyLedger, returnHeldQuota, type QuotaLedger } from '../billing/quota';
import { LeaseLedger } from '../billing/leaseLedger';
import { SqliteLedger } from '../billing/sqliteLedger';
import { ensureRootUser, rootPasswordBanner } from '../bootstrap';
import { migrateToLatest, openDatabase } from '../db/database';
import { WriteWatchPlugin } from '../db/writeWatch';
import { leaseSettingsFromEnv, startNodeLease } from '../relay/nodeLease';
import { RelayCache } from '../relay/relayCache';
import { configureUpstreams } from '../relay/upstream';
import { localJobLeases, sqlJobLeases } from '../repositories/jobLeases';
import type { AppContext } from './context';
import { JobRunner } from '../services/jobRunner';
import { createMailer } from '../services/mailer';
import { GatewayMetrics } from '../services/metrics';
import { OptionStore } from '../services/optionStore';
import { RateLimiter } from '../services/rateLimiter';
import { connectRedis } from '../services/redis';
import { SessionSigner } from '../services/session';
import { relayContextOf } from './relayContext';

export interface ServicesOptions {
  config: Config;
  /** This process among the relay nodes. */
  nodeId: string;
  newRequestId: () => string;
  /** Starts a shutdown's drain (AppContext.startDraining). */
  startDraining: () => void;
}

export const servicesPlugin = fp<ServicesOptions>(
  async (app, { config, nodeId, newRequestId, startDraining }) => {
    configureUpstreams(config.upstream ?? {});
    const relayCache = new RelayCache();
    const opened = await openDatabase(config.database);
    const db = opened.db.withPlugin(new WriteWatchPlugin(relayCache.noteWrite));
    const { dialect } = opened;
    await migrateToLatest(db);
    if (opened.instanceLock) {
      // alone on this SQLite file: whatever is still held belongs to requests a dead process never settled
      const returned = await returnHeldQuota(db);
      if (returned.users > 0)
        console.warn(
          `[switchboard] returned ${returned.quota} quota to ${returned.users} user(s), held by requests that a restart cut off`,
        );
    }
    const options = new OptionStore(db);
    await options.reload();

    let redis: Redis | undefined;
    if (config.redisUrl) {
      // loaded only when configured: a single node without Redis never pays for the client
      redis = await connectRedis(config.redisUrl, config.redisCommandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS, app.log);
    }

    // PostgreSQL and MySQL: a reservation row per request and a lease per node, so another node can give back what this one held if it dies
    // The lease has a connection of its own: requests that fill the pool must not keep a live node from renewing
    const leaseDatabase = dialect === 'sqlite' ? undefined : await openDatabase(config.database);
    const leaseSettings = leaseSettingsFromEnv();
    // background jobs run on one worker of one node at a time; on SQLite this process is alone (its instance lock)
    const jobs = new JobRunner(leaseDatabase ? sqlJobLeases(leaseDatabase.db, dialect) : localJobLeases(), nodeId, leaseSettings, app.log);
    // PostgreSQL and MySQL hold quota in leases (QUOTA_LEASES=off: a reservation row and a transaction per request)
    const leaseLedger =
      dialect !== 'sqlite' && config.quotaLeases !== false ? new LeaseLedger(db, { nodeId, dialect, log: app.log }) : undefined;
    const lease = leaseDatabase
      ? await startNodeLease(leaseDatabase.db, nodeId, leaseSettings, app.log, jobs, () => leaseLedger?.retireAll())
      : undefined;
    let ledger: QuotaLedger = leaseLedger ?? kyselyLedger(db, { reservationRows: lease !== undefined, nodeId });
    if (opened.sqlite) {
      const sqliteLedger = new SqliteLedger(opened.sqlite, ledger);
      opened.checkpointer?.holdWritesWith(() => sqliteLedger.holdWrites());
      ledger = sqliteLedger;
    }
    const context: AppContext = {
      config,
      db,
      dialect,
      options,
      sessions: new SessionSigner(config.sessionSecret),
      sendMail: createMailer(options),
      rateLimiter: new RateLimiter(redis, config.redisKeyPrefix),
      relayCache,
      ledger,
      nodeId,
      jobs,
      newRequestId,
      redis,
      startTime: Math.floor(Date.now() / 1000),
      startDraining,
    };
    app.decorate('ctx', context);
    const bookkeeping = bookkeepingFor(context, app.log);
    const relay = relayContextOf(app, bookkeeping);
    if (config.metricsEnabled !== false) {
      // its hooks are installed by plugins/metrics.ts
      context.metrics = new GatewayMetrics({ dialect, poolState: opened.poolState, redis }, () => relay.inFlight);
    }
    await options.startSync({
      intervalSeconds: config.optionSyncSeconds ?? DEFAULT_OPTION_SYNC_SECONDS,
      redis,
      onError: (error) => app.log.warn({ err: error }, 'option sync failed'),
    });
    app.addHook('onClose', async () => {
      await lease?.stop();
      await leaseDatabase?.db.destroy();
      await options.stopSync();
      await opened.checkpointer?.stop();
      await db.destroy();
      opened.instanceLock?.release();
      if (redis?.status === 'ready') await redis.quit().catch(() => redis?.disconnect());
      else redis?.disconnect();
    });

    const bootstrap = await ensureRootUser(db, config);
    if (bootstrap.generatedPassword) console.log(rootPasswordBanner(bootstrap.generatedPassword));
    else if (bootstrap.created) console.log('[switchboard] root account created with INITIAL_ROOT_PASSWORD');
  },
  { name: 'switchboard-services' },
);
