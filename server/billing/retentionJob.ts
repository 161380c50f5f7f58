// The prune of every kind of stored rows past its retention (retentionKinds.ts):
// once an hour on its own, or when an operator presses "Prune now". Either way
// it runs under the one lease "log-retention" (services/jobRunner.ts), so one
// worker of one node prunes at a time, and it lets the lease go when it ends:
// a press of the button never waits for the next hourly tick. The schedule
// skips a tick when any node started a prune less than an hour ago (the
// prune_runs table says when), which keeps it to about one run an hour
// across the deployment.
//
// The job's progress record travels in the lease's detail, so a poll that
// lands on another node reads it too; when the job ends the detail keeps it
// as "the last prune". Each kind's run is written to prune_runs.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { PruneJob, PruneJobKind, PruneStart } from '../../common/retention';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import { latestPruneStart, recordPruneRun } from '../repositories/retention';
import type { RetentionKind, RetentionOptions } from './retentionKinds';

const LEASE = 'log-retention';
const DAY = 86_400;
/** How often the schedule prunes. */
const RUN_EVERY_MS = 60 * 60 * 1000;
/** A tick runs when the last prune started at least this long ago: an hour less a little for the ticks' drift. */
const DUE_AFTER_MS = RUN_EVERY_MS - 5 * 60 * 1000;

/** A claimed lease, as services/jobRunner.ts hands it out (billing does not import services). */
interface HeldJob {
  signal: AbortSignal;
  share(detail: string): void;
  release(options?: { until?: number; detail?: string }): Promise<void>;
}

/** The node's job leases (services/jobRunner.ts JobRunner): claim one, read who holds one and its detail. */
export interface RetentionLeases {
  claim(name: string, detail?: string): Promise<HeldJob | undefined>;
  read(name: string): Promise<{ expiresAt: number; detail: string | null } | undefined>;
}

/** What the prune works with: the database, the options, the job leases and a log. */
export interface RetentionDeps {
  db: Kysely<Database>;
  dialect: DatabaseConfig['dialect'];
  options: RetentionOptions;
  jobs: RetentionLeases;
  log: { info: (object: object, message: string) => void; error: (object: object, message: string) => void };
  /** The kinds to prune, in the panel's order (plugins/retention.ts). */
  kinds: readonly RetentionKind[];
}

interface RetentionState {
  /** The prune this process runs, from its claim to its end. */
  running?: { job: PruneJob; done: Promise<void> };
  /** Aborted when the app closes: the prune under way stops after its batch, no new one starts. */
  stop: AbortController;
}

// keyed by the node's job runner, one per app context, which the routes and the background jobs share
const states = new WeakMap<object, RetentionState>();

function stateOf(jobs: object): RetentionState {
  let state = states.get(jobs);
  if (!state) {
    state = { stop: new AbortController() };
    states.set(jobs, state);
  }
  return state;
}

const copyOf = (job: PruneJob): PruneJob => ({ ...job, kinds: job.kinds.map((kind) => ({ ...kind })) });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A kind's part of the prune: its cutoff and its line of the job record. */
interface Step {
  kind: RetentionKind;
  cutoff: number;
  line: PruneJobKind;
}

