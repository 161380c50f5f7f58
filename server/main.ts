// Process entry: configuration, listening, and a graceful stop on SIGTERM/SIGINT.
import { fileURLToPath } from 'node:url';
import { buildApp } from './app';
import { isClusterWorker, runPrimary } from './cluster';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS, loadConfig, type Config } from './config';
import { relayRegistry } from './plugins/relayContext';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  console.error(`[switchboard] ${(error as Error).message}`);
  process.exit(1);
}
// WORKERS above 1: this process only forks and watches that many workers, each running this file (cluster.ts); it never gets past here
if ((config.workers ?? 1) > 1 && !isClusterWorker()) await runPrimary(config, fileURLToPath(import.meta.url));
const app = await buildApp(config, { logger: { level: config.logLevel } });

/** After the grace, how long cut requests get to settle and close before the connections left are dropped. */
/** Seconds since this process began (under `npm start`, install and build included). */
const readyAfter = (): string => `${process.uptime().toFixed(1)} s after start`;

const CUT_SETTLE_MS = 2_000;
/** After that, the longest the database flush may take before the process gives up. */
const FLUSH_LIMIT_MS = 30_000;

// A stop that cut streams at a fixed 10 s used to leave them unbilled. Now:
// no new requests (Fastify answers 503 and the listening socket closes), the
// requests in flight run for the grace, then the rest are cut (a stream is
// billed for what it delivered, marked estimated; a call still waiting is
// aborted and its reservation released), and app.close() writes every
// settlement and log before it closes the database.
let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  // behind a load balancer: first only /readyz says 503 (everything else still served) until the balancer stops sending
  const drainMs = (config.shutdownDrainSeconds ?? 0) * 1000;
  if (drainMs > 0) {
    app.ctx.startDraining();
    app.log.warn(
      `${signal} received: /readyz now answers 503; still serving for ${drainMs / 1000} s (SHUTDOWN_DRAIN_SECONDS) before the stop`,
    );
    await new Promise((resolve) => setTimeout(resolve, drainMs));
  }
  const graceMs = (config.shutdownGraceSeconds ?? DEFAULT_SHUTDOWN_GRACE_SECONDS) * 1000;
  const registry = relayRegistry(app);
  app.log.warn(
    `${signal} received: refusing new requests, ${registry.size} relayed request(s) in flight get ${graceMs / 1000} s to finish`,
  );
  // keep-alive connections that fall idle during the grace are closed as they do
  const sweep = setInterval(() => app.server.closeIdleConnections(), 200);
  sweep.unref();
  const cut = setTimeout(() => {
    const count = registry.cutAll();
    if (count > 0) app.log.warn(`shutdown grace over: cut ${count} relayed request(s), billed for what they delivered`);
    setTimeout(() => app.server.closeAllConnections(), CUT_SETTLE_MS).unref();
  }, graceMs);
  cut.unref();
  const forced = setTimeout(
    () => {
      app.log.error('shutdown could not flush in time, exiting');
      process.exit(1);
    },
    graceMs + CUT_SETTLE_MS + FLUSH_LIMIT_MS,
  );
  forced.unref();
  try {
    await app.close();
    clearTimeout(cut);
    clearInterval(sweep);
    process.exit(0);
  } catch (error) {
    app.log.error(error);
    process.exit(1);
  }
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));

try {
  await app.listen({ port: config.port, host: config.host });
  const where = config.database.dialect === 'sqlite' ? `SQLite at ${config.database.path}` : config.database.dialect;
  // a worker says who it is; its primary announces the gateway once every worker listens
  if (isClusterWorker()) console.log(`[switchboard] worker ${process.pid} is node ${app.ctx.nodeId}`);
  else console.log(`[switchboard] gateway and console on http://localhost:${config.port} (${where}); ready ${readyAfter()}`);
} catch (error) {
  app.log.error(error);
  process.exit(1);
}
