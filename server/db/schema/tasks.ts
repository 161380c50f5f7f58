import type { Generated } from 'kysely';

/** An asynchronous job relayed to a vendor: a video, later a batch (migration 0029). */
export interface TasksTable {
  /** Orders a user's tasks (the list's cursor). */
  seq: Generated<number>;
  /** The public id the client sees, e.g. "video_..." (the vendor's own is upstream_id). */
  id: string;
  /** 'video' (later 'batch'). */
  kind: string;
  user_id: number;
  token_id: number;
  /** 1 when the key's own quota was held too (a limited key). */
  limited: Generated<number>;
  /** The channel that took the job (0 until one did). */
  channel_id: Generated<number>;
  /** The channel's key that took it, on a multi-key channel: the vendor knows the job under that key only. */
  key_id: number | null;
  model: string;
  upstream_id: string | null;
  /** submitting, queued, in_progress, completed, failed, expired, deleted. */
  status: string;
  progress: Generated<number>;
  /** What the task still holds off the balances (counted in users.held_quota and, limited, tokens.held_quota). */
  held_quota: number;
  /** What its settlement charged. */
  charged_quota: Generated<number>;
  /** The request's summary as JSON: e.g. { seconds, size, ratio, price }. */
  request: string;
  /** The vendor's error as JSON ({ code, message }), when it failed. */
  error: string | null;
  request_id: string;
  /** The node polling it now, until lease_until (ms). */
  lease_owner: string | null;
  lease_until: Generated<number>;
  /** When it is next asked about (ms). */
  next_poll_at: number;
  polls: Generated<number>;
  /** Unix seconds. */
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  expires_at: number | null;
}

export interface TasksSchema {
  tasks: TasksTable;
}
