// What the gateway keeps of a batch in its task row (tasks.request, as JSON),
// the Batch object a client reads, and which way a batch runs. A batch's
// status is OpenAI's own, kept in tasks.status: validating, in_progress,
// finalizing, completed, failed, expired, cancelling, cancelled.
// Reference: https://platform.openai.com/docs/api-reference/batch/object
import type { TaskRow } from '../../repositories/tasks';

/** How a batch runs: by the gateway itself, line by line (selfRun.ts), or at the vendor's own Batch API (upstreamRun.ts). */
export type BatchMode = 'self' | 'upstream';

/** Channel types whose vendor has a Batch API the gateway drives: OpenAI (1) and Azure OpenAI (3), for every batch endpoint. */
const UPSTREAM_BATCH_TYPES: ReadonlySet<number> = new Set([1, 3]);
/**
 * Gemini (24, and PaLM's 11, which relays through Gemini's API): its Batch
 * API runs generateContent, so chat completions only. Vertex AI (a service
 * account's channel) is not here: its batch prediction reads its input only
 * from Cloud Storage or BigQuery, which the gateway does not have, so the
 * gateway runs those batches itself.
 */
const GEMINI_BATCH_TYPES: ReadonlySet<number> = new Set([24, 11]);
const GEMINI_BATCH_ENDPOINTS: ReadonlySet<string> = new Set(['/v1/chat/completions']);

/**
 * The way a new batch runs: at the vendor when the channel its lines would
 * use (chosen at create time, single-key) is OpenAI, Azure OpenAI, or Gemini
 * for chat completions, and the operator left BatchUpstreamEnabled on; else
 * by the gateway.
 */
export function batchModeFor(
  channel: { type: number; multi_key: number } | undefined,
  upstreamEnabled: boolean,
  endpoint: string,
): BatchMode {
  if (!upstreamEnabled || !channel || Number(channel.multi_key) === 1) return 'self';
  const type = Number(channel.type);
  if (UPSTREAM_BATCH_TYPES.has(type)) return 'upstream';
  return GEMINI_BATCH_TYPES.has(type) && GEMINI_BATCH_ENDPOINTS.has(endpoint) ? 'upstream' : 'self';
}

/** What an upstream batch keeps of its run at the vendor (summary.upstream). */
export interface UpstreamProgress {
  /** The vendor's batch and input file, once submitted: a node that finds them polls, never submits again. */
  batchId?: string;
  inputFileId?: string;
  outputFileId?: string;
  errorFileId?: string;
  /** The price of its lines, fixed at submission: ratio, completion ratio, cache ratios. */
  pricing?: {
    ratio: number;
    modelRatio: number;
    groupRatio: number;
    completionRatio: number;
    cachedPromptRatio?: number;
    cacheCreationRatio?: number;
  };
  /** Polls made, and failed polls in a row (the backoff). */
  polls: number;
  failures: number;
  /** When the next poll is due (ms). */
  nextPollAt: number;
  /** The vendor was asked to cancel. */
  cancelSent?: boolean;
  /** Why it failed at the vendor (or before it got there). */
  error?: string;
}

/** What tasks.request keeps of a batch. */
export interface BatchSummary {
  mode: BatchMode;
  /** The channel an upstream batch runs on, chosen when it was created. */
  channelId?: number;
  upstream?: UpstreamProgress;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  /** Its requests. */
  total: number;
  /** For its lines' consume logs. */
  username: string;
  tokenName: string;
  in_progress_at?: number;
  finalizing_at?: number;
  completed_at?: number;
  failed_at?: number;
  expired_at?: number;
  cancelling_at?: number;
  cancelled_at?: number;
  output_file_id?: string;
  error_file_id?: string;
}

export function batchSummaryOf(task: Pick<TaskRow, 'request'>): BatchSummary {
  return JSON.parse(task.request) as BatchSummary;
}

/** The Batch object, as OpenAI writes it, from the task and how many of its lines are in each status. */
export function batchObject(task: TaskRow, counts: Record<string, number>) {
  const summary = batchSummaryOf(task);
  const at = (value: number | undefined) => value ?? null;
  return {
    id: task.id,
    object: 'batch',
    endpoint: summary.endpoint,
    model: task.model,
    errors: null,
    input_file_id: summary.input_file_id,
    completion_window: summary.completion_window,
    status: task.status,
    output_file_id: summary.output_file_id ?? null,
    error_file_id: summary.error_file_id ?? null,
    created_at: Number(task.created_at),
    in_progress_at: at(summary.in_progress_at),
    expires_at: task.expires_at === null ? null : Number(task.expires_at),
    finalizing_at: at(summary.finalizing_at),
    completed_at: at(summary.completed_at),
    failed_at: at(summary.failed_at),
    expired_at: at(summary.expired_at),
    cancelling_at: at(summary.cancelling_at),
    cancelled_at: at(summary.cancelled_at),
    request_counts: { total: summary.total, completed: counts.completed ?? 0, failed: counts.failed ?? 0 },
    metadata: summary.metadata,
  };
}
