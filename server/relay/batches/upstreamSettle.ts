// The lines of a batch run at the vendor, settled from its results: each
// line that has a result is closed once (settleBatchLine's conditional UPDATE
// on the line, held by the batch since its creation), a 2xx at the vendor's
// batch price (upstreamChannel.ts vendorBatchShare) with one consume log that
// names the batch and the line's custom_id, anything else for nothing. Lines
// the vendor gave no result for (cancelled, expired, a failed batch) close
// failed and give their bounds back. The result lines keep OpenAI's output
// shape, keyed by custom_id.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LogDetails } from '../../../common/records';
import { LogType } from '../../../common/roles';
import { tokenCharge } from '../../billing/accounting';
import { settleBatchLine, type LineOutcome } from '../../billing/batchLedger';
import type { Database } from '../../db/database';
import { batchLineKeys, type BatchLineKey } from '../../repositories/batchUpstreamLines';
import type { NewLog } from '../../repositories/logs';
import type { TaskRow } from '../../repositories/tasks';
import type { BatchSummary, UpstreamProgress } from './batchObject';
import type { UpstreamBatchResult } from './upstream';
import { vendorBatchShare } from './upstreamChannel';

/** The lease owner of an upstream batch's lines: the batch holds them until its results settle them. */
export const UPSTREAM_LINE_OWNER = 'upstream';

const PAGE = 1000;

export interface SettleDeps {
  db: Kysely<Database>;
  /** Whether consume logs are written (LogConsumeEnabled). */
  logConsume: boolean;
}

type Pricing = NonNullable<UpstreamProgress['pricing']>;

/** The lines still held by the batch, by custom_id. */
async function openLines(db: Kysely<Database>, taskId: string): Promise<Map<string, BatchLineKey>> {
  const open = new Map<string, BatchLineKey>();
  let after = -1;
  for (;;) {
    const rows = await batchLineKeys(db, taskId, after, PAGE);
    if (rows.length === 0) return open;
    after = rows.at(-1)!.line;
    for (const row of rows) if (row.status === 'running') open.set(row.custom_id, row);
  }
}

/** A result line in OpenAI's output shape. */
export function resultLine(customId: string, statusCode: number, requestId: string, body: unknown, error: unknown): string {
  return JSON.stringify({
    id: `batch_req_${randomBytes(12).toString('hex')}`,
    custom_id: customId,
    response: statusCode > 0 ? { status_code: statusCode, request_id: requestId, body } : null,
    error: error ?? null,
  });
}

/** The charge of a 2xx result at the vendor's batch price, and its consume log. */
function billOf(task: TaskRow, summary: BatchSummary, pricing: Pricing, row: BatchLineKey, result: UpstreamBatchResult, share: number) {
  const usage = result.usage ?? { prompt_tokens: 0, completion_tokens: 0 };
  const admission = { model: task.model, ...pricing };
  const usageIn = {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    cachedPromptTokens: usage.cached_tokens ?? 0,
  };
  const full = tokenCharge(admission, usageIn, pricing.completionRatio).charge;
  const charge = Math.min(row.bound, Math.round(full * share));
  const details: LogDetails = {
    operation: summary.endpoint,
    status: result.statusCode,
    modelRatio: pricing.modelRatio,
    groupRatio: pricing.groupRatio,
    taskId: task.id,
    formula: `${full} × vendor batch price ${share} = ${charge}`,
  };
  const log: NewLog = {
    userId: Number(task.user_id),
    username: summary.username,
    type: LogType.consume,
    content: `batch ${task.id}, custom_id ${row.custom_id}: model ratio ${pricing.modelRatio.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}, vendor batch price ${share}`,
    quota: charge,
    tokenName: summary.tokenName,
    tokenId: Number(task.token_id),
    modelName: task.model,
    channelId: summary.channelId ?? 0,
    promptTokens: usageIn.promptTokens,
    completionTokens: usageIn.completionTokens,
    elapsedMs: 0,
    isStream: false,
    estimated: result.usage === undefined,
    requestId: task.request_id,
    details,
  };
  return { charge, log };
}

/** How one result settles its line. */
function outcomeOf(deps: SettleDeps, task: TaskRow, summary: BatchSummary, row: BatchLineKey, result: UpstreamBatchResult): LineOutcome {
  const channelId = summary.channelId ?? 0;
  const answered = result.statusCode >= 200 && result.statusCode < 300;
  const requestId = task.request_id;
  const result_ = resultLine(row.custom_id, result.statusCode, requestId, result.body, answered ? null : result.error);
  if (!answered || !summary.upstream?.pricing)
    return { status: answered ? 'completed' : 'failed', statusCode: result.statusCode, result: result_, charge: 0, channelId };
  const { charge, log } = billOf(task, summary, summary.upstream.pricing, row, result, vendorBatchShare(task.model));
  return {
    status: 'completed',
    statusCode: result.statusCode,
    result: result_,
    charge,
    channelId,
    log: deps.logConsume && charge > 0 ? log : undefined,
  };
}

const lineKey = (task: TaskRow, row: BatchLineKey) => ({ task_id: task.id, line: row.line, bound: row.bound, owner: UPSTREAM_LINE_OWNER });

/**
 * Settles the batch's lines from the vendor's results, then every line left
 * without one as failed with `leftover` (its bound back); how many lines this
 * call settled.
 */
export async function settleUpstreamLines(
  deps: SettleDeps,
  task: TaskRow,
  summary: BatchSummary,
  results: AsyncIterable<UpstreamBatchResult> | undefined,
  leftover: { code: string; message: string },
): Promise<number> {
  const open = await openLines(deps.db, task.id);
  let settled = 0;
  if (results) {
    for await (const result of results) {
      const row = open.get(result.customId);
      if (!row) continue;
      open.delete(result.customId);
      if (await settleBatchLine(deps.db, task, lineKey(task, row), outcomeOf(deps, task, summary, row, result))) settled += 1;
    }
  }
  for (const row of open.values()) {
    const outcome: LineOutcome = {
      status: 'failed',
      statusCode: 0,
      result: resultLine(row.custom_id, 0, '', null, leftover),
      charge: 0,
      channelId: summary.channelId ?? 0,
    };
    if (await settleBatchLine(deps.db, task, lineKey(task, row), outcome)) settled += 1;
  }
  return settled;
}
