// The gateway as a Fastify application. Process concerns (listening, signals)
// live in main.ts; tests build this and call app.inject().
//
// Node's server answers the probes and the hot relay routes itself, after
// tagging the exchange and setting its security headers (serverFactory below);
// everything else goes to Fastify, where the app is built in this order:
// the services (decorated as `ctx`), the hooks, the routes, the background
// jobs and, last, the console's static files.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import fastifyCookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { DEFAULT_API_BODY_LIMIT, DEFAULT_RELAY_BODY_LIMIT, type Config } from './config';
import { bookkeepingFor } from './billing/bookkeeping';
import { auditPlugin } from './plugins/audit';
import { authPlugin } from './plugins/auth';
import { backgroundJobsPlugin } from './plugins/backgroundJobs';
import { consolePlugin } from './plugins/console';
import { csrfPlugin } from './plugins/csrf';
import { errorHandlerPlugin } from './plugins/errorHandler';
import { inputLimitsPlugin } from './plugins/inputLimits';
import { loggerOptions, relayLogPlugin, type LoggerSettings } from './plugins/logging';
import { metricsPlugin } from './plugins/metrics';
import { probeFastPath, type ReadinessSources } from './plugins/readiness';
import { relayContextOf } from './plugins/relayContext';
import { assignRequestId, requestIdPlugin, tagExchange } from './plugins/requestId';
import { securityHeadersPlugin, setSecurityHeaders, turnstileEnabled } from './plugins/securityHeaders';
import { servicesPlugin } from './plugins/services';
import { tracingPlugin } from './telemetry/tracingPlugin';
import { newNodeId, requestIdsOf } from './relay/nodeLease';
import { accountRoutes } from './routes/api/account';
import { auditRoutes } from './routes/api/audit';
import { channelRoutes } from './routes/api/channel';
import { dashboardRoutes } from './routes/api/dashboard';
import { importRoutes } from './routes/api/import';
import { logRoutes } from './routes/api/log';
import { miscRoutes } from './routes/api/misc';
import { oauthRoutes } from './routes/api/oauth';
import { passkeyRoutes } from './routes/api/passkey';
import { oidcRoutes } from './routes/api/oidc';
import { pricingRoutes } from './routes/api/pricing';
import { optionRoutes } from './routes/api/option';
import { organizationRoutes } from './routes/api/organization';
import { redemptionRoutes } from './routes/api/redemption';
import { retentionRoutes } from './routes/api/retention';
import { setupRoutes } from './routes/api/setup';
import { taskRoutes } from './routes/api/task';
import { tokenRoutes } from './routes/api/token';
import { twoFactorRoutes } from './routes/api/twoFactor';
import { userRoutes } from './routes/api/user';
import { userAdminRoutes } from './routes/api/userAdmin';
import { webhookRoutes } from './routes/api/webhook';
import { operationsRoutes } from './routes/operations';
import { relayRoutes } from './routes/v1/relay';
import { relayFastPath } from './relay/fastPath';
import { TEXT_ROUTES } from './routes/v1/text';

export interface BuildOptions {
  /** The server log (see plugins/logging.ts); none when absent or false. */
  logger?: false | LoggerSettings;
}

