// A new batch as both batch APIs store it (routes/v1/batches.ts and
// routes/v1/messageBatches.ts): its task row, validating, holding the sum of
// its lines' bounds for a window of 24 hours, and its lines: queued for the
// gateway's runners, or, for a batch at the vendor, held by the vendor's run
// until its results settle them. holdTask (tasks/holdTask.ts) writes both in
// the transaction that takes the hold.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database';
import { insertBatchLines } from '../../repositories/batchLines';
import type { HeldTaskRow } from '../tasks/holdTask';
import type { RelayCaller } from '../tokenAuth';
import type { BatchSummary } from './batchObject';
import type { InputLine } from './input';
import { UPSTREAM_LINE_OWNER } from './upstreamSettle';

/** How long a batch may take, in both APIs. */
const WINDOW_SECONDS = 24 * 3600;
/** A batch is never the task poller's: its next poll never comes (its runners move it). */
const NEVER = Number.MAX_SAFE_INTEGER;

export interface NewBatch {
  /** `batch_` (OpenAI's) or `msgbatch_` (Anthropic's), and the random bytes after it. */
  idPrefix: string;
  idBytes: number;
  kind: string;
  model: string;
  bound: number;
  summary: BatchSummary;
  requestId: string;
  lines: InputLine[];
}

/** The task row of a new batch, and what writes its lines beside it (holdTask's writeAlso). */
export function newBatchRows(caller: RelayCaller, batch: NewBatch) {
  const now = Math.floor(Date.now() / 1000);
  const row: HeldTaskRow = {
    id: `${batch.idPrefix}${randomBytes(batch.idBytes).toString('hex')}`,
    kind: batch.kind,
    user_id: Number(caller.user.id),
    token_id: Number(caller.token.id),
    model: batch.model,
    status: 'validating',
    held_quota: batch.bound,
    request: JSON.stringify(batch.summary),
    request_id: batch.requestId,
    next_poll_at: NEVER,
    created_at: now,
    updated_at: now,
    expires_at: now + WINDOW_SECONDS,
  };
  // an upstream batch's lines are the vendor's to run: held by the batch until its results settle them
  const state =
    batch.summary.mode === 'upstream' ? { status: 'running', lease_owner: UPSTREAM_LINE_OWNER, lease_until: NEVER } : { status: 'queued' };
  const lines = batch.lines.map((line) => ({
    task_id: row.id,
    line: line.line,
    custom_id: line.customId,
    body: line.body,
    bound: line.bound,
    ...state,
    updated_at: now,
  }));
  return { row, writeLines: (transaction: Kysely<Database>) => insertBatchLines(transaction, lines) };
}
