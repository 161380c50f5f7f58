// Runs the batches the gateway runs itself, on every node, at a low priority.
// Each pass takes lines any node may run (queued, or running under a lease
// that ran out: its node died) up to the node's BatchConcurrency, leasing
// each with a conditional UPDATE, and runs them through the relay's own steps
// (lineCall.ts). A node whose interactive requests in flight reach
// BatchPauseInFlight starts no line until they fall back: batch lines never
// take a place a client's request is waiting for, and they are not counted
// in a key's concurrency or rate limits. A node that served an interactive
// request in the last second runs one line at a time, BatchBusyLinesPerSecond
// at most: a line's database work runs on the event loop the other users'
// calls wait for, so a full-speed batch would slow every one of them down.
// A line settles in the transaction that closes it under its lease
// (billing/batchLedger.ts), at the batch discount (BatchDiscount, or the
// channel's own in BatchChannelDiscounts),
// with one consume log naming the batch and the line's custom_id: run twice
// by two nodes (a lease that ran out under a slow node), it is billed once.
// A line cut by the node's shutdown goes back to the queue unbilled. The
// same pass finishes the batches whose lines are all done (finish.ts).
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { LogType } from '../../../common/roles';
import type { LogDetails } from '../../../common/records';
import type { Database } from '../../db/database';
import { settleBatchLine, type LineOutcome } from '../../billing/batchLedger';
import { dueBatchLines, leaseBatchLine, openBatchIds, requeueBatchLine, type BatchLineRow } from '../../repositories/batchLines';
import { tokenAndOwnerByKey } from '../../repositories/relayAuth';
import { findOwnToken } from '../../repositories/tokens';
import { findTaskById, type TaskRow } from '../../repositories/tasks';
import type { NewLog } from '../../repositories/logs';
import type { FileStore } from '../../services/fileStore';
import type { OptionStore } from '../../services/optionStore';
import { TokenStatus, UserStatus } from '../../../common/roles';
import type { RelayContext } from '../context';
import { isRelayError, relayError, type RelayError } from '../errors';
import type { RelayCaller } from '../tokenAuth';
import type { BatchRunSettings } from '../../config';
import { batchSummaryOf, type BatchSummary } from './batchObject';
import { advanceBatch, type UpstreamRunDeps } from './upstreamRun';
import { priceLine, runPricedLine, type LineAnswer } from './lineCall';

/** How often a node looks for lines, how long a line's lease lasts, how long a batch's finishing lease lasts. */
export type { BatchRunSettings };

/** How long a node keeps a batch's row and caller before reading them again. */
const CALLER_TTL_MS = 2000;
/** How recent an interactive request keeps batch lines at the busy pace (ms). */
const BUSY_WINDOW_MS = 1000;

export const DEFAULT_BATCH_RUN_SETTINGS: BatchRunSettings = { intervalMs: 500, leaseMs: 10 * 60_000, finishLeaseMs: 5 * 60_000 };

export interface BatchRunnerDeps {
  ctx: RelayContext;
  db: Kysely<Database>;
  options: Pick<OptionStore, 'number' | 'bool' | 'json'>;
  store: FileStore;
  log: FastifyBaseLogger;
  settings?: Partial<BatchRunSettings>;
}

/** The discount a line answered by `channelId` is billed at: the channel's own, else BatchDiscount. */
export function batchDiscountFor(options: Pick<OptionStore, 'number' | 'json'>, channelId: number): number {
  const own = options.json('BatchChannelDiscounts')[String(channelId)];
  const discount = typeof own === 'number' && Number.isFinite(own) ? own : options.number('BatchDiscount');
  return Math.min(1, Math.max(0, discount));
}

/** The caller a batch's lines run as: its key and the key's owner, as they are now; or why they cannot run. */
export async function callerOf(db: Kysely<Database>, task: TaskRow): Promise<RelayCaller | RelayError> {
  const token = await findOwnToken(db, Number(task.user_id), Number(task.token_id));
  const found = token ? await tokenAndOwnerByKey(db, token.key) : undefined;
  // the key's own remaining quota is not checked here: the batch holds what its lines cost already
  if (!found || Number(found.token.status) !== TokenStatus.enabled)
    return relayError(401, 'the API key of this batch is disabled, expired or deleted', 'token_unavailable');
  if (!found.user || Number(found.user.status) !== UserStatus.enabled)
    return relayError(403, 'the account of this batch is disabled', 'user_disabled', 'permission_error');
  return found.member ? { token: found.token, user: found.user, member: found.member } : { token: found.token, user: found.user };
}

