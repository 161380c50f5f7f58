// A batch run at the vendor's own Batch API (OpenAI, Azure OpenAI, Gemini), advanced
// by the runner's finishing pass on whichever node takes the batch's lease
// (selfRun.ts, the same lease finish.ts moves a gateway-run batch under).
// Under it: the lines, mapped for the channel the batch chose when it was
// created, are uploaded and the vendor's batch created once, its ids kept in
// the task's summary in the UPDATE that makes it in_progress, so a restart or
// another node polls it and never submits again; then it is polled, spaced
// out more and more (and after each failed poll); a cancel is passed on once;
// once the vendor's batch ends, its output and error files settle the lines
// (upstreamSettle.ts), those without a result give their bounds back, and
// finish.ts writes the gateway's files and closes the batch. A batch that
// cannot be submitted (its channel gone, its key disabled, a refusal) fails,
// and its whole hold goes back.
// Not yet: a crash between the vendor's create and the UPDATE keeping its id
// submits again (the first batch then runs unbilled at the vendor).
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { batchResults, leaseBatch, moveBatch, releaseBatch } from '../../repositories/batchLines';
import { findChannel, type ChannelRow } from '../../repositories/channels';
import { findTaskById, type TaskRow } from '../../repositories/tasks';
import { channelConfigOf, mappedModel } from '../attempt';
import type { RelayContext } from '../context';
import { isRelayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';
import { batchSummaryOf, type BatchSummary, type UpstreamProgress } from './batchObject';
import { moveOn, type FinishDeps } from './finish';
import { priceLine } from './lineCall';
import {
  upstreamBatchClient,
  UpstreamBatchError,
  type UpstreamBatchClient,
  type UpstreamBatchLine,
  type UpstreamBatchState,
} from './upstream';
import { settleUpstreamLines } from './upstreamSettle';

export interface UpstreamRunDeps extends FinishDeps {
  ctx: RelayContext;
  log: FastifyBaseLogger;
  /** The runner's tick (ms): polls are spaced from it; 0 (tests passing by hand) polls on every pass. */
  intervalMs: number;
  /** The caller a batch's lines run as, as it is now. */
  callerOf: (task: TaskRow) => Promise<RelayCaller | RelayError>;
  fetch?: typeof fetch;
}

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'expired', 'cancelled']);
const PAGE = 500;
const MAX_DELAY_MS = 5 * 60_000;

