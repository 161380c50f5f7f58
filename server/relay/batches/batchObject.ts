// What the gateway keeps of a batch in its task row (tasks.request, as JSON),
// the Batch object a client reads, and which way a batch runs. A batch's
// status is OpenAI's own, kept in tasks.status: validating, in_progress,
// finalizing, completed, failed, expired, cancelling, cancelled.
// Reference: https://platform.openai.com/docs/api-reference/batch/object
import type { TaskRow } from '../../repositories/tasks';

/** How a batch runs: by the gateway itself, line by line (selfRun.ts); a vendor's own batch API plugs in as another mode. */
export type BatchMode = 'self';

/**
 * The way a new batch runs. Today always 'self'; a vendor's batch API
 * (relay/batches/upstream.ts) becomes another answer here, chosen by the
 * channels serving the model.
 */
export function batchModeFor(_endpoint: string, _model: string): BatchMode {
  return 'self';
}

/** What tasks.request keeps of a batch. */
export interface BatchSummary {
  mode: BatchMode;
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