/** The consume log of a line: the relay's, naming the batch (taskId) and the line's custom_id. */
function lineLog(task: TaskRow, summary: BatchSummary, row: BatchLineRow, answer: LineAnswer, charge: number, discount: number): NewLog {
  const bill = answer.bill!;
  const details: LogDetails = {
    operation: summary.endpoint,
    status: answer.statusCode,
    modelRatio: answer.modelRatio,
    groupRatio: answer.groupRatio,
    taskId: task.id,
    formula: `${bill.charge} × batch discount ${discount} = ${charge}`,
  };
  return {
    userId: Number(task.user_id),
    username: summary.username,
    type: LogType.consume,
    content: `batch ${task.id}, custom_id ${row.custom_id}: model ratio ${answer.modelRatio.toFixed(2)}, group ratio ${answer.groupRatio.toFixed(2)}, batch discount ${discount}`,
    quota: charge,
    tokenName: summary.tokenName,
    tokenId: Number(task.token_id),
    modelName: answer.model,
    channelId: answer.channelId,
    promptTokens: bill.promptTokens,
    completionTokens: bill.completionTokens,
    elapsedMs: 0,
    isStream: false,
    estimated: bill.estimated,
    requestId: answer.requestId,
    details,
  };
}

/** The output line of an answer, in OpenAI's shape. */
const outputLine = (row: BatchLineRow, statusCode: number, requestId: string, body: unknown) =>
  JSON.stringify({
    id: `batch_req_${randomBytes(12).toString('hex')}`,
    custom_id: row.custom_id,
    response: { status_code: statusCode, request_id: requestId, body },
    error: null,
  });

export class BatchRunner {
  readonly settings: BatchRunSettings;
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<number> | undefined;
  private readonly lines = new Set<Promise<void>>();
  private stopped = false;
  /** When this node last looked for batches to finish (ms). */
  private finishedAt = 0;
  /** When this node last started a line (ms), for the busy pace. */
  private lineStartedAt = 0;
  /** A pass due when the busy pace allows the next line. */
  private wake: NodeJS.Timeout | undefined;
  /** The batches whose lines run here: their rows and callers, for CALLER_TTL_MS. */
  private readonly batches = new Map<string, { at: number; task: TaskRow; caller: RelayCaller | RelayError }>();

  constructor(private readonly deps: BatchRunnerDeps) {
    this.settings = { ...DEFAULT_BATCH_RUN_SETTINGS, ...deps.settings };
  }

  start(): void {
    if (this.settings.intervalMs <= 0 || this.timer) return;
    this.stopped = false;
    this.timer = setInterval(() => void this.runOnce(), this.settings.intervalMs);
    this.timer.unref();
  }

  /** No new line starts; the lines under way end (a shutdown's cut sends them back to the queue). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.wake);
    this.timer = undefined;
    this.wake = undefined;
    await this.passing?.catch(() => undefined);
    await this.idle();
  }

  /** Resolves once no line runs on this node. */
  async idle(): Promise<void> {
    while (this.lines.size > 0) await Promise.allSettled([...this.lines]);
  }

  /** The relay the lines run through (its lastInteractiveAt sets the pace). */
  get relay(): RelayContext {
    return this.deps.ctx;
  }

  /** Lines this node runs now. */
  get running(): number {
    return this.lines.size;
  }

  /** One pass: lines started up to the node's concurrency, batches finished; how many lines it started. */
  runOnce(): Promise<number> {
    this.passing ??= this.pass()
      .catch((error: unknown) => {
        this.deps.log.warn({ err: error }, 'batch pass failed');
        return 0;
      })
      .finally(() => {
        this.passing = undefined;
      });
    return this.passing;
  }

  private async pass(): Promise<number> {
    const { db, options, ctx } = this.deps;
    const now = Date.now();
    // the finishing sweep at most once a second with a timer (a pass also follows every line's end)
    if (this.settings.intervalMs <= 0 || now - this.finishedAt >= Math.max(1000, this.settings.intervalMs)) {
      this.finishedAt = now;
      const finishDeps: UpstreamRunDeps = {
        db,
        ctx,
        store: this.deps.store,
        log: this.deps.log,
        leaseMs: this.settings.finishLeaseMs,
        intervalMs: this.settings.intervalMs,
        callerOf: (task) => callerOf(db, task),
      };
      // a gateway-run batch is finished here, one run at the vendor submitted, polled and settled (upstreamRun.ts)
      for (const id of await openBatchIds(db, now, 20)) await advanceBatch(finishDeps, id);
    }
    const pauseAt = options.number('BatchPauseInFlight');
    if (this.stopped || (pauseAt > 0 && ctx.inFlight >= pauseAt)) return 0;
    let free = Math.max(0, Math.floor(options.number('BatchConcurrency'))) - this.lines.size;
    if (ctx.inFlight > 0 || Date.now() - ctx.lastInteractiveAt < BUSY_WINDOW_MS) free = Math.min(free, this.busyPlaces());
    if (free <= 0) return 0;
    let started = 0;
    for (const key of await dueBatchLines(db, now, free * 2 + 4)) {
      if (started >= free || this.stopped) break;
      const owner = randomBytes(12).toString('hex');
      const row = await leaseBatchLine(db, key, owner, Date.now(), Date.now() + this.settings.leaseMs);
      if (!row) continue;
      started += 1;
      this.lineStartedAt = Date.now();
      const run: Promise<void> = this.runLine(row, owner)
        .catch((error: unknown) => this.deps.log.warn({ err: error, batch: row.task_id, line: row.line }, 'batch line failed'))
        .finally(() => {
          this.lines.delete(run);
          // a place came free: the next line starts now rather than at the next tick (with a timer; tests pass by hand)
          if (this.timer) void this.runOnce();
        });
      this.lines.add(run);
    }
    return started;
  }

