// LogRetentionDays: logs older than that many days are deleted by a
// background job, off the relay's path, a few thousand rows per statement
// with a pause between, so a first run over years of logs never holds a
// long lock or starves the relay's writes. The usage rollups are kept: the
// dashboard and the log stats still count what the deleted logs recorded.
import type { Kysely } from 'kysely';
import type { OptionKey } from '../../common/options';
import type { Database } from '../db/database';
import { deleteLogsById, oldLogIds } from '../repositories/logRetention';

const DAY = 86_400;
/** How often the job looks for logs past their time. */
const RUN_EVERY_MS = 60 * 60 * 1000;
const ROWS_PER_DELETE = 5_000;
const PAUSE_MS = 200;

/**
 * Deletes the logs created before `cutoff` (unix seconds), `rowsPerDelete`
 * at a time (their ids first, then a DELETE by id: MySQL takes no LIMIT in a
 * subquery), pausing between; stops early when `signal` aborts. Returns how
 * many it deleted.
 */
export async function pruneLogs(
  db: Kysely<Database>,
  cutoff: number,
  options: { rowsPerDelete?: number; pauseMs?: number; signal?: AbortSignal } = {},
): Promise<number> {
  const { rowsPerDelete = ROWS_PER_DELETE, pauseMs = PAUSE_MS, signal } = options;
  let deleted = 0;
  while (!signal?.aborted) {
    const ids = await oldLogIds(db, cutoff, rowsPerDelete);
    if (ids.length === 0) break;
    deleted += await deleteLogsById(db, ids);
    if (ids.length < rowsPerDelete) break;
    await new Promise((wake) => setTimeout(wake, pauseMs));
  }
  return deleted;
}

/** What the retention job works with: the database, the options, the job leases and a log. */
export interface LogRetentionDeps {
  db: Kysely<Database>;
  options: { number(key: OptionKey): number };
  /** Runs `work` on one worker of one node per period (services/jobRunner.ts). */
  jobs: { runPeriodic<T>(name: string, periodMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> };
  log: { info: (object: object, message: string) => void; error: (object: object, message: string) => void };
}

/** The retention job: started when the app is ready, stopped (after the pass under way) before it closes. */
export interface LogRetention {
  start(): void;
  stop(): Promise<void>;
}

/** Runs the pruning once an hour (and soon after start) while LogRetentionDays > 0, on one worker at a time. */
export function logRetention(deps: LogRetentionDeps): LogRetention {
  const stop = new AbortController();
  let first: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = () => {
    const days = Math.floor(deps.options.number('LogRetentionDays'));
    if (running || !(days > 0)) return;
    const cutoff = Math.floor(Date.now() / 1000) - days * DAY;
    // one worker of one node prunes per hour (services/jobRunner.ts)
    running = deps.jobs
      .runPeriodic('log-retention', RUN_EVERY_MS, (lost) => pruneLogs(deps.db, cutoff, { signal: AbortSignal.any([stop.signal, lost]) }))
      .then((deleted) => {
        if (deleted) deps.log.info({ deleted, days }, 'deleted logs past LogRetentionDays');
      })
      .catch((error: unknown) => deps.log.error({ err: error }, 'log retention failed'))
      .finally(() => (running = undefined));
  };
  return {
    start() {
      // the hourly ticks count from the first run: each keeps the job's lease until just before the next
      first = setTimeout(() => {
        run();
        timer = setInterval(run, RUN_EVERY_MS);
        timer.unref(); // never keeps the process alive on its own
      }, 60_000);
      first.unref();
    },
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      stop.abort();
      await running;
    },
  };
}