/** What a line the vendor returned nothing for says, by how the vendor's batch ended. */
const LEFTOVER: Record<string, { code: string; message: string }> = {
  completed: { code: 'batch_failed', message: 'The vendor returned no result for this request.' },
  failed: { code: 'batch_failed', message: "The vendor's batch failed." },
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
  cancelled: { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' },
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The wait before the next poll after `n` polls (or failed polls in a row). */
function pollDelay(deps: UpstreamRunDeps, n: number): number {
  if (deps.intervalMs <= 0) return 0;
  return Math.min(MAX_DELAY_MS, Math.max(5000, deps.intervalMs * 10) * 2 ** Math.min(n, 6));
}

/** Keeps the summary, the batch's status as it is; whether the batch still had that status. */
async function save(deps: UpstreamRunDeps, task: TaskRow, summary: BatchSummary): Promise<boolean> {
  return moveBatch(deps.db, task.id, [task.status], task.status, JSON.stringify(summary), nowSeconds());
}

/** Takes the batch's lease and moves it on: at the vendor for an upstream batch, else as finish.ts does; whether it closed. */
export async function advanceBatch(deps: UpstreamRunDeps, id: string): Promise<boolean> {
  const owner = randomBytes(12).toString('hex');
  if (!(await leaseBatch(deps.db, id, owner, Date.now(), Date.now() + deps.leaseMs))) return false;
  try {
    const task = await findTaskById(deps.db, id);
    if (!task) return false;
    return batchSummaryOf(task).mode === 'upstream' ? await advanceUpstream(deps, task, owner) : await moveOn(deps, task, owner);
  } finally {
    await releaseBatch(deps.db, id, owner);
  }
}

async function advanceUpstream(deps: UpstreamRunDeps, task: TaskRow, owner: string): Promise<boolean> {
  const summary = batchSummaryOf(task);
  const progress: UpstreamProgress = summary.upstream ?? { polls: 0, failures: 0, nextPollAt: 0 };
  if (progress.error !== undefined && !progress.batchId) return endUnsubmitted(deps, task, summary, owner);
  if (Date.now() < progress.nextPollAt) return false;
  if (progress.batchId) return pollUpstream(deps, task, summary, progress, owner);
  if (task.status === 'cancelling') return endUnsubmitted(deps, task, summary, owner);
  return submit(deps, task, summary, progress, owner);
}

/** The batch's channel, as it is now. */
async function channelOf(deps: UpstreamRunDeps, summary: BatchSummary): Promise<ChannelRow | undefined> {
  return summary.channelId === undefined ? undefined : findChannel(deps.db, summary.channelId);
}

function clientOf(deps: UpstreamRunDeps, channel: ChannelRow): UpstreamBatchClient | undefined {
  const config = channelConfigOf({
    type: Number(channel.type),
    key: channel.key,
    base_url: channel.base_url ?? '',
    other: channel.other ?? '',
  });
  return upstreamBatchClient(config, channel.key, { fetch: deps.fetch });
}

/** The batch's lines as the vendor reads them: the model after the channel's mapping. */
async function* inputLines(deps: UpstreamRunDeps, task: TaskRow, summary: BatchSummary, channel: ChannelRow) {
  let after = -1;
  for (;;) {
    const rows = await batchResults(deps.db, task.id, after, PAGE);
    if (rows.length === 0) return;
    after = Number(rows.at(-1)!.line);
    for (const row of rows) {
      const body = JSON.parse(row.body) as Record<string, unknown>;
      const model = mappedModel(channel, String(body.model));
      const line: UpstreamBatchLine = { customId: row.custom_id, url: summary.endpoint, body: { ...body, model } };
      yield line;
    }
  }
}

/** The price of the batch's lines for its caller now (every line names the same model), or why it cannot run. */
async function pricingOf(deps: UpstreamRunDeps, task: TaskRow, summary: BatchSummary): Promise<UpstreamProgress['pricing'] | string> {
  const caller = await deps.callerOf(task);
  if (isRelayError(caller)) return caller.message;
  const first = (await batchResults(deps.db, task.id, -1, 1))[0];
  if (!first) return 'the batch has no lines';
  const priced = priceLine(deps.ctx, caller, summary.endpoint, JSON.parse(first.body) as Record<string, unknown>);
  if (isRelayError(priced)) return priced.message;
  const { admission, state } = priced.call;
  return {
    ratio: admission.ratio,
    modelRatio: admission.modelRatio,
    groupRatio: admission.groupRatio,
    completionRatio: (state as { completionRatio: number }).completionRatio,
    ...(admission.cachedPromptRatio !== undefined ? { cachedPromptRatio: admission.cachedPromptRatio } : {}),
    ...(admission.cacheCreationRatio !== undefined ? { cacheCreationRatio: admission.cacheCreationRatio } : {}),
  };
}

/** Uploads the lines and creates the vendor's batch, once; its ids kept as the batch goes in_progress. */
async function submit(
  deps: UpstreamRunDeps,
  task: TaskRow,
  summary: BatchSummary,
  progress: UpstreamProgress,
  lease: string,
): Promise<boolean> {
  const channel = await channelOf(deps, summary);
  const client = channel ? clientOf(deps, channel) : undefined;
  if (!channel || !client) return fail(deps, task, summary, progress, "the batch's channel is gone or no longer runs batches", lease);
  const pricing = await pricingOf(deps, task, summary);
  if (typeof pricing === 'string') return fail(deps, task, summary, progress, pricing, lease);
  let ids: { batchId: string; inputFileId: string };
  try {
    ids = await client.submit(inputLines(deps, task, summary, channel), summary.endpoint);
  } catch (error) {
    if (error instanceof UpstreamBatchError && error.retryable) return backOff(deps, task, summary, progress, error);
    return fail(deps, task, summary, progress, (error as Error).message, lease);
  }
  const now = nowSeconds();
  const upstream: UpstreamProgress = { ...progress, ...ids, pricing, polls: 0, failures: 0, nextPollAt: Date.now() + pollDelay(deps, 0) };
  const next = { ...summary, in_progress_at: now, upstream };
  if (await moveBatch(deps.db, task.id, [task.status], 'in_progress', JSON.stringify(next), now)) return false;
  // cancelled while it was being submitted: the vendor's batch is kept with the cancelling one, and cancelled next pass
  const current = await findTaskById(deps.db, task.id);
  if (current?.status === 'cancelling')
    await moveBatch(deps.db, task.id, ['cancelling'], 'cancelling', JSON.stringify({ ...batchSummaryOf(current), upstream }), now);
  return false;
}

/** A call to the vendor that may succeed later: the next one waits longer. */
async function backOff(deps: UpstreamRunDeps, task: TaskRow, summary: BatchSummary, progress: UpstreamProgress, error: Error) {
  deps.log.warn({ err: error, batch: task.id }, 'upstream batch call failed; trying again later');
  const failures = progress.failures + 1;
  await save(deps, task, { ...summary, upstream: { ...progress, failures, nextPollAt: Date.now() + pollDelay(deps, failures) } });
  return false;
}

/** A batch that never reached the vendor (or lost it): it fails, and every line gives its bound back. */
async function fail(
  deps: UpstreamRunDeps,
  task: TaskRow,
  summary: BatchSummary,
  progress: UpstreamProgress,
  message: string,
  lease: string,
) {
  deps.log.warn({ batch: task.id, reason: message }, 'upstream batch failed');
  const next: BatchSummary = { ...summary, failed_at: nowSeconds(), upstream: { ...progress, error: message } };
  if (!(await save(deps, task, next))) return false;
  return endUnsubmitted(deps, { ...task, request: JSON.stringify(next) }, next, lease);
}

/** Settles every line of a batch the vendor never ran (failed, or cancelled before it was submitted) and closes it. */
async function endUnsubmitted(deps: UpstreamRunDeps, task: TaskRow, summary: BatchSummary, lease: string): Promise<boolean> {
  const leftover = task.status === 'cancelling' ? LEFTOVER.cancelled : { code: 'batch_failed', message: summary.upstream?.error ?? '' };
  await settleUpstreamLines(settleDeps(deps), task, summary, undefined, leftover);
  return moveOn(deps, task, lease);
}

const settleDeps = (deps: UpstreamRunDeps) => ({ db: deps.db, logConsume: deps.ctx.options.bool('LogConsumeEnabled') });

/** Passes a cancel on once, polls, and when the vendor's batch ended settles the lines from its files and closes the batch. */
async function pollUpstream(deps: UpstreamRunDeps, task: TaskRow, summary: BatchSummary, progress: UpstreamProgress, lease: string) {
  const channel = await channelOf(deps, summary);
  const client = channel ? clientOf(deps, channel) : undefined;
  if (!client) return fail(deps, task, summary, { ...progress, batchId: undefined }, "the batch's channel is gone", lease);
  const batchId = progress.batchId!;
  let state: UpstreamBatchState;
  try {
    if (task.status === 'cancelling' && !progress.cancelSent) {
      await client.cancel(batchId).catch((error: unknown) => {
        // a batch that ended already cannot be cancelled: its results settle it
        if (!(error instanceof UpstreamBatchError) || error.retryable) throw error;
      });
      progress = { ...progress, cancelSent: true };
    }
    state = await client.poll(batchId);
    if (!TERMINAL.has(state.status)) {
      const polls = progress.polls + 1;
      await save(deps, task, {
        ...summary,
        upstream: { ...progress, polls, failures: 0, nextPollAt: Date.now() + pollDelay(deps, polls) },
      });
      return false;
    }
    return await endUpstream(deps, task, summary, progress, state, client, lease);
  } catch (error) {
    if (error instanceof UpstreamBatchError && !error.retryable && error.status === 404)
      return fail(deps, task, summary, { ...progress, batchId: undefined }, `the vendor lost the batch: ${error.message}`, lease);
    return backOff(deps, task, summary, progress, error as Error);
  }
}

async function endUpstream(
  deps: UpstreamRunDeps,
  task: TaskRow,
  summary: BatchSummary,
  progress: UpstreamProgress,
  state: UpstreamBatchState,
  client: UpstreamBatchClient,
  lease: string,
): Promise<boolean> {
  const now = nowSeconds();
  const next: BatchSummary = {
    ...summary,
    upstream: { ...progress, outputFileId: state.outputFileId, errorFileId: state.errorFileId },
    ...(state.status === 'failed' ? { failed_at: now } : {}),
    ...(state.status === 'expired' ? { expired_at: now } : {}),
  };
  if (!(await save(deps, task, next))) return false;
  const current = { ...task, request: JSON.stringify(next) };
  await settleUpstreamLines(settleDeps(deps), current, next, client.results(state), LEFTOVER[state.status]);
  const closed = await moveOn(deps, current, lease);
  if (closed)
    await client
      .remove({ ...state, inputFileId: progress.inputFileId })
      .catch((error: unknown) => deps.log.warn({ err: error, batch: task.id }, "the vendor's batch files could not be deleted"));
  return closed;
}
