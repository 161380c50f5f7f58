// The console API's list parameters beyond one-api's `?p=`: page size, sort
// column and order, and the filters each list accepts. Absent, every list
// answers as one-api v0.5.3 does: 10 rows a page, newest (highest id) first.

/** Rows per page a list may ask for (`page_size`); 10 when absent. */
export const PAGE_SIZES = [10, 25, 50, 100] as const;

export type SortOrder = 'asc' | 'desc';

/** Per resource, the columns a list or search may be sorted by (`sort`). */
export const SORTABLE_COLUMNS = {
  channel: [
    'id',
    'name',
    'type',
    'status',
    'group',
    'priority',
    'weight',
    'response_time',
    'test_time',
    'balance',
    'used_quota',
    'created_time',
  ],
  token: ['id', 'name', 'status', 'used_quota', 'remain_quota', 'created_time', 'accessed_time', 'expired_time'],
  redemption: ['id', 'name', 'status', 'quota', 'created_time', 'redeemed_time'],
  user: ['id', 'username', 'display_name', 'group', 'quota', 'used_quota', 'request_count', 'role', 'status'],
  log: [
    'id',
    'created_at',
    'type',
    'username',
    'token_name',
    'model_name',
    'quota',
    'prompt_tokens',
    'completion_tokens',
    'elapsed_ms',
    'channel_id',
  ],
} as const;

export type ListResource = keyof typeof SORTABLE_COLUMNS;

/** The sort a list has when the request names none. */
export const DEFAULT_SORT = { field: 'id', order: 'desc' } as const;

/** What a bulk request may do to every record it names. */
export const BULK_ACTIONS = ['enable', 'disable', 'delete'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** At most this many ids per bulk request (the largest page). */
export const BULK_MAX = 100;

/** `POST /api/{channel|token|redemption}/bulk` answers with what happened to each id. */
export interface BulkResult {
  /** Ids the action was applied to. */
  done: number[];
  /** Ids it was not, each with the reason (not found, not yours, a used code, ...). */
  failed: Array<{ id: number; message: string }>;
}

/** A channel job's state (`GET /api/channel/jobs/{id}`). */
export interface ChannelJob {
  id: string;
  kind: 'test' | 'balance';
  /** running until every channel was visited; then done. */
  state: 'running' | 'done';
  /** Channels visited so far, of `total`. */
  done: number;
  total: number;
  failures: Array<{ channel_id: number; name: string; message: string }>;
  /** Unix seconds. */
  started_at: number;
  finished_at: number;
}
