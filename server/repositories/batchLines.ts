// The queries of the batches the gateway runs itself (migration 0030's
// batch_lines, owned by a `tasks` row of kind 'batch'; relay/batches/selfRun.ts
// runs them, billing/batchLedger.ts moves their money). Every change of a line
// is a conditional UPDATE: a lease only of a line queued or whose lease ran
// out, a settlement only by the lease that holds it, a cancellation only of
// lines still queued (each marked with the cancelling call's own token, so
// what it refunds is exactly what it changed).
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/database';
import type { BatchLinesTable } from '../db/schema/batchLines';

type Executor = Kysely<Database>;

export type BatchLineRow = Selectable<BatchLinesTable>;

/** The statuses of a line not yet run to its end. */
export const LINE_OPEN = ['queued', 'running'] as const;

/** The batch statuses the runner finishes (a batch in any other is settled). */
export const BATCH_OPEN = ['validating', 'in_progress', 'finalizing', 'cancelling'] as const;

/** The task kinds whose lines are here: OpenAI's batches and Anthropic's Message Batches (routes/v1/messageBatches.ts). */
export const BATCH_KINDS = ['batch', 'message_batch'] as const;

/** Rows and body bytes per INSERT: under every dialect's limit of bound parameters and MariaDB's default packet (16 MiB). */
const INSERT_ROWS = 200;
const INSERT_BYTES = 4 * 1024 * 1024;

