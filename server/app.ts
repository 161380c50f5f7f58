// The gateway as a Fastify application. Process concerns (listening, signals)
// live in main.ts; tests build this and call app.inject().
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { fail } from '../common/envelope';
import { DEFAULT_API_BODY_LIMIT, DEFAULT_OPTION_SYNC_SECONDS, DEFAULT_REDIS_COMMAND_TIMEOUT_MS, DEFAULT_RELAY_BODY_LIMIT, DEFAULT_WEBHOOK_SETTINGS, type Config } from './config';
import { migrateToLatest, openDatabase } from './db/database';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from './db/faults';
import { refuseCrossSiteRequests } from './plugins/csrf';
import { setSecurityHeaders } from './plugins/securityHeaders';
import { loggerOptions, relayRequestLog, type LoggerSettings } from './plugins/logging';
import { assignRequestId, REQUEST_ID_HEADER, tagExchange } from './plugins/requestId';
import { apiBodyLimit, requestErrorMessage } from './plugins/inputLimits';
import type { AppContext } from './services/context';
import { createMailer } from './services/mailer';
import { OptionStore } from './services/optionStore';
import { RateLimiter } from './services/rateLimiter';
import { connectRedis } from './services/redis';
import { SessionSigner } from './services/session';
import { accountRoutes } from './routes/api/account';
import { channelRoutes } from './routes/api/channel';
import { dashboardRoutes } from './routes/api/dashboard';
import { logRoutes } from './routes/api/log';
import { oauthRoutes } from './routes/api/oauth';
import { miscRoutes } from './routes/api/misc';
import { optionRoutes } from './routes/api/option';
import { importRoutes } from './routes/api/import';
import { redemptionRoutes } from './routes/api/redemption';
import { tokenRoutes } from './routes/api/token';
import { twoFactorRoutes } from './routes/api/twoFactor';
import { userRoutes } from './routes/api/user';
import { userAdminRoutes } from './routes/api/userAdmin';
import { relayRoutes } from './routes/v1/relay';
import { operationsRoutes } from './routes/operations';
import { GatewayMetrics, rememberMetrics } from './services/metrics';
import { probeFastPath } from './plugins/readiness';
import { relayContextOf } from './relay/context';
import { textFastPath } from './routes/v1/text';
import { bookkeepingFor } from './billing/bookkeeping';
import { kyselyLedger, returnHeldQuota } from './billing/quota';
import { leaseSettingsFromEnv, newNodeId, requestIdsOf, startNodeLease } from './relay/nodeLease';
import { SqliteLedger } from './billing/sqliteLedger';
import { JobRunner } from './services/jobRunner';
import { localJobLeases, sqlJobLeases } from './repositories/jobLeases';
import { scheduleChannelHealthChecks } from './channels/channelHealth';
import { scheduleLogRetention } from './billing/logRetention';
import { ensureRootUser, rootPasswordBanner } from './bootstrap';
import { WriteWatchPlugin } from './db/writeWatch';
import { RelayCache } from './relay/relayCache';
import { configureUpstreams } from './relay/upstream';
import { webhookRoutes } from './routes/api/webhook';
import { startDeliveryLoop } from './webhooks/delivery';

export interface BuildOptions {
  /** The server log (see plugins/logging.ts); none when absent or false. */
  logger?: false | LoggerSettings;
}

