// The queries only Anthropic's Message Batches need (routes/v1/messageBatches.ts);
// the rest of their rows move as any gateway-run batch's (batchLines.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

/** Deletes a user's ended Message Batch: its task kept as 'deleted' (its logs name it), its lines gone; whether it was deleted. */
export function deleteEndedMessageBatch(
  db: Kysely<Database>,
  key: { userId: number; id: string },
  ended: readonly string[],
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    const result = await transaction
      .updateTable('tasks')
      .set({ status: 'deleted', updated_at: now })
      .where('id', '=', key.id)
      .where('user_id', '=', key.userId)
      .where('kind', '=', 'message_batch')
      .where('status', 'in', ended)
      .where('held_quota', '=', 0)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await transaction.deleteFrom('batch_lines').where('task_id', '=', key.id).execute();
    return true;
  });
}
