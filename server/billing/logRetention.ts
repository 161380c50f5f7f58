// Logs older than their retention (LogRetentionDays, ErrorLogRetentionDays for
// the error logs) are deleted by a background job (retentionJob.ts), off the
// relay's path, a few thousand rows per statement with a pause between, so a
// first run over years of logs never holds a long lock or starves the relay's
// writes. The usage rollups are kept: the dashboard and the log stats still
// count what the deleted logs recorded.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { deleteLogsById, oldLogIds, type LogSelection } from '../repositories/logRetention';

const ROWS_PER_DELETE = 5_000;
const PAUSE_MS = 200;

export interface PruneLogsOptions {
  rowsPerDelete?: number;
  pauseMs?: number;
  signal?: AbortSignal;
  /** Only the error logs, or only the others; all logs when absent. */
  selection?: LogSelection;
  /** Told how many rows each batch deleted (the console's progress bar). */
  onDeleted?: (count: number) => void;
}

/**
 * Deletes the logs created before `cutoff` (unix seconds), `rowsPerDelete`
 * at a time (their ids first, then a DELETE by id: MySQL takes no LIMIT in a
 * subquery), pausing between; stops early when `signal` aborts. Returns how
 * many it deleted.
 */
export async function pruneLogs(db: Kysely<Database>, cutoff: number, options: PruneLogsOptions = {}): Promise<number> {
  const { rowsPerDelete = ROWS_PER_DELETE, pauseMs = PAUSE_MS, signal, selection, onDeleted } = options;
  let deleted = 0;
  while (!signal?.aborted) {
    const ids = await oldLogIds(db, cutoff, rowsPerDelete, selection);
    if (ids.length === 0) break;
    const batch = await deleteLogsById(db, ids);
    deleted += batch;
    onDeleted?.(batch);
    if (ids.length < rowsPerDelete) break;
    await new Promise((wake) => setTimeout(wake, pauseMs));
  }
  return deleted;
}
