// AuditRetentionDays: audit rows older than that many days are deleted by the
// hourly prune of stored rows (billing/retentionJob.ts, where the `audit`
// kind is one line of plugins/retention.ts), oldest first, a batch per
// transaction; each batch makes its last row the chain's anchor, so the walk
// still starts on a known hash and the chain stays whole. The prune then
// appends a row of its own saying what it deleted, so a pruning is itself on
// the record. 0 (the default) keeps every row.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { lastOldAuditSeq, pruneAuditThrough } from '../repositories/auditLog';
import { appendAudit } from './chain';

const ROWS_PER_DELETE = 5_000;
const PAUSE_MS = 200;

/**
 * Deletes the rows created before `cutoff` (Unix seconds), `rowsPerDelete` at
 * a time, moving the anchor with each batch and telling `onDeleted` how many
 * went; then records the pruning as an audit row. Stops early when `signal`
 * aborts. Resolves to how many rows went.
 */
export async function pruneAudit(
  db: Kysely<Database>,
  cutoff: number,
  options: { rowsPerDelete?: number; pauseMs?: number; signal?: AbortSignal; onDeleted?: (count: number) => void } = {},
): Promise<number> {
  const { rowsPerDelete = ROWS_PER_DELETE, pauseMs = PAUSE_MS, signal, onDeleted } = options;
  let deleted = 0;
  let throughSeq = 0;
  while (!signal?.aborted) {
    const seq = await lastOldAuditSeq(db, cutoff, rowsPerDelete);
    if (seq === undefined) break;
    const removed = await pruneAuditThrough(db, seq);
    deleted += removed;
    onDeleted?.(removed);
    throughSeq = seq;
    if (removed < rowsPerDelete) break;
    await new Promise((wake) => setTimeout(wake, pauseMs));
  }
  if (deleted > 0) {
    await appendAudit(db, {
      created_at: Math.floor(Date.now() / 1000),
      organization_id: null,
      user_id: null,
      username: '',
      role: 0,
      ip: '',
      user_agent: '',
      request_id: '',
      method: 'JOB',
      route: 'audit-retention',
      action: 'audit.prune',
      target_type: 'audit',
      target_id: String(throughSeq),
      status: 200,
      success: 1,
      changes: JSON.stringify({ after: { deleted, through_seq: throughSeq, cutoff } }),
    });
  }
  return deleted;
}
