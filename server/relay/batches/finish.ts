// The end of a gateway-run batch, on whichever node takes its finishing
// lease (a conditional UPDATE on the task row, like the task poller's): a
// batch still `validating` goes `in_progress`; one past its completion window
// has its queued lines dropped (expired, their bounds refunded); once no line
// is queued or running it goes `finalizing`, its output and error files are
// written through the file store (purpose batch_output, in the input's order,
// OpenAI's output line shape), and it closes `completed`, `cancelled` or
// `expired` with its hold at zero. A node that dies while finishing loses the
// lease when it runs out, and the next one writes the files again (the first
// copy is left unnamed by the batch).
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database';
import { closeBatchTask, dropBatchLines } from '../../billing/batchLedger';
import { batchLineCounts, batchResults, leaseBatch, moveBatch, releaseBatch, type BatchLineRow } from '../../repositories/batchLines';
import { insertUploadingFile, markFileProcessed } from '../../repositories/files';
import { findTaskById, type TaskRow } from '../../repositories/tasks';
import type { FileStore } from '../../services/fileStore';
import { batchSummaryOf, type BatchSummary } from './batchObject';

/** Lines read per query as a file is written. */
const RESULT_PAGE = 500;

export interface FinishDeps {
  db: Kysely<Database>;
  store: FileStore;
  /** How long a finishing lease lasts (ms). */
  leaseMs: number;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** "file-" and 24 letters and digits, as OpenAI's ids (and the files API's) look. */
function outputFileId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `file-${[...randomBytes(24)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
}

/** The output line of a line that never ran (dropped by a cancel or the completion window). */
function droppedLine(row: BatchLineRow): string {
  const code = row.status === 'expired' ? 'batch_expired' : 'batch_cancelled';
  const message =
    row.status === 'expired'
      ? 'This request could not be executed before the completion window expired.'
      : 'The batch was cancelled before this request ran.';
  return JSON.stringify({
    id: `batch_req_${randomBytes(12).toString('hex')}`,
    custom_id: row.custom_id,
    response: null,
    error: { code, message },
  });
}

/** The output file's lines (answered 2xx) or the error file's (every other line), in the input's order. */
async function* linesOf(db: Kysely<Database>, taskId: string, errors: boolean): AsyncGenerator<Buffer> {
  let after = -1;
  for (;;) {
    const rows = await batchResults(db, taskId, after, RESULT_PAGE);
    if (rows.length === 0) return;
    after = Number(rows.at(-1)!.line);
    const texts: string[] = [];
    for (const row of rows) {
      const answered = row.status === 'completed';
      if (answered === errors) continue;
      texts.push(row.result ?? droppedLine(row));
    }
    if (texts.length > 0) yield Buffer.from(`${texts.join('\n')}\n`);
  }
}

/** Writes one of the batch's files (none when it would be empty); its id. */
async function writeFile(deps: FinishDeps, task: TaskRow, errors: boolean, count: number): Promise<string | undefined> {
  if (count === 0) return undefined;
  const id = outputFileId();
  const createdAt = nowSeconds();
  const filename = `${task.id}_${errors ? 'error' : 'output'}.jsonl`;
  await insertUploadingFile(deps.db, { id, userId: Number(task.user_id), filename, purpose: 'batch_output', createdAt });
  const bytes = await deps.store.put(id, linesOf(deps.db, task.id, errors));
  await markFileProcessed(deps.db, id, { purpose: 'batch_output', bytes, expiresAt: null });
  return id;
}

/** The final status of a batch whose lines are all done, and the summary's time for it. */
function finalOf(task: TaskRow, summary: BatchSummary, now: number): { status: string; summary: BatchSummary } {
  if (task.status === 'cancelling') return { status: 'cancelled', summary: { ...summary, cancelled_at: now } };
  if (summary.failed_at !== undefined) return { status: 'failed', summary };
  if (summary.expired_at !== undefined) return { status: 'expired', summary };
  return { status: 'completed', summary: { ...summary, completed_at: now } };
}

/** Takes the batch's finishing lease and moves it on as far as it can go now; whether it closed. */
export async function finishBatch(deps: FinishDeps, id: string): Promise<boolean> {
  const { db } = deps;
  const owner = randomBytes(12).toString('hex');
  if (!(await leaseBatch(db, id, owner, Date.now(), Date.now() + deps.leaseMs))) return false;
  try {
    const task = await findTaskById(db, id);
    return task ? await moveOn(deps, task, owner) : false;
  } finally {
    await releaseBatch(db, id, owner);
  }
}

/** Moves a batch whose finishing lease `owner` holds as far as it can go now (closed once no line is open); whether it closed. */
export async function moveOn(deps: FinishDeps, task: TaskRow, owner: string): Promise<boolean> {
  const { db } = deps;
  const now = nowSeconds();
  let summary = batchSummaryOf(task);
  if (task.status === 'validating') {
    summary = { ...summary, in_progress_at: now };
    if (!(await moveBatch(db, task.id, ['validating'], 'in_progress', JSON.stringify(summary), now))) return false;
    task = { ...task, status: 'in_progress', request: JSON.stringify(summary) };
  }
  if (task.status === 'in_progress' && task.expires_at !== null && now > Number(task.expires_at) && summary.expired_at === undefined) {
    summary = { ...summary, expired_at: now };
    if (!(await moveBatch(db, task.id, ['in_progress'], 'in_progress', JSON.stringify(summary), now))) return false;
    await dropBatchLines(db, task, 'expired', owner);
  }
  const counts = await batchLineCounts(db, task.id);
  if ((counts.queued ?? 0) + (counts.running ?? 0) > 0) return false;
  if (task.status === 'in_progress') {
    summary = { ...summary, finalizing_at: now };
    if (!(await moveBatch(db, task.id, ['in_progress'], 'finalizing', JSON.stringify(summary), now))) return false;
    task = { ...task, status: 'finalizing' };
  }
  const answered = counts.completed ?? 0;
  // a Message Batch's results are read from its lines (messageBatch.ts): it has no files
  const files = task.kind !== 'message_batch';
  const output_file_id = files ? await writeFile(deps, task, false, answered) : undefined;
  const unanswered = Object.values(counts).reduce((sum, count) => sum + count, 0) - answered;
  const error_file_id = files ? await writeFile(deps, task, true, unanswered) : undefined;
  const final = finalOf(task, { ...summary, output_file_id, error_file_id }, nowSeconds());
  const current = await findTaskById(db, task.id);
  if (!current) return false;
  return closeBatchTask(db, current, owner, Number(current.held_quota), {
    status: final.status,
    request: JSON.stringify(final.summary),
    progress: 100,
    completed_at: final.status === 'completed' ? nowSeconds() : null,
  });
}
