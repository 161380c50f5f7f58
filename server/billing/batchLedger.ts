// The money of a batch the gateway runs itself. Its task (tasks row, kind
// 'batch') holds the sum of its lines' bounds from its submission
// (taskLedger.ts submitTask, the lines written in the same transaction). Each
// line then settles on its own, in one transaction: the line closed by the
// lease that ran it (a conditional UPDATE: a second node, or a node that
// outlived its lease, changes nothing and bills nothing), the line's bound
// taken off the task's hold, its charge (never more than the bound) taken
// with exactly one consume log that names the batch and the line's
// custom_id, the user's, key's and channel's counters moved. Lines dropped
// unrun (a cancelled or expired batch) give their bounds back the same way,
// with no log. What the task still holds when it closes (nothing, unless a
// bound was rounded) goes back as it closes, so its hold ends at zero and the
// ledger's invariant (start + top-ups - logged charges - held = balance)
// holds throughout.
//
// Budgets and a member's caps count a batch as they count a video
// (taskLedger.ts): its whole hold is spent from its submission, in the
// periods kept in its request's JSON; each line's settlement moves those
// spends by its charge less its bound in the same write, and a dropped line,
// or what the task still holds when it closes, takes its part back off them.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { closeBatch, closeBatchLine, dropQueuedLines, takeFromBatchHold } from '../repositories/batchLines';
import { applyTotals } from '../repositories/ledger';
import { insertLogs, type NewLog } from '../repositories/logs';
import type { TaskRow } from '../repositories/tasks';
import { settlementTotals } from './quota';
import { budgetOf, budgetTotals, tellTaskBudget } from './taskLedger';

type BatchTask = Pick<TaskRow, 'id' | 'user_id' | 'token_id' | 'limited' | 'request'>;

/** Who a batch's hold belongs to, as its task row says. */
const payerOf = (task: Pick<TaskRow, 'user_id' | 'token_id' | 'limited'>, amount: number) => ({
  userId: Number(task.user_id),
  tokenId: Number(task.token_id),
  limitedToken: Number(task.limited) === 1,
  amount,
});

/**
 * What a part of the batch's hold (`held`) settling for `charge` writes: the
 * payer's balances, the channel's counter, and the budgets' spends moved by
 * the charge less that part (they counted it as spent since the submission).
 */
function totalsOf(task: BatchTask, held: number, charge: number, channelId: number) {
  const totals = settlementTotals([{ reservation: payerOf(task, held), charge, channelId, countRequest: charge > 0 }]);
  const budget = charge !== held ? budgetOf(task) : undefined;
  if (!budget) return totals;
  const { userSpends, tokenSpends, memberSpends } = budgetTotals(payerOf(task, held), budget, charge - held);
  return { ...totals, userSpends, tokenSpends, memberSpends };
}

/** How one line ended: its answer's status and output line, what it costs (0 for a failure), its consume log. */
export interface LineOutcome {
  status: 'completed' | 'failed';
  statusCode: number;
  /** The line of the output (or error) file, as JSON. */
  result: string;
  charge: number;
  channelId: number;
  log?: NewLog;
}

/** A line the caller's lease `owner` ran. */
export interface LeasedLine {
  task_id: string;
  line: number;
  bound: number;
  owner: string;
}

/**
 * Settles one line run under `line.owner`'s lease: all of it in one
 * transaction, or nothing when the lease is no longer the caller's (another
 * node took the line over, or settled it); whether this call settled it.
 */
export async function settleBatchLine(db: Kysely<Database>, task: BatchTask, line: LeasedLine, outcome: LineOutcome): Promise<boolean> {
  const bound = Number(line.bound);
  const charge = Math.max(0, Math.min(bound, Math.round(outcome.charge)));
  const now = Math.floor(Date.now() / 1000);
  const settled = await db.transaction().execute(async (transaction) => {
    const fields = {
      status: outcome.status,
      charged_quota: charge,
      status_code: outcome.statusCode,
      result: outcome.result,
      updated_at: now,
    };
    if (!(await closeBatchLine(transaction, line, line.owner, fields))) return false;
    if (!(await takeFromBatchHold(transaction, task.id, bound, charge, now)))
      throw new Error(`batch ${task.id} holds less than its line ${line.line}'s bound`);
    if (charge > 0 && outcome.log) await insertLogs(transaction, [{ ...outcome.log, quota: charge }]);
    await applyTotals(transaction, totalsOf(task, bound, charge, outcome.channelId));
    return true;
  });
  if (settled) tellTaskBudget(task.id, charge - bound, false);
  return settled;
}

/** Drops a batch's lines still queued (cancelled or expired): their bounds go back; how many were dropped. */
export async function dropBatchLines(
  db: Kysely<Database>,
  task: BatchTask,
  status: 'cancelled' | 'expired',
  marker: string,
): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const result = await db.transaction().execute(async (transaction) => {
    const dropped = await dropQueuedLines(transaction, task.id, status, marker, now);
    if (dropped.lines === 0) return dropped;
    if (!(await takeFromBatchHold(transaction, task.id, dropped.bound, 0, now)))
      throw new Error(`batch ${task.id} holds less than its dropped lines' bounds`);
    await applyTotals(transaction, totalsOf(task, dropped.bound, 0, 0));
    return dropped;
  });
  if (result.lines > 0) tellTaskBudget(task.id, -result.bound, false);
  return result.lines;
}

/**
 * Closes a batch whose lines are all settled, under the finishing lease
 * `owner` holds: its final status and summary, and whatever it still holds
 * (`held`, read with the lease) back to its payer; whether this call closed it.
 */
export async function closeBatchTask(
  db: Kysely<Database>,
  task: BatchTask,
  owner: string,
  held: number,
  fields: { status: string; request: string; progress: number; completed_at: number | null },
): Promise<boolean> {
  const now = Math.floor(Date.now() / 1000);
  const closed = await db.transaction().execute(async (transaction) => {
    if (!(await closeBatch(transaction, task.id, owner, held, { ...fields, updated_at: now }))) return false;
    if (held > 0) await applyTotals(transaction, totalsOf(task, held, 0, 0));
    return true;
  });
  if (closed) tellTaskBudget(task.id, -held, true);
  return closed;
}