export async function insertBatchLines(db: Executor, rows: readonly Insertable<BatchLinesTable>[]): Promise<void> {
  let chunk: Insertable<BatchLinesTable>[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (chunk.length > 0 && (chunk.length >= INSERT_ROWS || bytes + row.body.length > INSERT_BYTES)) {
      await db.insertInto('batch_lines').values(chunk).execute();
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += row.body.length + row.custom_id.length;
  }
  if (chunk.length > 0) await db.insertInto('batch_lines').values(chunk).execute();
}

/**
 * Lines any node may take now: running under a lease that ran out (their node died) first, then queued ones, the
 * oldest batch's first (a queued line's updated_at is its batch's creation). Two queries, each along an index.
 */
export async function dueBatchLines(db: Executor, now: number, limit: number): Promise<{ task_id: string; line: number }[]> {
  const orphans = await db
    .selectFrom('batch_lines')
    .select(['task_id', 'line'])
    .where('status', '=', 'running')
    .where('lease_until', '<', now)
    .limit(limit)
    .execute();
  const queued =
    orphans.length >= limit
      ? []
      : await db
          .selectFrom('batch_lines')
          .select(['task_id', 'line'])
          .where('status', '=', 'queued')
          .orderBy('status')
          .orderBy('updated_at')
          .orderBy('task_id')
          .orderBy('line')
          .limit(limit - orphans.length)
          .execute();
  return [...orphans, ...queued].map((row) => ({ task_id: row.task_id, line: Number(row.line) }));
}

/** Takes a line's lease under `owner` (a token of this run's) if nobody holds a live one: the line when this call got it. */
export async function leaseBatchLine(
  db: Executor,
  key: { task_id: string; line: number },
  owner: string,
  now: number,
  until: number,
): Promise<BatchLineRow | undefined> {
  const result = await db
    .updateTable('batch_lines')
    .set((eb) => ({ status: 'running', lease_owner: owner, lease_until: until, attempts: eb('attempts', '+', 1) }))
    .where('task_id', '=', key.task_id)
    .where('line', '=', key.line)
    .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return undefined;
  return db
    .selectFrom('batch_lines')
    .selectAll()
    .where('task_id', '=', key.task_id)
    .where('line', '=', key.line)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
}

/** Closes a running line held by `owner`: its status, answer and charge; whether this call closed it. */
export async function closeBatchLine(
  db: Executor,
  key: { task_id: string; line: number },
  owner: string,
  fields: { status: 'completed' | 'failed'; charged_quota: number; status_code: number; result: string; updated_at: number },
): Promise<boolean> {
  const result = await db
    .updateTable('batch_lines')
    .set({ ...fields, lease_owner: null, lease_until: 0 })
    .where('task_id', '=', key.task_id)
    .where('line', '=', key.line)
    .where('status', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks a batch's queued lines `status` under `marker`; what they held together (only the lines this call changed). */
export async function dropQueuedLines(
  db: Executor,
  taskId: string,
  status: 'cancelled' | 'expired',
  marker: string,
  now: number,
): Promise<{ lines: number; bound: number }> {
  await db
    .updateTable('batch_lines')
    .set({ status, lease_owner: marker, updated_at: now })
    .where('task_id', '=', taskId)
    .where('status', '=', 'queued')
    .execute();
  const row = await db
    .selectFrom('batch_lines')
    .select((eb) => [eb.fn.countAll<number>().as('lines'), eb.fn.coalesce(eb.fn.sum<number>('bound'), sql<number>`0`).as('bound')])
    .where('task_id', '=', taskId)
    .where('status', '=', status)
    .where('lease_owner', '=', marker)
    .executeTakeFirstOrThrow();
  return { lines: Number(row.lines), bound: Number(row.bound) };
}

/** How many of a batch's lines are in each status. */
export async function batchLineCounts(db: Executor, taskId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('batch_lines')
    .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
    .where('task_id', '=', taskId)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

/** A page of a batch's settled lines in file order, after `afterLine`: what the output and error files are written from. */
export function batchResults(db: Executor, taskId: string, afterLine: number, limit: number): Promise<BatchLineRow[]> {
  return db
    .selectFrom('batch_lines')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('line', '>', afterLine)
    .orderBy('line')
    .limit(limit)
    .execute();
}

/** Batches still open (their lines may all be done): the runner's finishing pass looks at these. */
export async function openBatchIds(db: Executor, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select('id')
    .where('kind', 'in', BATCH_KINDS)
    .where('status', 'in', BATCH_OPEN)
    .where('lease_until', '<', now)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Moves a batch from one status to another (validating to in_progress, in_progress to cancelling); whether it moved. */
export async function moveBatch(
  db: Executor,
  id: string,
  from: readonly string[],
  to: string,
  request: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ status: to, request, updated_at: now })
    .where('id', '=', id)
    .where('kind', 'in', BATCH_KINDS)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Takes a batch's finishing lease if nobody holds a live one; whether this call got it. */
export async function leaseBatch(db: Executor, id: string, owner: string, now: number, until: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ lease_owner: owner, lease_until: until })
    .where('id', '=', id)
    .where('status', 'in', BATCH_OPEN)
    .where('lease_until', '<', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Takes `amount` of a batch's hold off it (a line settled or dropped) and adds `charge`; whether the hold had it. */
export async function takeFromBatchHold(db: Executor, id: string, amount: number, charge: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({
      held_quota: eb('held_quota', '-', amount),
      charged_quota: eb('charged_quota', '+', charge),
      updated_at: now,
    }))
    .where('id', '=', id)
    .where('held_quota', '>=', amount)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Closes a batch whose finishing lease `owner` holds: its final status and summary, whatever it still held gone. */
export async function closeBatch(
  db: Executor,
  id: string,
  owner: string,
  held: number,
  fields: { status: string; request: string; progress: number; updated_at: number; completed_at: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ ...fields, held_quota: 0, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('held_quota', '=', held)
    .where('status', 'in', BATCH_OPEN)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives up a batch's finishing lease (its lines are not all done yet), its status and summary as given. */
export async function releaseBatch(db: Executor, id: string, owner: string): Promise<void> {
  await db.updateTable('tasks').set({ lease_owner: null, lease_until: 0 }).where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** Puts a line its run gave up (the node shutting down) back in the queue, if `owner` still holds it. */
export async function requeueBatchLine(db: Executor, key: { task_id: string; line: number }, owner: string): Promise<void> {
  await db
    .updateTable('batch_lines')
    .set({ status: 'queued', lease_owner: null, lease_until: 0 })
    .where('task_id', '=', key.task_id)
    .where('line', '=', key.line)
    .where('status', '=', 'running')
    .where('lease_owner', '=', owner)
    .execute();
}