  /**
   * Lines a busy node may start now: one when none runs and the last started 1 / BatchBusyLinesPerSecond ago, else
   * none, with a pass set for when the pace allows the next (a line's end brings one too).
   */
  private busyPlaces(): number {
    const perSecond = this.deps.options.number('BatchBusyLinesPerSecond');
    if (!(perSecond > 0) || this.lines.size > 0) return 0;
    const wait = this.lineStartedAt + 1000 / perSecond - Date.now();
    if (wait <= 0) return 1;
    if (this.timer && !this.wake)
      this.wake = setTimeout(() => {
        this.wake = undefined;
        void this.runOnce();
      }, wait).unref();
    return 0;
  }

  /** Runs one leased line and settles it (or sends it back to the queue when the node cut it). */
  private async runLine(row: BatchLineRow, owner: string): Promise<void> {
    const { db, ctx } = this.deps;
    const found = await this.batchOf(row.task_id);
    if (!found) return;
    const { task, caller } = found;
    const summary = batchSummaryOf(task);
    const lineKey = { task_id: row.task_id, line: Number(row.line), bound: Number(row.bound), owner };
    const priced = isRelayError(caller)
      ? caller
      : priceLine(ctx, caller, summary.endpoint, JSON.parse(row.body) as Record<string, unknown>);
    let outcome: LineOutcome;
    if (isRelayError(priced)) {
      const body = { error: { message: priced.message, type: priced.type ?? 'invalid_request_error', param: null, code: priced.code } };
      outcome = { status: 'failed', statusCode: priced.status, result: outputLine(row, priced.status, '', body), charge: 0, channelId: 0 };
    } else {
      const answer = await runPricedLine(ctx, priced, Number(row.bound));
      if (priced.call.signal.byGateway) return requeueBatchLine(db, lineKey, owner);
      outcome = this.outcomeOf(task, summary, row, answer);
    }
    if (!(await settleBatchLine(db, task, lineKey, outcome)))
      this.deps.log.info({ batch: row.task_id, line: row.line }, 'batch line settled elsewhere already');
  }

  /** A batch's row and caller, read again after CALLER_TTL_MS (a key disabled meanwhile stops its lines then). */
  private async batchOf(taskId: string): Promise<{ at: number; task: TaskRow; caller: RelayCaller | RelayError } | undefined> {
    const cached = this.batches.get(taskId);
    if (cached && Date.now() - cached.at < CALLER_TTL_MS) return cached;
    const task = await findTaskById(this.deps.db, taskId);
    if (!task) return undefined;
    const entry = { at: Date.now(), task, caller: await callerOf(this.deps.db, task) };
    if (this.batches.size >= 1000) this.batches.clear();
    this.batches.set(taskId, entry);
    return entry;
  }

  /** What an answer bills: a 2xx at the discount with its consume log, anything else nothing. */
  private outcomeOf(task: TaskRow, summary: BatchSummary, row: BatchLineRow, answer: LineAnswer): LineOutcome {
    const result = outputLine(row, answer.statusCode, answer.requestId, answer.body);
    if (answer.statusCode < 200 || answer.statusCode >= 300)
      return { status: 'failed', statusCode: answer.statusCode, result, charge: 0, channelId: answer.channelId };
    const discount = batchDiscountFor(this.deps.options, answer.channelId);
    const charge = answer.bill ? Math.min(Number(row.bound), Math.round(answer.bill.charge * discount)) : 0;
    const log =
      this.deps.options.bool('LogConsumeEnabled') && charge > 0 ? lineLog(task, summary, row, answer, charge, discount) : undefined;
    return { status: 'completed', statusCode: answer.statusCode, result, charge, channelId: answer.channelId, log };
  }
}
