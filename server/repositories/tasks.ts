// The queries of asynchronous tasks (migration 0029; billing/taskLedger.ts
// moves their money, relay/tasks/ polls them). Every change of a task in
// flight is a conditional UPDATE: a poll's lease only when nobody holds one,
// a settlement only from a status still in flight with its hold unchanged,
// so two nodes (or one restarted) never poll a task at once nor settle it twice.
import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database } from '../db/database';
import type { TasksTable } from '../db/schema/tasks';

type Executor = Kysely<Database>;
/** Columns a change sets, all of them given. */
type TaskFields<K extends keyof TasksTable> = Required<Pick<Updateable<TasksTable>, K>>;

export type TaskRow = Selectable<TasksTable>;

/** The statuses of a task the vendor still works on (or that never reached it). */
export const TASK_IN_FLIGHT = ['submitting', 'queued', 'in_progress'] as const;

export async function insertTask(db: Executor, row: Insertable<TasksTable>): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

/** One task of a user's, by its public id; another user's is never found. */
export function findTask(db: Executor, userId: number, kind: string, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).where('user_id', '=', userId).where('kind', '=', kind).executeTakeFirst();
}

export function findTaskById(db: Executor, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A page of a user's tasks of a kind (deleted ones left out), after the cursor's row. */
export function listTasks(
  db: Executor,
  page: { userId: number; kind: string; limit: number; order: 'asc' | 'desc'; afterSeq?: number },
): Promise<TaskRow[]> {
  let query = db
    .selectFrom('tasks')
    .selectAll()
    .where('user_id', '=', page.userId)
    .where('kind', '=', page.kind)
    .where('status', '!=', 'deleted');
  if (page.afterSeq !== undefined) query = query.where('seq', page.order === 'asc' ? '>' : '<', page.afterSeq);
  return query.orderBy('seq', page.order).limit(page.limit).execute();
}

/** What the vendor said when it took the task: its id, channel and key, and the status it reported. */
export async function recordSubmission(
  db: Executor,
  id: string,
  fields: TaskFields<'upstream_id' | 'channel_id' | 'key_id' | 'status' | 'progress' | 'next_poll_at' | 'updated_at'>,
): Promise<boolean> {
  const result = await db.updateTable('tasks').set(fields).where('id', '=', id).where('status', '=', 'submitting').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ids of tasks in flight whose next poll is due and that no live lease holds, oldest poll first. */
export async function dueTaskIds(db: Executor, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select('id')
    .where('status', 'in', TASK_IN_FLIGHT)
    .where('next_poll_at', '<=', now)
    .where('lease_until', '<', now)
    .orderBy('next_poll_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Takes the poll's lease of one task if nobody holds a live one: the task's row when this node got it. */
export async function leaseTask(db: Executor, id: string, owner: string, now: number, until: number): Promise<TaskRow | undefined> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({ lease_owner: owner, lease_until: until, polls: eb('polls', '+', 1) }))
    .where('id', '=', id)
    .where('status', 'in', TASK_IN_FLIGHT)
    .where('lease_until', '<', now)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return undefined;
  return findTaskById(db, id);
}

/** A poll that found the task still running: its progress, the next poll's time, the lease given up. */
export async function recordProgress(
  db: Executor,
  id: string,
  owner: string,
  fields: TaskFields<'status' | 'progress' | 'next_poll_at' | 'updated_at'>,
): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ ...fields, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', 'in', TASK_IN_FLIGHT)
    .execute();
}

/** A poll that learnt nothing of a task not yet handed over: only the next poll's time, the lease given up (its status is the submission's). */
export async function releaseTaskLease(db: Executor, id: string, owner: string, nextPollAt: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ next_poll_at: nextPollAt, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

/**
 * Closes a task in flight: its final status, what it charged, its hold gone.
 * Applied only while the task's status is one of `from` (in flight) and it
 * still holds `held`; whether this call closed it (a second settlement changes nothing).
 */
export async function closeTask(
  db: Executor,
  id: string,
  held: number,
  fields: TaskFields<'status' | 'charged_quota' | 'progress' | 'error' | 'updated_at' | 'completed_at' | 'expires_at'>,
  from: readonly string[] = TASK_IN_FLIGHT,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ ...fields, held_quota: 0, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('status', 'in', from)
    .where('held_quota', '=', held)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A settled task the user deleted: kept for its log's link, no longer listed. */
export async function markTaskDeleted(db: Executor, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ status: 'deleted', updated_at: now })
    .where('id', '=', id)
    .where('status', 'not in', [...TASK_IN_FLIGHT, 'deleted'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What tasks in flight hold of each user's (or limited key's) held_quota: returnAllHeldQuota leaves it held. */
export const taskHeldOf = (owner: 'users' | 'tokens') =>
  owner === 'users'
    ? sql<number>`(select coalesce(sum(tasks.held_quota), 0) from tasks where tasks.user_id = users.id)`
    : sql<number>`(select coalesce(sum(tasks.held_quota), 0) from tasks where tasks.token_id = tokens.id and tasks.limited = 1)`;

/** What the console's task list narrows by: the owner (a user's own list always names them), kind, status. */
export interface TaskListFilter {
  userId?: number;
  kind?: string;
  status?: string;
}

/** A page of tasks for the console, newest first, each with its owner's name (a deleted user's is null). */
export function consoleTaskPage(
  db: Executor,
  filter: TaskListFilter,
  window: { limit: number; offset: number },
): Promise<Array<TaskRow & { username: string | null }>> {
  let query = db.selectFrom('tasks').leftJoin('users', 'users.id', 'tasks.user_id').selectAll('tasks').select('users.username');
  if (filter.userId !== undefined) query = query.where('tasks.user_id', '=', filter.userId);
  if (filter.kind !== undefined) query = query.where('tasks.kind', '=', filter.kind);
  if (filter.status !== undefined) query = query.where('tasks.status', '=', filter.status);
  return query.orderBy('tasks.seq', 'desc').limit(window.limit).offset(window.offset).execute();
}