export async function buildApp(config: Config, buildOptions: BuildOptions = {}): Promise<FastifyInstance> {
  // The hot relay routes are answered before Fastify sees the request (see
  // textFastPath); it is installed once the app is built.
  let fastPath: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined;
  let probes: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined;
  let closing = false;
  /** SIGTERM's drain: not ready any more, still serving (main.ts). */
  let draining = false;
  let turnstileOn = () => false;
  const bodyLimits = { relay: config.relayBodyLimitBytes ?? DEFAULT_RELAY_BODY_LIMIT, api: config.apiBodyLimitBytes ?? DEFAULT_API_BODY_LIMIT };
  // this process among the relay nodes (a worker of a cluster is a node of its own)
  const nodeId = newNodeId();
  const newRequestId = requestIdsOf(nodeId);
  const app = Fastify({
    logger: buildOptions.logger ? loggerOptions(buildOptions.logger) : false,
    // Fastify's request id is the exchange's X-Request-Id, fixed as it arrived (plugins/requestId.ts)
    genReqId: (raw) => assignRequestId(raw, newRequestId),
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: bodyLimits.relay,
    // Schemas say exactly what is accepted: no coercion (it would read "0x1", " 1" and "1e3" as
    // numbers), no silent removal of fields; `verbose` gives the error handler each rule's description.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, verbose: true, allowUnionTypes: true } },
    serverFactory: (handler) => {
      const server = createServer((request, response) => {
        tagExchange(request, response, newRequestId);
        setSecurityHeaders(request, response, config.trustProxy, turnstileOn());
        if (config.nodeIdHeader) response.setHeader('x-switchboard-node', nodeId);
        if (probes?.(request, response)) return;
        if (!fastPath?.(request, response)) handler(request, response);
      });
      server.keepAliveTimeout = 72_000; // what Fastify sets on a server of its own
      return server;
    },
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRoute', apiBodyLimit(bodyLimits));

  configureUpstreams(config.upstream ?? {});
  const relayCache = new RelayCache();
  const opened = await openDatabase(config.database);
  const db = opened.db.withPlugin(new WriteWatchPlugin(relayCache.noteWrite));
  const { dialect } = opened;
  await migrateToLatest(db);
  if (opened.instanceLock) {
    // alone on this SQLite file: whatever is still held belongs to requests a dead process never settled
    const returned = await returnHeldQuota(db);
    if (returned.users > 0) console.warn(`[switchboard] returned ${returned.quota} quota to ${returned.users} user(s), held by requests that a restart cut off`);
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
  const lease = leaseDatabase ? await startNodeLease(leaseDatabase.db, nodeId, leaseSettings, app.log, jobs) : undefined;
  let ledger = kyselyLedger(db, { reservationRows: lease !== undefined, nodeId });
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
    rateLimiter: new RateLimiter(redis),
    relayCache,
    ledger,
    nodeId,
    jobs,
    newRequestId,
    redis,
    startTime: Math.floor(Date.now() / 1000),
    startDraining: () => {
      draining = true;
    },
  };
  app.decorate('ctx', context);
  app.decorateRequest('caller', null);
  const bookkeeping = bookkeepingFor(context, app.log);
  const relay = relayContextOf(app, bookkeeping);
  if (config.metricsEnabled !== false) {
    context.metrics = new GatewayMetrics({ dialect, poolState: opened.poolState, redis }, () => relay.inFlight);
    context.metrics.install(app, relay, bookkeeping);
    rememberMetrics(app, context.metrics);
  }
  if ((app.log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled?.('info')) relay.hooks.afterFinish.push(relayRequestLog(app.log));
  const probeSources = { db, redis, isClosing: () => closing || draining };
  probes = (request, response) => probeFastPath(request, response, probeSources);
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

  turnstileOn = () => options.bool('TurnstileCheckEnabled');
  // requests that do not come through our server (app.inject) get them here
  app.addHook('onRequest', async (request, reply) => {
    if (!reply.raw.hasHeader('x-content-type-options')) setSecurityHeaders(request.raw, reply.raw, config.trustProxy, turnstileOn());
    if (!reply.raw.hasHeader(REQUEST_ID_HEADER)) reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
  });
  await app.register(fastifyCookie);
  app.addHook('onRequest', refuseCrossSiteRequests);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isDatabaseUnavailable(error)) {
      // the pools reconnect by themselves; the client may simply try again
      request.log.warn({ err: error }, 'database unavailable');
      reply.code(503).header('retry-after', '1');
      return request.url.startsWith('/v1/') || request.url.startsWith('/dashboard/')
        ? reply.send({ error: { message: DATABASE_UNAVAILABLE_MESSAGE, type: 'server_error', param: null, code: 'database_unavailable' } })
        : reply.send(fail(DATABASE_UNAVAILABLE_MESSAGE));
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'unhandled error');
    if (request.url.startsWith('/v1/')) {
      return reply.code(status).send({
        error: { message: status === 500 ? 'internal error' : error.message, type: 'invalid_request_error', param: null, code: error.code ?? null },
      });
    }
    const message = status === 500 ? 'internal server error' : requestErrorMessage(error, status, request.routeOptions.bodyLimit);
    return reply.code(status).send(fail(message));
  });

  await app.register(operationsRoutes(probeSources, context.metrics));
  await app.register(miscRoutes);
  await app.register(userRoutes);
  await app.register(twoFactorRoutes);
  await app.register(optionRoutes);
  await app.register(accountRoutes);
  await app.register(oauthRoutes);
  await app.register(userAdminRoutes);
  await app.register(tokenRoutes);
  await app.register(redemptionRoutes);
  await app.register(logRoutes);
  await app.register(dashboardRoutes);
  await app.register(channelRoutes);
  await app.register(importRoutes);
  await app.register(webhookRoutes);
  await app.register(relayRoutes);
  const webhookDelivery = startDeliveryLoop(app, { ...DEFAULT_WEBHOOK_SETTINGS, ...config.webhooks });
  app.decorate('webhookDelivery', webhookDelivery);
  app.addHook('preClose', () => webhookDelivery.stop());
  scheduleChannelHealthChecks(app, config.channelRetestIntervalSeconds);
  scheduleLogRetention(app);

  const indexHtml = join(config.consoleDir, 'index.html');
  const consoleBuilt = existsSync(indexHtml);
  if (consoleBuilt) {
    await app.register(fastifyStatic, {
      root: config.consoleDir,
      wildcard: false,
      index: false,
      // the build writes .br and .gz beside each bundle (scripts/precompress.mjs): the smallest one the browser
      // accepts is sent, with Content-Encoding and Vary, and nothing is compressed per request
      preCompressed: true,
      setHeaders(reply, path) {
        // hashed bundles never change; everything else is revalidated
        reply.header('Cache-Control', path.includes(join(config.consoleDir, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0];
    if (path === '/v1' || path.startsWith('/v1/')) {
      return reply.code(404).send({
        error: { message: `Invalid URL (${request.method} ${path})`, type: 'invalid_request_error', param: null, code: null },
      });
    }
    if (path === '/api' || path.startsWith('/api/') || (request.method !== 'GET' && request.method !== 'HEAD')) {
      return reply.code(404).send(fail(`not found: ${request.method} ${path}`, 'not_found'));
    }
    if (!consoleBuilt) {
      return reply.code(503).type('text/plain; charset=utf-8').send('The console is not built yet: run `npm run build` (npm start does it for you).\n');
    }
    return reply.header('Cache-Control', 'no-cache').sendFile('index.html');
  });

  fastPath = textFastPath(app, bookkeeping, { trustProxy: config.trustProxy, bodyLimit: bodyLimits.relay, isClosing: () => closing });
  return app;
}
