// What both the relay (/v1/videos, /v1/batches) and the console (/api/task/)
// do to a task, so the two never drift: a finished video's bytes, read from
// the vendor with the caller's Range; a video deleted (the vendor's copy
// first; unfinished, all it holds goes back); a batch cancelled (its unrun
// lines dropped and refunded now, the lines running finish, the runner closes
// it). Who may do it is the caller's business: these take the task's row.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database';
import { dropBatchLines } from '../../billing/batchLedger';
import { settleTask } from '../../billing/taskLedger';
import { moveBatch } from '../../repositories/batchLines';
import { findTaskById, markTaskDeleted, TASK_IN_FLIGHT, type TaskRow } from '../../repositories/tasks';
import { batchSummaryOf } from '../batches/batchObject';
import type { FileStore } from '../../services/fileStore';
import { callVendor } from './videos';
import { vendorContent, type VideoContent } from './videoContent';
import { adaptedContent, adaptedVendorOf, forgetAdapted } from './videoVendors';

export type { VideoContent };

/** A completed video's bytes from its vendor (or the copy kept of them), asked with `range` (and `variant`): the answer to stream, or why there is none. */
export async function readVideoContent(
  db: Kysely<Database>,
  store: FileStore,
  task: TaskRow,
  range?: string,
  variant?: string,
): Promise<VideoContent> {
  const adapted = await adaptedVendorOf(db, task);
  if (adapted) return adaptedContent(store, task, adapted, range);
  const suffix = `/content${variant ? `?variant=${encodeURIComponent(variant)}` : ''}`;
  return vendorContent(await callVendor(db, task, 'GET', suffix, range ? { range } : {}).catch(() => undefined));
}

/**
 * Deletes a video: the vendor's copy first (a vendor that deletes none, Google's, is not asked; a copy kept here is
 * freed), then the task (unfinished: settled with nothing charged, all it held back; finished: it keeps its charge and
 * log). 'vendor_failed' when the vendor kept it, 'gone' when another call deleted or settled it first.
 */
export async function deleteVideoTask(
  db: Kysely<Database>,
  store: FileStore,
  task: TaskRow,
): Promise<'deleted' | 'vendor_failed' | 'gone'> {
  const adapted = task.upstream_id ? await adaptedVendorOf(db, task) : undefined;
  if (adapted) await forgetAdapted(store, task, adapted);
  else {
    const answer = task.upstream_id ? await callVendor(db, task, 'DELETE', '').catch(() => undefined) : undefined;
    if (task.upstream_id && (!answer || (!answer.ok && answer.status !== 404))) return 'vendor_failed';
  }
  const inFlight = (TASK_IN_FLIGHT as readonly string[]).includes(task.status);
  const deleted = inFlight
    ? await settleTask(db, task, { status: 'deleted', charge: 0 })
    : await markTaskDeleted(db, task.id, Math.floor(Date.now() / 1000));
  return deleted ? 'deleted' : 'gone';
}

/** Whether a batch in this status can be cancelled (one cancelling or cancelled already answers as it is). */
export const BATCH_CANCELLABLE = ['validating', 'in_progress'];

/**
 * Cancels a batch: lines not yet run are dropped and refunded now, lines running finish, the runner closes it
 * `cancelled` with its files. The batch as it is now, or undefined when its status cannot be cancelled.
 */
export async function cancelBatchTask(db: Kysely<Database>, task: TaskRow): Promise<TaskRow | undefined> {
  if (BATCH_CANCELLABLE.includes(task.status)) {
    const now = Math.floor(Date.now() / 1000);
    const summary = { ...batchSummaryOf(task), cancelling_at: now };
    if (await moveBatch(db, task.id, [task.status], 'cancelling', JSON.stringify(summary), now))
      await dropBatchLines(db, task, 'cancelled', randomBytes(12).toString('hex'));
  } else if (task.status !== 'cancelling' && task.status !== 'cancelled') {
    return undefined;
  }
  return findTaskById(db, task.id);
}