function parsedJob(detail: string | null | undefined): PruneJob | undefined {
  if (!detail) return undefined;
  try {
    const job = JSON.parse(detail) as PruneJob;
    return typeof job.id === 'string' && Array.isArray(job.kinds) ? job : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The prune running now (here, or on the node whose lease shares it), else
 * the last one any node ran; null before the first. A running record whose
 * lease ran out belongs to a node that died mid-prune: it reads as stopped.
 */
export async function currentPruneJob(jobs: RetentionDeps['jobs']): Promise<PruneJob | null> {
  const running = stateOf(jobs).running;
  if (running) return copyOf(running.job);
  const lease = await jobs.read(LEASE);
  const job = parsedJob(lease?.detail);
  if (!lease || !job) return null;
  return job.state === 'running' && lease.expiresAt < Date.now() ? { ...job, state: 'stopped' } : job;
}

/** Deletes each step's rows, keeping the record and the lease's copy of it current, and writes each kind's run. */
async function runSteps(deps: RetentionDeps, job: PruneJob, steps: Step[], held: HeldJob, signal: AbortSignal): Promise<void> {
  const share = () => held.share(JSON.stringify(job));
  for (const step of steps) {
    if (signal.aborted) break;
    const before = job.removed;
    const removed = await step.kind.prune(deps.db, step.cutoff, {
      signal,
      removed: (count) => {
        step.line.removed += count;
        job.removed += count;
        share();
      },
    });
    // what the prune says went is the figure, whether or not it reported each batch
    step.line.removed = removed;
    job.removed = before + removed;
    share();
    await recordPruneRun(deps.db, deps.dialect, {
      kind: step.kind.name,
      started_at: job.started_at,
      finished_at: nowSeconds(),
      removed,
      cutoff: step.cutoff,
      manual: job.manual ? 1 : 0,
    });
  }
}

/** Counts what each kind has past its retention, filling the job's lines and total. */
async function planSteps(deps: RetentionDeps, job: PruneJob, kinds: RetentionKind[]): Promise<Step[]> {
  const steps: Step[] = [];
  for (const kind of kinds) {
    const cutoff = job.started_at - kind.days(deps.options) * DAY;
    const line = { name: kind.name, total: await kind.countBefore(deps.db, cutoff), removed: 0 };
    job.kinds.push(line);
    job.total += line.total;
    steps.push({ kind, cutoff, line });
  }
  return steps;
}

/** Runs the claimed job to its end, whatever happens, and lets the lease go with the finished record. */
async function finishJob(deps: RetentionDeps, job: PruneJob, steps: Step[], held: HeldJob): Promise<void> {
  const signal = AbortSignal.any([stateOf(deps.jobs).stop.signal, held.signal]);
  try {
    await runSteps(deps, job, steps, held, signal);
    job.state = signal.aborted ? 'stopped' : 'done';
    if (job.removed > 0) deps.log.info({ removed: job.removed, kinds: job.kinds }, 'deleted rows past their retention');
  } catch (error) {
    job.state = 'failed';
    deps.log.error({ err: error }, 'pruning rows past their retention failed');
  } finally {
    job.finished_at = nowSeconds();
    await held.release({ detail: JSON.stringify(job) });
  }
}

/** Claims the lease and counts the rows to remove; undefined when another worker holds it. */
async function claimAndPlan(
  deps: RetentionDeps,
  job: PruneJob,
  kinds: RetentionKind[],
): Promise<{ held: HeldJob; steps: Step[] } | undefined> {
  const held = await deps.jobs.claim(LEASE, JSON.stringify(job));
  if (!held) return undefined;
  try {
    const steps = await planSteps(deps, job, kinds);
    held.share(JSON.stringify(job));
    return { held, steps };
  } catch (error) {
    await held.release();
    throw error;
  }
}

/**
 * Starts a prune of every kind that has a retention: answered once it has
 * counted the rows to remove (so its first answer reads "0 of N"), the
 * deleting going on in the background. When one runs here or on another
 * node, answers that one (`started` false). Undefined when no kind has a
 * retention, or the app is closing.
 */
export async function startPrune(deps: RetentionDeps, manual: boolean): Promise<PruneStart | undefined> {
  const state = stateOf(deps.jobs);
  if (state.running) return { started: false, job: copyOf(state.running.job) };
  const kinds = deps.kinds.filter((kind) => kind.days(deps.options) > 0);
  if (kinds.length === 0 || state.stop.signal.aborted) return undefined;
  const job: PruneJob = {
    id: randomUUID(),
    state: 'running',
    manual,
    started_at: nowSeconds(),
    finished_at: 0,
    total: 0,
    removed: 0,
    kinds: [],
  };
  let settle = () => {};
  // seen here while the lease is claimed, so a second press meanwhile is told this run
  state.running = { job, done: new Promise<void>((resolve) => (settle = resolve)) };
  const forget = () => {
    state.running = undefined;
    settle();
  };
  let claimed: Awaited<ReturnType<typeof claimAndPlan>>;
  try {
    claimed = await claimAndPlan(deps, job, kinds);
  } catch (error) {
    forget();
    throw error;
  }
  if (!claimed) {
    forget();
    return { started: false, job: (await currentPruneJob(deps.jobs)) ?? job };
  }
  void finishJob(deps, job, claimed.steps, claimed.held).finally(forget);
  return { started: true, job: copyOf(job) };
}

/** Resolves once the prune this process runs (if any) has ended. */
export async function pruneSettled(jobs: RetentionDeps['jobs']): Promise<void> {
  await stateOf(jobs).running?.done;
}

/** The hourly prune: started when the app is ready, stopped (after the batch under way) before it closes. */
export interface RetentionSchedule {
  start(): void;
  stop(): Promise<void>;
}

export function retentionSchedule(deps: RetentionDeps): RetentionSchedule {
  let first: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (stateOf(deps.jobs).running) return;
    if (Date.now() - (await latestPruneStart(deps.db)) * 1000 < DUE_AFTER_MS) return;
    if ((await startPrune(deps, false))?.started) await pruneSettled(deps.jobs);
  };
  const run = () => void tick().catch((error: unknown) => deps.log.error({ err: error }, 'log retention failed'));
  return {
    start() {
      first = setTimeout(() => {
        run();
        timer = setInterval(run, RUN_EVERY_MS);
        timer.unref(); // never keeps the process alive on its own
      }, 60_000);
      first.unref();
    },
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      stateOf(deps.jobs).stop.abort();
      await pruneSettled(deps.jobs);
    },
  };
}
