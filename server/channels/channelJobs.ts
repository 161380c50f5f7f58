// How the channels' background jobs run (the jobs themselves are in
// channelHealth.ts): each on one worker of one node at a time, the "already
// running" guard of this process first, then the job's lease
// (services/jobRunner.ts). A test-all or balance-all run keeps a progress
// record the console polls, and shares it through its lease, so the poll is
// answered by whichever worker it lands on.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { ChannelJob } from '../../common/listQuery';
import type { ChannelRow } from '../repositories/channels';
import { nextTickDue, type HeldJob, type JobRunner } from '../services/jobRunner';

/** What running a job needs: the node's job leases, and a log for a run that failed. */
export interface JobDeps {
  jobs: JobRunner;
  log: FastifyBaseLogger;
}

export type JobName = 'test-all' | 'balance-all' | 'health';

/** The jobs an admin starts and follows in the console. */
type FollowedJobName = 'test-all' | 'balance-all';

interface JobState {
  running: Set<JobName>;
  /** The console's view of the test-all and balance-all runs: the latest few, newest last. */
  progress: Map<string, ChannelJob>;
  inFlight: Set<Promise<unknown>>;
  /** Aborted when the app closes, so no job outlives the database. */
  stop: AbortController;
}

// keyed by the node's job runner, one per app context, which the root app and its encapsulated route plugins share
const jobStates = new WeakMap<JobRunner, JobState>();

function jobStateOf(jobs: JobRunner): JobState {
  let state = jobStates.get(jobs);
  if (!state) {
    state = { running: new Set(), progress: new Map(), inFlight: new Set(), stop: new AbortController() };
    jobStates.set(jobs, state);
  }
  return state;
}

/** The lease each job runs under (job_leases.name). */
const LEASE_NAMES: Record<JobName, string> = {
  'test-all': 'channel-test-all',
  'balance-all': 'channel-balance-all',
  health: 'channel-health',
};

/**
 * Runs `work` unless a job of that name is already running here or, under its
 * lease, on another worker: undefined when it runs here, a JobElsewhere
 * rejection when elsewhere. `periodMs` marks a periodic tick (the lease is
 * kept until the next one is due); `detail` is published with the claim.
 */
export function runJob<T>(
  { jobs }: Pick<JobDeps, 'jobs'>,
  name: JobName,
  work: (signal: AbortSignal, held: HeldJob) => Promise<T>,
  options: { periodMs?: number; detail?: string } = {},
): Promise<T> | undefined {
  const state = jobStateOf(jobs);
  if (state.running.has(name) || state.stop.signal.aborted) return undefined;
  state.running.add(name);
  const job = (async () => {
    const tick = Date.now();
    const held = await jobs.claim(LEASE_NAMES[name], options.detail);
    if (!held) throw new JobElsewhere();
    try {
      return await work(AbortSignal.any([state.stop.signal, held.signal]), held);
    } finally {
      await held.release(options.periodMs ? { until: nextTickDue(tick, options.periodMs) } : {});
    }
  })().finally(() => state.running.delete(name)); // whatever happened, the next run may start
  state.inFlight.add(job);
  job.then(
    () => state.inFlight.delete(job),
    () => state.inFlight.delete(job),
  );
  return job;
}

/** Thrown when another worker holds the job's lease. */
export class JobElsewhere extends Error {
  constructor() {
    super('running on another worker');
  }
}

/** Finished jobs kept for the console to read back (per process). */
const KEPT_JOBS = 20;

/** What startJob answers: the job (the one already running, when `started` is false). */
export interface StartedJob {
  started: boolean;
  job: ChannelJob;
}

/** The run another worker shares through the lease of `name`, if it shared one. */
async function sharedJobOf(jobs: JobRunner, name: FollowedJobName): Promise<ChannelJob | undefined> {
  const lease = await jobs.read(LEASE_NAMES[name]);
  if (!lease?.detail) return undefined;
  try {
    return JSON.parse(lease.detail) as ChannelJob;
  } catch {
    return undefined;
  }
}

/**
 * A job's progress as the console reads it (`GET /api/channel/jobs/:id`):
 * kept here when this worker runs it, else the latest run of each kind as its
 * worker shares it; undefined when unknown.
 */
