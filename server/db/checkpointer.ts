// SQLite in WAL mode copies the log back into the database file (a
// checkpoint) every 1000 pages by default, inside whichever commit crosses
// that line, with an fsync or two: on the gateway's event loop that was a
// stall of several milliseconds every few seconds under load, the whole of
// its tail latency. Here a worker thread with a connection of its own runs
// PASSIVE checkpoints instead (they never block the writers), and the main
// connection turns automatic checkpoints off.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_INTERVAL_MS = 1000;
/** Once checkpointed, a WAL file larger than this is cut back when SQLite starts it over. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

// Plain CommonJS run by the worker (eval), so it needs no file of its own next to the server bundle.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const database = new Database(workerData.path, { fileMustExist: true });
database.pragma('busy_timeout = 5000');
// a checkpoint copies frames from the WAL file to the database file; it needs next to no page cache
database.pragma('cache_size = -256');
const checkpoint = () => {
  try {
    database.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  database.close();
  parentPort.postMessage({ stopped: true });
});
`;

export interface Checkpointer {
  /** Runs a last checkpoint and ends the worker. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, intervalMs: CHECKPOINT_INTERVAL_MS },
    // a few objects and one connection: a small heap keeps the worker to a few MiB of memory
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
  });
  // never what keeps a finished process alive
  worker.unref();
  let stopped: Promise<void> | undefined;
  worker.on('message', (message: { error?: string }) => {
    if (message.error) onError(message.error);
  });
  worker.on('error', (error) => onError(error.message));
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        worker.on('message', (message: { stopped?: boolean }) => {
          if (message.stopped) void worker.terminate().then(() => resolve());
        });
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
      });
      return stopped;
    },
  };
}
