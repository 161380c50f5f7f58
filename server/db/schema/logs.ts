import type { Generated } from 'kysely';

export interface LogsTable {
  id: Generated<number>;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id: number;
  model_name: string;
  channel_id: number;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  elapsed_ms: number;
  is_stream: number;
  /** 1 when usage was counted locally (no upstream usage, or the client went away). */
  estimated: number;
  /** The relayed request's X-Request-Id (null for other logs and for those written before it was kept). */
  request_id: string | null;
  /** LogDetails (common/records.ts) as JSON, or null. */
  other: string | null;
}

export interface LogsSchema {
  logs: LogsTable;
}
