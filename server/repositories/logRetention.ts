// The log retention's queries (billing/logRetention.ts): the ids of a batch
// of old logs, then a DELETE by id (MySQL takes no LIMIT in a subquery).
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** The ids of up to `limit` logs created before `cutoff` (unix seconds), oldest id first. */
export async function oldLogIds(db: Executor, cutoff: number, limit: number): Promise<number[]> {
  return (await db.selectFrom('logs').select('id').where('created_at', '<', cutoff).orderBy('id').limit(limit).execute()).map((row) =>
    Number(row.id),
  );
}

/** Deletes the logs with these ids; resolves to how many went. */
export async function deleteLogsById(db: Executor, ids: readonly number[]): Promise<number> {
  const result = await db.deleteFrom('logs').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