export async function channelJobOf({ jobs }: Pick<JobDeps, 'jobs'>, id: string): Promise<ChannelJob | undefined> {
  const job = jobStateOf(jobs).progress.get(id);
  if (job) return { ...job, failures: [...job.failures] };
  for (const name of ['test-all', 'balance-all'] as const) {
    const shared = await sharedJobOf(jobs, name);
    if (shared?.id === id) return shared;
  }
  return undefined;
}

/** Reports a job's progress as it visits channels. */
export interface JobProgress {
  begin(total: number): void;
  visited(channel: ChannelRow, failure?: string): void;
}

/** A new run's progress record, nothing visited yet. */
function newJobRecord(kind: ChannelJob['kind']): ChannelJob {
  return {
    id: randomUUID(),
    kind,
    state: 'running',
    done: 0,
    total: 0,
    failures: [],
    started_at: Math.floor(Date.now() / 1000),
    finished_at: 0,
  };
}

/** Forgets the oldest finished runs beyond KEPT_JOBS. */
function forgetOldJobs(state: JobState): void {
  for (const id of state.progress.keys()) {
    if (state.progress.size <= KEPT_JOBS) break;
    state.progress.delete(id);
  }
}

type StartOutcome = 'started' | 'elsewhere' | Error;

/**
 * Starts a job in the background with a progress record the console can
 * poll. When one of that name is running here or on another worker, answers
 * that one instead. A started job is answered once it has counted its
 * channels, so its first answer already reads "0 of N", never "0 of 0".
 */
export async function startJob(
  deps: JobDeps,
  name: FollowedJobName,
  work: (signal: AbortSignal, progress: JobProgress) => Promise<unknown>,
): Promise<StartedJob | undefined> {
  const state = jobStateOf(deps.jobs);
  const kind = name === 'test-all' ? 'test' : 'balance';
  const running = [...state.progress.values()].find((job) => job.kind === kind && job.state === 'running');
  const record = newJobRecord(kind);
  const finish = () => {
    if (record.state === 'done') return;
    record.state = 'done';
    record.finished_at = Math.floor(Date.now() / 1000);
  };
  let shareProgress = () => {};
  const progress: JobProgress = {
    begin: (total) => {
      record.total = total;
      shareProgress();
      settleStart('started');
    },
    visited: (channel, failure) => {
      record.done += 1;
      if (failure !== undefined) record.failures.push({ channel_id: Number(channel.id), name: channel.name, message: failure });
      shareProgress();
    },
  };
  let settleStart: (outcome: StartOutcome) => void = () => {};
  const start = new Promise<StartOutcome>((resolve) => (settleStart = resolve));
  const job = runJob(
    deps,
    name,
    async (signal, held) => {
      shareProgress = () => held.share(JSON.stringify(record));
      try {
        const result = await work(signal, progress);
        // a run that ended before it counted anything (stopped) is still one that started
        settleStart('started');
        return result;
      } finally {
        finish();
        shareProgress(); // the lease is let go with the finished record
      }
    },
    { detail: JSON.stringify(record) },
  );
  if (!job) return running ? { started: false, job: { ...running, failures: [...running.failures] } } : undefined;
  // seen here while the lease is claimed, so a second click meanwhile is told this run
  state.progress.set(record.id, record);
  job.then(finish, (error: unknown) => {
    if (error instanceof JobElsewhere) return settleStart('elsewhere');
    finish();
    // before the start (the lease could not be claimed: the database) the caller hears it; after, the log does
    settleStart(error instanceof Error ? error : new Error(String(error)));
    deps.log.error({ err: error, job: name }, 'channel job failed');
  });
  const outcome = await start;
  if (outcome !== 'started') {
    state.progress.delete(record.id);
    if (outcome instanceof Error) throw outcome;
    const elsewhere = await sharedJobOf(deps.jobs, name);
    return { started: false, job: elsewhere ?? { ...record, id: '' } };
  }
  forgetOldJobs(state);
  return { started: true, job: { ...record, failures: [...record.failures] } };
}

/** Resolves once every channel job running now has finished (shutdown; tests). */
export async function channelJobsSettled({ jobs }: Pick<JobDeps, 'jobs'>): Promise<void> {
  await Promise.allSettled([...jobStateOf(jobs).inFlight]);
}

/** Stops every running channel job, and starts no new one, resolving once they have ended (the app is closing). */
export async function stopChannelJobs(deps: Pick<JobDeps, 'jobs'>): Promise<void> {
  jobStateOf(deps.jobs).stop.abort();
  await channelJobsSettled(deps);
}
