// A task's row as the console shows it (routes/api/task.ts lists them,
// taskActions.ts answers a cancel with one): its money, its error parsed, the
// request id that created it; a batch's output and error files; only admins
// see the owner's name and the channel that took it.
import { BATCH_KINDS } from '../../repositories/batchLines';
import type { TaskRow } from '../../repositories/tasks';

/** One task as the console shows it. */
export interface TaskRecord {
  id: string;
  kind: string;
  model: string;
  status: string;
  /** 0 to 100. */
  progress: number;
  held_quota: number;
  charged_quota: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  user_id: number;
  /** The owner's name (admins); null once the user is deleted. */
  username?: string | null;
  /** The channel that took it (admins). */
  channel_id?: number;
  error: { code?: string; message?: string } | null;
  request_id: string;
  /** A batch's files, once written (GET /api/task/:id/files/output|error reads them); null otherwise. */
  output_file_id?: string | null;
  error_file_id?: string | null;
}

function errorOf(error: string | null): TaskRecord['error'] {
  if (!error) return null;
  try {
    const parsed = JSON.parse(error) as TaskRecord['error'] | string | number | boolean;
    return parsed && typeof parsed === 'object' ? parsed : { message: String(parsed) };
  } catch {
    return { message: error };
  }
}

export function toTaskRecord(row: TaskRow & { username: string | null }, admin: boolean): TaskRecord {
  const record: TaskRecord = {
    id: row.id,
    kind: row.kind,
    model: row.model,
    status: row.status,
    progress: Number(row.progress),
    held_quota: Number(row.held_quota),
    charged_quota: Number(row.charged_quota),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    completed_at: row.completed_at === null ? null : Number(row.completed_at),
    user_id: Number(row.user_id),
    error: errorOf(row.error),
    request_id: row.request_id,
    ...((BATCH_KINDS as readonly string[]).includes(row.kind) ? batchFilesOf(row) : {}),
  };
  return admin ? { ...record, username: row.username, channel_id: Number(row.channel_id) } : record;
}

/** A batch's output and error file ids (tasks.request keeps them once the runner wrote them). */
export function batchFilesOf(row: Pick<TaskRow, 'request'>): { output_file_id: string | null; error_file_id: string | null } {
  let summary: { output_file_id?: unknown; error_file_id?: unknown } = {};
  try {
    summary = (JSON.parse(row.request) as typeof summary | null) ?? {};
  } catch {
    // an unreadable summary names no file
  }
  const id = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  return { output_file_id: id(summary.output_file_id), error_file_id: id(summary.error_file_id) };
}
