// The money of asynchronous tasks (videos, batches: batchLedger.ts): the most a
// task can cost is held when it is submitted, in the transaction that writes
// its row (so the hold is on record in the database, not in a node's memory,
// and outlives any restart); the result replaces it by the charge once, with
// exactly one consume log that names the task; a failure, a timeout or a
// deletion gives all of it back. The hold is counted in held_quota like a
// relayed request's, so the ledger's invariant (start + top-ups - logged
// charges - held = balance) holds with tasks in flight, and returnHeldQuota
// leaves it held at a SQLite start (repositories/ledger.ts). Settlement is
// guarded by the task's status: UPDATE ... WHERE status in flight and
// held_quota unchanged, in the settlement's own transaction, so a second poller
// or a retried settlement finds nothing to do.
//
// Budgets and a member's caps (budgets.ts): a task's hold counts as spent from
// its submission, written to the key's, the user's (an organisation's account
// too) and the member's spend in the submission's transaction, so it outlives
// restarts and every node reads it. Its settlement moves those spends by the
// charge less the hold, in the periods the hold was written to: a video
// submitted before midnight counts in the day it was asked for, and one
// refunded after its period is over leaves that period's spend as it was.
// The node that took the task moves its own budgets' memory likewise when the
// task settles in this process; another process that read the spend while the
// task was in flight counts a refunded hold as spent until it restarts or the
// period ends (budgets.ts only ever raises a spend from the rows). A batch
// moves them line by line (batchLedger.ts), by each line's charge less its bound.
// Not yet: no low-balance reminder follows a task's charge.
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../db/database';
import type { TasksTable } from '../db/schema/tasks';
import { applyTotals, returnToUser, takeFromToken, takeFromUser, type LedgerTotals } from '../repositories/ledger';
import { insertLogs, type NewLog } from '../repositories/logs';
import { closeTask, insertTask, type TaskRow } from '../repositories/tasks';
import { settlementTotals, type ReserveResult, type SettlementBudget } from './quota';

/** Who a task's hold is taken from. */
export interface TaskPayer {
  userId: number;
  tokenId: number;
  /** A limited key: its own remaining quota is held too. */
  limitedToken: boolean;
}

/** What a task's budgets are told when it settles in this process (budgets.ts spendTask's `amend`), by task id. */
const budgetMemories = new Map<string, (delta: number) => void>();
/** Tasks settled by another process never come back for theirs: the oldest go beyond this many. */
const MAX_BUDGET_MEMORIES = 10_000;

/** Has `amend(charge - hold)` called when the task settles in this process. */
export function rememberTaskBudget(taskId: string, amend: (delta: number) => void): void {
  budgetMemories.set(taskId, amend);
  if (budgetMemories.size > MAX_BUDGET_MEMORIES) budgetMemories.delete(budgetMemories.keys().next().value!);
}

/** Moves the budgets' memory of the node that took the task by `delta`; `last`: the task is closed, forget it. */
export function tellTaskBudget(taskId: string, delta: number, last: boolean): void {
  if (delta !== 0) budgetMemories.get(taskId)?.(delta);
  if (last) budgetMemories.delete(taskId);
}

/** The spends a task's budgets take `amount` onto (negative: off), in the periods its hold was written to. */
export function budgetTotals(payer: Pick<TaskPayer, 'userId' | 'tokenId'>, budget: SettlementBudget, amount: number): LedgerTotals {
  const { tokenStart, userStart, member } = budget;
  return {
    users: [],
    tokens: [],
    channels: [],
    userSpends: userStart === undefined ? [] : [[payer.userId, { start: userStart, charge: amount }]],
    tokenSpends: tokenStart === undefined ? [] : [[payer.tokenId, { start: tokenStart, charge: amount }]],
    memberSpends: member
      ? [
          {
            organizationId: member.organizationId,
            userId: member.userId,
            charge: amount,
            ...(member.start === undefined ? {} : { period: { start: member.start, charge: amount } }),
          },
        ]
      : [],
  };
}

/** The budgets a task's hold was written to (kept in its request's JSON), if any. */
export function budgetOf(task: Pick<TaskRow, 'request'>): SettlementBudget | undefined {
  try {
    return (JSON.parse(task.request) as { budget?: SettlementBudget }).budget;
  } catch {
    return undefined;
  }
}

