// WORKERS=N: the primary process forks N workers that share the port
// (node:cluster hands them the connections) and runs nothing else: no
// database, no requests. Each worker is a whole gateway (main.ts) and a relay
// node of its own (its own lease in relay_nodes, its own reservations).
//
// The primary also holds the workers' counts of requests in flight per key
// and per user (services/sharedConcurrency.ts), so those limits hold for the
// node as a whole without Redis; a worker that dies gives its places back.
//
// A worker that dies is replaced, after a pause that doubles with each death
// in quick succession (half a second up to thirty), so a worker that cannot
// start does not spin. SIGTERM or SIGINT reaches every worker, which stops as
// main.ts describes (no new requests, the grace, every settlement and log
// written); the primary exits when all have, 0 when each stopped cleanly.
import cluster, { type Worker } from 'node:cluster';
import { serveClusterMetrics } from './clusterMetrics';
import type { Config } from './config';
import { serveSharedPlaces } from './services/sharedConcurrency';

const FIRST_RESTART_MS = 500;
const LONGEST_RESTART_MS = 30_000;
/** A worker that lived this long was healthy: its death starts the backoff over. */
const HEALTHY_AFTER_MS = 30_000;
/** Deaths in a row, before any worker ever listened, after which the primary gives up (a configuration that cannot work). */
const START_ATTEMPTS = 3;

interface Slot {
  worker?: Worker;
  listening: boolean;
  startedAt: number;
  quickDeaths: number;
  restart?: NodeJS.Timeout;
}

const say = (message: string) => console.log(`[switchboard] ${message}`);

/**
 * Runs the primary of `config.workers` workers, each executing `entry` (this
 * process's own entry module). Never resolves: the primary ends by exiting,
 * once its workers have.
 */
export function runPrimary(config: Config, entry: string): Promise<never> {
  const count = config.workers ?? 1;
  // the workers run the entry module itself, not a launcher around it (scripts/start.mjs), with source maps as the launcher had them
  const execArgv = process.execArgv.includes('--enable-source-maps') ? process.execArgv : [...process.execArgv, '--enable-source-maps'];
  cluster.setupPrimary({ exec: entry, execArgv });
  const slots: Slot[] = Array.from({ length: count }, () => ({ listening: false, startedAt: 0, quickDeaths: 0 }));
  let stopping = false;
  let everListened = false;
  let failedStarts = 0;
  let exitCode = 0;

  const start = (slot: Slot) => {
    slot.startedAt = Date.now();
    const worker = cluster.fork();
    slot.worker = worker;
    worker.once('listening', () => {
      slot.listening = true;
      if (everListened) return;
      if (slots.every((other) => other.listening)) {
        everListened = true;
        const where = config.database.dialect === 'sqlite' ? `SQLite at ${config.database.path}` : config.database.dialect;
        say(`gateway and console on http://localhost:${config.port} (${where}, ${count} workers)`);
      }
    });
    worker.once('exit', (code, signal) => {
      slot.worker = undefined;
      slot.listening = false;
      if (stopping) {
        if (code !== 0) exitCode = 1;
        if (slots.every((other) => !other.worker)) process.exit(exitCode);
        return;
      }
      if (!everListened && code !== 0 && (failedStarts += 1) >= START_ATTEMPTS) {
        say(`workers could not start (${failedStarts} exits in a row, the last with ${signal ?? `code ${code}`}): giving up`);
        stopAll('SIGTERM');
        return;
      }
      slot.quickDeaths = Date.now() - slot.startedAt > HEALTHY_AFTER_MS ? 0 : slot.quickDeaths + 1;
      const pause = Math.min(LONGEST_RESTART_MS, FIRST_RESTART_MS * 2 ** Math.max(0, slot.quickDeaths - 1));
      say(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`}): starting another in ${pause / 1000} s`);
      slot.restart = setTimeout(() => start(slot), pause);
    });
  };

  const stopAll = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    exitCode = everListened ? 0 : 1;
    for (const slot of slots) clearTimeout(slot.restart);
    const alive = slots.filter((slot) => slot.worker);
    if (alive.length === 0) process.exit(exitCode);
    say(`${signal} received: stopping ${alive.length} worker(s), each finishing its requests and writing its bookkeeping`);
    for (const slot of alive) slot.worker!.process.kill(signal);
  };
  process.on('SIGTERM', () => stopAll('SIGTERM'));
  // a terminal's Ctrl-C reaches the workers too (same process group); their stop is idempotent
  process.on('SIGINT', () => stopAll('SIGINT'));

  // a scrape of /metrics on any worker gathers every worker's series through here
  if (config.metricsEnabled !== false) serveClusterMetrics();
  // the workers' requests in flight per key and per user, counted here when there is no Redis (or it is down)
  serveSharedPlaces();
  for (const slot of slots) start(slot);
  // the workers' channels keep the primary alive; this keeps it so between a death and the restart, whatever the timers
  setInterval(() => {}, 1 << 30);
  return new Promise<never>(() => {});
}

/** Whether this process is a worker forked by runPrimary. */
export const isClusterWorker = () => cluster.isWorker;
