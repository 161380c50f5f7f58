// The hold of an asynchronous task (a video, a batch, a message batch) when it
// is submitted: its whole bound (`row.held_quota`) checked against the key's,
// the user's and the member's budgets and caps, as a relayed call's is, then
// written with the task row (and a batch's lines) in one transaction
// (billing/taskLedger.ts). From there the hold counts as spent in those
// budgets until the task settles.
import type { Insertable, Kysely } from 'kysely';
import { insufficientQuota } from '../../billing/accounting';
import { rememberTaskBudget, submitTask } from '../../billing/taskLedger';
import type { Database } from '../../db/database';
import type { TasksTable } from '../../db/schema/tasks';
import type { RelayContext } from '../context';
import type { RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';

export type HeldTaskRow = Insertable<TasksTable> & { id: string; user_id: number; token_id: number; held_quota: number };

/** Holds and writes the task: undefined once it is written, else the refusal, with nothing held. */
export async function holdTask(
  ctx: RelayContext,
  caller: RelayCaller,
  row: HeldTaskRow,
  writeAlso?: (transaction: Kysely<Database>) => Promise<void>,
): Promise<RelayError | undefined> {
  const limitedToken = Number(caller.token.unlimited_quota) !== 1;
  const reservation = { userId: row.user_id, tokenId: row.token_id, limitedToken, amount: row.held_quota };
  const overBudget = ctx.budgets.hold(caller.token, caller.user, reservation, caller.member);
  if (overBudget) return overBudget;
  // the hold counts as spent from here (written with the task); `amend` takes it back off this node's memory
  const { budget, amend } = ctx.budgets.spendTask(reservation);
  const taken = await submitTask(ctx.db, reservation, row, budget, writeAlso).catch((error: unknown) => {
    amend(-row.held_quota);
    throw error;
  });
  if (!taken.ok) {
    amend(-row.held_quota);
    return insufficientQuota(ctx, reservation, taken.reason);
  }
  if (budget) rememberTaskBudget(row.id, amend);
  return undefined;
}