/**
 * Writes the task's row and takes its hold (`row.held_quota`) off the user and,
 * for a limited key, the key, and onto the spend of the budgets it counts in
 * (`budget`, kept in the row's request): all of it in one transaction, or
 * nothing (the refusal says whose balance was short).
 */
export async function submitTask(
  db: Kysely<Database>,
  payer: TaskPayer,
  row: Insertable<TasksTable>,
  budget?: SettlementBudget,
  /** What else is written with the row, in its transaction (a batch's lines). */
  alsoWrite?: (transaction: Kysely<Database>) => Promise<void>,
): Promise<ReserveResult> {
  const amount = Number(row.held_quota ?? 0);
  const request = budget ? JSON.stringify({ ...(JSON.parse(row.request) as object), budget }) : row.request;
  return db.transaction().execute(async (transaction) => {
    if (amount > 0) {
      if (!(await takeFromUser(transaction, payer.userId, amount))) return { ok: false, reason: 'user' } as const;
      if (payer.limitedToken && !(await takeFromToken(transaction, payer.tokenId, amount))) {
        await returnToUser(transaction, payer.userId, amount);
        return { ok: false, reason: 'token' } as const;
      }
      if (budget) await applyTotals(transaction, budgetTotals(payer, budget, amount));
    }
    await insertTask(transaction, { ...row, request, limited: payer.limitedToken ? 1 : 0 });
    await alsoWrite?.(transaction);
    return { ok: true } as const;
  });
}

/** How a task ended: its final status, what it costs (0 for a failure), its consume log, what the vendor said. */
export interface TaskOutcome {
  status: 'completed' | 'failed' | 'expired' | 'deleted';
  charge: number;
  /** Settle only from these statuses (default: any in flight), e.g. a submission given up only while it is one. */
  from?: readonly string[];
  /** The consume log of a charge (absent when LogConsumeEnabled is off, or nothing is charged). */
  log?: NewLog;
  error?: { code: string; message: string };
  progress?: number;
  completedAt?: number;
  expiresAt?: number;
}

/**
 * Closes a task in flight: its hold goes back, its charge (never more than
 * the hold) is taken with its consume log, the user's, key's and channel's
 * counters and its budgets' spends move, all in one transaction and only if
 * the task was still in flight with that hold; whether this call settled it.
 */
export async function settleTask(db: Kysely<Database>, task: TaskRow, outcome: TaskOutcome): Promise<boolean> {
  const held = Number(task.held_quota);
  const charge = Math.max(0, Math.min(held, Math.round(outcome.charge)));
  const now = Math.floor(Date.now() / 1000);
  const settled = await db.transaction().execute(async (transaction) => {
    const closed = await closeTask(
      transaction,
      task.id,
      held,
      {
        status: outcome.status,
        charged_quota: charge,
        progress: outcome.progress ?? Number(task.progress),
        error: outcome.error ? JSON.stringify(outcome.error) : null,
        updated_at: now,
        completed_at: outcome.completedAt ?? (outcome.status === 'completed' ? now : null),
        expires_at: outcome.expiresAt ?? null,
      },
      outcome.from,
    );
    if (!closed) return false;
    const reservation = {
      userId: Number(task.user_id),
      tokenId: Number(task.token_id),
      limitedToken: Number(task.limited) === 1,
      amount: held,
    };
    if (charge > 0 && outcome.log) await insertLogs(transaction, [{ ...outcome.log, quota: charge }]);
    const totals = settlementTotals([{ reservation, charge, channelId: Number(task.channel_id), countRequest: charge > 0 }]);
    // the budgets counted the hold as spent since the submission: only the difference moves them
    const budget = charge !== held ? budgetOf(task) : undefined;
    const { userSpends, tokenSpends, memberSpends } = budget ? budgetTotals(reservation, budget, charge - held) : totals;
    await applyTotals(transaction, { ...totals, userSpends, tokenSpends, memberSpends });
    return true;
  });
  if (settled) tellTaskBudget(task.id, charge - held, true);
  return settled;
}
