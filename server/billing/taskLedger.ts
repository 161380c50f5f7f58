// The money of asynchronous tasks (a video now, a batch later): the most a
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
// Not yet: budgets and organisation member caps do not count a task's charge,
// and no low-balance reminder follows it.
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../db/database';
import type { TasksTable } from '../db/schema/tasks';
import { applyTotals, returnToUser, takeFromToken, takeFromUser } from '../repositories/ledger';
import { insertLogs, type NewLog } from '../repositories/logs';
import { closeTask, insertTask, type TaskRow } from '../repositories/tasks';
import { settlementTotals, type ReserveResult } from './quota';

/** Who a task's hold is taken from. */
export interface TaskPayer {
  userId: number;
  tokenId: number;
  /** A limited key: its own remaining quota is held too. */
  limitedToken: boolean;
}

/**
 * Writes the task's row and takes its hold (`row.held_quota`) off the user and,
 * for a limited key, the key: all of it in one transaction, or nothing (the
 * refusal says whose balance was short).
 */
export async function submitTask(db: Kysely<Database>, payer: TaskPayer, row: Insertable<TasksTable>): Promise<ReserveResult> {
  const amount = Number(row.held_quota ?? 0);
  return db.transaction().execute(async (transaction) => {
    if (amount > 0) {
      if (!(await takeFromUser(transaction, payer.userId, amount))) return { ok: false, reason: 'user' } as const;
      if (payer.limitedToken && !(await takeFromToken(transaction, payer.tokenId, amount))) {
        await returnToUser(transaction, payer.userId, amount);
        return { ok: false, reason: 'token' } as const;
      }
    }
    await insertTask(transaction, { ...row, limited: payer.limitedToken ? 1 : 0 });
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
 * counters move, all in one transaction and only if the task was still in
 * flight with that hold; whether this call settled it.
 */
export async function settleTask(db: Kysely<Database>, task: TaskRow, outcome: TaskOutcome): Promise<boolean> {
  const held = Number(task.held_quota);
  const charge = Math.max(0, Math.min(held, Math.round(outcome.charge)));
  const now = Math.floor(Date.now() / 1000);
  return db.transaction().execute(async (transaction) => {
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
    await applyTotals(
      transaction,
      settlementTotals([{ reservation, charge, channelId: Number(task.channel_id), countRequest: charge > 0 }]),
    );
    return true;
  });
}
