// Runner passes by hand (the tests' runners have no timer: intervalMs 0) for
// the batch tests. Each pass first marks the nodes as serving nobody: a test's
// own interactive calls would otherwise hold the lines to the busy pace, one a
// fifth of a second (batches.test.ts tests that pace on its own).
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../server/db/database';
import { findTaskById, type TaskRow } from '../../server/repositories/tasks';
import { batchRunnerOf } from '../../server/routes/v1/batches';

export const CLOSED_BATCH = ['completed', 'failed', 'expired', 'cancelled'];

/** One pass on each node at once; with `idle`, until the lines it started have ended. */
export async function batchPass(nodes: FastifyInstance[], idle = true): Promise<void> {
  const runners = nodes.map((node) => batchRunnerOf(node)!);
  for (const runner of runners) runner.relay.lastInteractiveAt = 0;
  await Promise.all(runners.map((runner) => runner.runOnce()));
  if (idle) await Promise.all(runners.map((runner) => runner.idle()));
}

/** Passes until the batch closes (`check` after each), at most `passes`; its row then. */
export async function runBatchUntilClosed(
  db: Kysely<Database>,
  id: string,
  nodes: FastifyInstance[],
  { passes = 200, idle = true, check }: { passes?: number; idle?: boolean; check?: () => Promise<unknown> } = {},
): Promise<TaskRow> {
  for (let pass = 0; pass < passes; pass += 1) {
    await batchPass(nodes, idle);
    await check?.();
    const task = await findTaskById(db, id);
    if (task && CLOSED_BATCH.includes(task.status)) return task;
  }
  throw new Error(`batch ${id} never closed`);
}
