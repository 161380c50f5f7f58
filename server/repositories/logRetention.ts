// The log retention's queries (billing/logRetention.ts): the ids of a batch
// of old logs, then a DELETE by id (MySQL takes no LIMIT in a subquery); and
// the counts the Settings panel shows. Error logs (type 5) have a retention
// of their own, so each query can take them alone, or every other type.
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { LogType } from '../../common/roles';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** Which logs: the error logs alone, every other type, or all of them (absent). */
export type LogSelection = 'errors' | 'others' | undefined;

function selected<O>(query: SelectQueryBuilder<Database, 'logs', O>, selection: LogSelection) {
  if (selection === 'errors') return query.where('type', '=', LogType.error);
  if (selection === 'others') return query.where('type', '<>', LogType.error);
  return query;
}

/** The ids of up to `limit` logs created before `cutoff` (unix seconds), oldest id first. */
export async function oldLogIds(db: Executor, cutoff: number, limit: number, selection?: LogSelection): Promise<number[]> {
  const query = selected(db.selectFrom('logs').select('id').where('created_at', '<', cutoff), selection);
  return (await query.orderBy('id').limit(limit).execute()).map((row) => Number(row.id));
}

/** Deletes the logs with these ids; resolves to how many went. */
export async function deleteLogsById(db: Executor, ids: readonly number[]): Promise<number> {
  const result = await db.deleteFrom('logs').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}

/** How many logs of the selection there are, or (with `cutoff`, unix seconds) how many were created before it. */
export async function countLogs(db: Executor, selection: LogSelection, cutoff?: number): Promise<number> {
  let query = selected(
    db.selectFrom('logs').select((eb) => eb.fn.countAll<number | string>().as('count')),
    selection,
  );
  if (cutoff !== undefined) query = query.where('created_at', '<', cutoff);
  return Number((await query.executeTakeFirst())?.count ?? 0);
}
