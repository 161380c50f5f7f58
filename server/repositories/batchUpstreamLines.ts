// The queries of a batch run at the vendor (relay/batches/upstreamRun.ts): its
// lines' keys a page at a time (the results are matched to them by
// custom_id), without their bodies.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

export interface BatchLineKey {
  line: number;
  custom_id: string;
  bound: number;
  status: string;
}

/** A page of a batch's lines in file order after `afterLine`: their keys, bounds and statuses. */
export async function batchLineKeys(db: Kysely<Database>, taskId: string, afterLine: number, limit: number): Promise<BatchLineKey[]> {
  const rows = await db
    .selectFrom('batch_lines')
    .select(['line', 'custom_id', 'bound', 'status'])
    .where('task_id', '=', taskId)
    .where('line', '>', afterLine)
    .orderBy('line')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ line: Number(row.line), custom_id: row.custom_id, bound: Number(row.bound), status: row.status }));
}