export async function buildApp(config: Config, buildOptions: BuildOptions = {}): Promise<FastifyInstance> {
  // The hot relay routes are answered before Fastify sees the request (see
  // relayFastPath); it is installed once the app is built.
  const answerers: {
    fastPath?: (request: IncomingMessage, response: ServerResponse) => boolean;
    probes?: (request: IncomingMessage, response: ServerResponse) => boolean;
  } = {};
  let closing = false;
  /** SIGTERM's drain: not ready any more, still serving (main.ts). */
  let draining = false;
  let turnstileOn = () => false;
  const bodyLimits = {
    relay: config.relayBodyLimitBytes ?? DEFAULT_RELAY_BODY_LIMIT,
    api: config.apiBodyLimitBytes ?? DEFAULT_API_BODY_LIMIT,
  };
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
    // the services plugin opens the database and runs its migrations: on a large database, or a MariaDB that is
    // slow to answer (seen under load in the suite), that takes more than Fastify's default of 10 s
    pluginTimeout: 120_000,
    bodyLimit: bodyLimits.relay,
    // Schemas say exactly what is accepted: no coercion (it would read "0x1", " 1" and "1e3" as
    // numbers), no silent removal of fields; `verbose` gives the error handler each rule's description.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, verbose: true, allowUnionTypes: true } },
    serverFactory: (handler) => {
      const server = createServer((request, response) => {
        tagExchange(request, response, newRequestId);
        setSecurityHeaders(request, response, config.trustProxy, turnstileOn());
        if (config.nodeIdHeader) response.setHeader('x-switchboard-node', nodeId);
        if (answerers.probes?.(request, response)) return;
        if (!answerers.fastPath?.(request, response)) handler(request, response);
      });
      server.keepAliveTimeout = 72_000; // what Fastify sets on a server of its own
      return server;
    },
  });
  app.addHook('preClose', () => {
    closing = true;
    return Promise.resolve();
  });

  // the services, as `ctx`: database, options, Redis, leases and jobs, the relay's context
  await app.register(servicesPlugin, {
    config,
    nodeId,
    newRequestId,
    startDraining: () => {
      draining = true;
    },
  });
  const { ctx } = app;
  const bookkeeping = bookkeepingFor(ctx, app.log);
  const probeSources = { db: ctx.db, redis: ctx.redis, isClosing: () => closing || draining };
  answerers.probes = (request, response) => probeFastPath(request, response, probeSources);
  turnstileOn = () => turnstileEnabled(ctx.options);

  // the hooks: what every request goes through before its route
  await app.register(inputLimitsPlugin, bodyLimits);
  await app.register(metricsPlugin);
  await app.register(tracingPlugin);
  await app.register(relayLogPlugin);
  await app.register(securityHeadersPlugin);
  await app.register(requestIdPlugin);
  await app.register(fastifyCookie);
  await app.register(csrfPlugin);
  await app.register(authPlugin);
  // after the CSRF check: a call it refuses writes no audit row
  await app.register(auditPlugin);
  await app.register(errorHandlerPlugin);

  await registerRoutes(app, probeSources);

  await app.register(backgroundJobsPlugin);
  // the console's files, and the answer to anything no route took
  await app.register(consolePlugin, { consoleDir: config.consoleDir });

  answerers.fastPath = relayFastPath(relayContextOf(app, bookkeeping), TEXT_ROUTES, {
    trustProxy: config.trustProxy,
    bodyLimit: bodyLimits.relay,
    isClosing: () => closing,
  });
  return app;
}

/** The routes, in the order they are registered: operations, the console's API, then the relay. */
async function registerRoutes(app: FastifyInstance, probeSources: ReadinessSources): Promise<void> {
  await app.register(operationsRoutes(probeSources, app.ctx.metrics));
  await app.register(miscRoutes);
  await app.register(userRoutes);
  await app.register(twoFactorRoutes);
  await app.register(passkeyRoutes);
  await app.register(optionRoutes);
  await app.register(accountRoutes);
  await app.register(oauthRoutes);
  await app.register(oidcRoutes);
  await app.register(userAdminRoutes);
  await app.register(tokenRoutes);
  await app.register(redemptionRoutes);
  await app.register(logRoutes);
  await app.register(taskRoutes);
  await app.register(dashboardRoutes);
  await app.register(setupRoutes);
  await app.register(pricingRoutes);
  await app.register(channelRoutes);
  await app.register(importRoutes);
  await app.register(retentionRoutes);
  await app.register(webhookRoutes);
  await app.register(auditRoutes);
  await app.register(organizationRoutes);
  await app.register(relayRoutes);
}
