// SQLite in WAL mode copies the log back into the database file (a
// checkpoint) every 1000 pages by default, inside whichever commit crosses
// that line, with an fsync or two: on the gateway's event loop that was a
// stall of several milliseconds every few seconds under load, the whole of
// its tail latency. Here a worker thread with a connection of its own runs
// PASSIVE checkpoints instead (they never block the writers), and the main
// connection turns automatic checkpoints off.
//
// A PASSIVE checkpoint alone cannot keep the WAL small under steady traffic.
// SQLite starts the log over (writes from its first frame again) only when a
// commit begins with every frame already copied back, and a checkpoint takes
// longer than the gap between two relayed requests: new frames always arrive
// while it runs. Measured at 3000 requests/s, the log grew by 16 MB a second
// and never restarted until the traffic paused. So when a checkpoint leaves
// many frames behind, a second one runs with the relay's writes held (see
// `holdWrites`): it has only the frames of the last moment to copy, it ends
// with nothing left, and the next commit starts the log over. The hold lasts
// that short checkpoint and two messages: 0.2 ms on an idle machine, 4 to 17
// ms in the benchmark, where the worker shares one core with the loaded event
// loop. Only reservations, settlements and logs wait; answers and streams go
// on. It comes once the log passes 32 MB: every few seconds at the most.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_INTERVAL_MS = 1000;
/** A log this long (8192 frames of 4 KiB pages: 32 MB) that a checkpoint could not finish is caught up with writes held, so it starts over. */
export const RESTART_FRAMES = 8192;
/** The longest writes stay held for one catch-up checkpoint, whatever the worker does. */
const HOLD_LIMIT_MS = 2000;
/** Once checkpointed, a WAL file larger than this is cut back when SQLite starts it over. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

// Plain CommonJS run by the worker (eval), so it needs no file of its own next to the server bundle.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const database = new Database(workerData.path, { fileMustExist: true, nativeBinding: process.env.SWITCHBOARD_SQLITE_ADDON || undefined });
database.pragma('busy_timeout = 5000');
// a checkpoint copies frames from the WAL file to the database file; it needs next to no page cache
database.pragma('cache_size = -256');
const checkpoint = () => {
  const [result] = database.pragma('wal_checkpoint(PASSIVE)');
  return { frames: result.log };
};
parentPort.on('message', (message) => {
  if (message === 'stop') {
    try {
      checkpoint();
    } catch {}
    database.close();
    parentPort.postMessage({ stopped: true });
    return;
  }
  try {
    parentPort.postMessage({ id: message.id, ...checkpoint() });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String((error && error.message) || error) });
  }
});
`;

/** What one checkpoint found: the frames in the log. */
interface CheckpointResult {
  frames: number;
}

export interface Checkpointer {
  /**
   * How to hold the relay's writes for a catch-up checkpoint: returns the
   * function that lets them go again. Without it the log restarts only when
   * the traffic pauses.
   */
  holdWritesWith(hold: () => () => void): void;
  /** Runs a last checkpoint and ends the worker. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path },
    // a few objects and one connection: a small heap keeps the worker to a few MiB of memory
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
  });
  // never what keeps a finished process alive
  worker.unref();
  let stopped: Promise<void> | undefined;
  let holdWrites: (() => () => void) | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (result: CheckpointResult) => void; reject: (error: Error) => void }>();
  worker.on('message', (message: { id?: number; error?: string } & Partial<CheckpointResult>) => {
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (!call) return;
    waiting.delete(message.id!);
    if (message.error !== undefined) call.reject(new Error(message.error));
    else call.resolve({ frames: message.frames ?? 0 });
  });
  const failAll = (error: Error) => {
    for (const call of waiting.values()) call.reject(error);
    waiting.clear();
  };
  worker.on('error', (error) => {
    onError(error.message);
    failAll(error);
  });
  worker.once('exit', () => failAll(new Error('the checkpoint worker has stopped')));

  const checkpoint = () =>
    new Promise<CheckpointResult>((resolve, reject) => {
      if (stopped) return reject(new Error('the checkpoint worker has stopped'));
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id });
    });

  /** The log's length at the last scheduled checkpoint. */
  let lastFrames = 0;
  /** One scheduled round: a checkpoint, and a catch-up with writes held when it left a long log behind. */
  const round = async () => {
    const result = await checkpoint();
    // a log that has not grown since the last round is all copied now: its next commit starts it over by itself
    const grew = result.frames > lastFrames;
    lastFrames = result.frames;
    if (!holdWrites || result.frames < RESTART_FRAMES || !grew) return;
    const letGo = holdWrites();
    const limit = setTimeout(letGo, HOLD_LIMIT_MS);
    try {
      await checkpoint();
    } finally {
      clearTimeout(limit);
      letGo();
    }
  };
  let running = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = true;
    round()
      // a round cut short by stop() (the database closing) did not fail: only a live worker's error is reported
      .catch((error: Error) => {
        if (!stopped) onError(error.message);
      })
      .finally(() => {
        running = false;
      });
  }, CHECKPOINT_INTERVAL_MS);
  timer.unref();

  return {
    holdWritesWith(hold) {
      holdWrites = hold;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        clearInterval(timer);
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
