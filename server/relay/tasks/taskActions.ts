// What both the relay (/v1/videos, /v1/batches) and the console (/api/task/)
// do to a task, so the two never drift: a finished video's bytes, read from
// the vendor with the caller's Range; a video deleted (the vendor's copy
// first; unfinished, all it holds goes back); a batch cancelled (its unrun
// lines dropped and refunded now, the lines running finish, the runner closes
// it). Who may do it is the caller's business: these take the task's row.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database';
import { dropBatchLines } from '../../billing/batchLedger';
import { settleTask } from '../../billing/taskLedger';
import { moveBatch } from '../../repositories/batchLines';
import { findTaskById, markTaskDeleted, TASK_IN_FLIGHT, type TaskRow } from '../../repositories/tasks';
import { batchSummaryOf } from '../batches/batchObject';
import { callVendor } from './videos';

/** The headers of the vendor's content answer handed on to the client. */
const CONTENT_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'];

export type VideoContent =
  { ok: true; status: number; headers: Record<string, string>; body: Readable } | { ok: false; status: 416 | 502; message: string };

/** A completed video's bytes from its vendor, asked with `range` (and `variant`): the answer to stream, or why there is none. */
export async function readVideoContent(db: Kysely<Database>, task: TaskRow, range?: string, variant?: string): Promise<VideoContent> {
  const suffix = `/content${variant ? `?variant=${encodeURIComponent(variant)}` : ''}`;
  const answer = await callVendor(db, task, 'GET', suffix, range ? { range } : {}).catch(() => undefined);
  if (!answer?.body) return { ok: false, status: 502, message: 'the vendor did not send the video' };
  if (!answer.ok && answer.status !== 206) {
    void answer.body.cancel();
    return answer.status === 416
      ? { ok: false, status: 416, message: 'the range asked for is not in the video' }
      : { ok: false, status: 502, message: 'the vendor did not send the video' };
  }
  const headers: Record<string, string> = {};
  for (const name of CONTENT_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { ok: true, status: answer.status, headers, body: Readable.fromWeb(answer.body) };
}

/**
 * Deletes a video: the vendor's copy first, then the task (unfinished: settled with nothing charged, all it held
 * back; finished: it keeps its charge and log). 'vendor_failed' when the vendor kept it, 'gone' when another
 * call deleted or settled it first.
 */
export async function deleteVideoTask(db: Kysely<Database>, task: TaskRow): Promise<'deleted' | 'vendor_failed' | 'gone'> {
  const answer = task.upstream_id ? await callVendor(db, task, 'DELETE', '').catch(() => undefined) : undefined;
  if (task.upstream_id && (!answer || (!answer.ok && answer.status !== 404))) return 'vendor_failed';
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
