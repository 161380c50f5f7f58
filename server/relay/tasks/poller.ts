// Asks vendors how their asynchronous tasks are going, on every node: each
// pass takes the tasks due (next_poll_at passed, no live lease), leases each
// with a conditional UPDATE (so no two nodes poll one task at once, and a
// node killed mid-poll loses its lease when it runs out), asks the task's
// kind (videos.ts; batches later) what the vendor says, and records it: still
// running (the next poll's time), done (settled: billing/taskLedger.ts), or
// failed (refunded). A task the vendor never finishes is given up and
// refunded after TaskTimeoutMinutes; one whose submission never got the
// vendor's id (its node died in between) after SUBMIT_GRACE_MS.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database';
import type { OptionStore } from '../../services/optionStore';
import { settleTask, type TaskOutcome } from '../../billing/taskLedger';
import { dueTaskIds, leaseTask, recordProgress, releaseTaskLease, type TaskRow } from '../../repositories/tasks';
import type { TaskPollSettings } from '../../config';

/** How often a node looks for due tasks, how often one task is asked about, how long a poll's lease lasts. */
export type { TaskPollSettings };

export const DEFAULT_TASK_POLL_SETTINGS: TaskPollSettings = { intervalMs: 5000, pollEveryMs: 10_000, leaseMs: 60_000, batch: 20 };

export const taskPollSettings = (overrides: Partial<TaskPollSettings> = {}): TaskPollSettings => ({
  ...DEFAULT_TASK_POLL_SETTINGS,
  ...overrides,
});

/** A task still `submitting` this long after it was written lost its submission (its node died before the vendor's id came). */
export const SUBMIT_GRACE_MS = 15 * 60_000;

/** What the vendor says of a task. */
export type TaskVerdict =
  | { state: 'running'; status: 'queued' | 'in_progress'; progress: number }
  | ({ state: 'done' } & TaskOutcome)
  /** No answer, or one that says nothing (a network failure, a 5xx): asked again later. */
  | { state: 'unanswered' };

/** What a kind of task knows: how to ask its vendor about one. */
export interface TaskKind {
  kind: string;
  poll(task: TaskRow): Promise<TaskVerdict>;
}

export interface TaskPollerDeps {
  db: Kysely<Database>;
  options: Pick<OptionStore, 'number' | 'bool'>;
  nodeId: string;
  log: FastifyBaseLogger;
  kinds: readonly TaskKind[];
  settings?: Partial<TaskPollSettings>;
}

export class TaskPoller {
  readonly settings: TaskPollSettings;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private readonly kinds: Map<string, TaskKind>;

  constructor(private readonly deps: TaskPollerDeps) {
    this.settings = taskPollSettings(deps.settings);
    this.kinds = new Map(deps.kinds.map((kind) => [kind.kind, kind]));
  }

  start(): void {
    if (this.settings.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.runOnce().catch((error: unknown) => this.deps.log.warn({ err: error }, 'task poll failed'));
    }, this.settings.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass over the due tasks (one at a time per node); how many this node polled. */
  runOnce(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const { db, nodeId } = this.deps;
    let polled = 0;
    for (const id of await dueTaskIds(db, Date.now(), this.settings.batch)) {
      const now = Date.now();
      const task = await leaseTask(db, id, nodeId, now, now + this.settings.leaseMs);
      if (!task) continue;
      polled += 1;
      await this.pollOne(task).catch((error: unknown) => this.deps.log.warn({ err: error, task: id }, 'task poll failed'));
    }
    return polled;
  }

  /** Asks about one leased task and records what came of it. */
  private async pollOne(task: TaskRow): Promise<void> {
    const now = Date.now();
    const age = now - Number(task.created_at) * 1000;
    if (task.status === 'submitting' || !task.upstream_id) {
      // its status is the submission's to change: a poll only waits, or gives up one still submitting
      if (age < SUBMIT_GRACE_MS) return releaseTaskLease(this.deps.db, task.id, this.deps.nodeId, now + this.settings.pollEveryMs);
      const error = { code: 'submission_lost', message: 'the task was never handed to a vendor' };
      return this.close(task, { status: 'failed', charge: 0, error, from: ['submitting'] });
    }
    const timeoutMs = this.deps.options.number('TaskTimeoutMinutes') * 60_000;
    if (timeoutMs > 0 && age > timeoutMs)
      return this.close(task, { status: 'failed', charge: 0, error: { code: 'timeout', message: 'the vendor did not finish in time' } });
    const kind = this.kinds.get(task.kind);
    const verdict: TaskVerdict = kind ? await kind.poll(task).catch(() => ({ state: 'unanswered' }) as const) : { state: 'unanswered' };
    if (verdict.state === 'running') return this.later(task, verdict.status, verdict.progress);
    if (verdict.state === 'unanswered') return this.later(task, task.status, Number(task.progress));
    const { state: _state, log, ...outcome } = verdict;
    // the consume log, as the relay writes it: only with LogConsumeEnabled
    return this.close(task, this.deps.options.bool('LogConsumeEnabled') ? { ...outcome, log } : outcome);
  }

  private async later(task: TaskRow, status: string, progress: number): Promise<void> {
    const now = Date.now();
    await recordProgress(this.deps.db, task.id, this.deps.nodeId, {
      status,
      progress,
      next_poll_at: now + this.settings.pollEveryMs,
      updated_at: Math.floor(now / 1000),
    });
  }

  private async close(task: TaskRow, outcome: TaskOutcome): Promise<void> {
    const settled = await settleTask(this.deps.db, task, outcome);
    if (!settled) this.deps.log.info({ task: task.id }, 'task settled elsewhere already');
  }
}
