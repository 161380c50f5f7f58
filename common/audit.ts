/**
 * The audit log as it travels on the console API (`/api/audit/`): one
 * append-only row per state-changing call, linked into a hash chain
 * (server/audit/chain.ts). Secrets in `before` and `after` are already
 * masked on the server ("***", or "***" and the last four characters).
 */

/** The changed fields of a call's target: before (absent on a create) and after (absent on a delete). */
export interface AuditChanges {
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

/**
 * The columns of an audit row that have one type everywhere: on the console
 * API (AuditRecord), in the table (server/db/schema/auditLog.ts) and in the
 * fields the chain hashes (server/audit/chain.ts). Times are Unix seconds.
 */
export interface AuditCallFields {
  created_at: number;
  /** The organisation the call acted in, when organisations are on; null otherwise. */
  organization_id: number | null;
  /** Who called: null for a caller nobody knows (a failed sign-in with an unknown name). */
  user_id: number | null;
  username: string;
  role: number;
  ip: string;
  user_agent: string;
  request_id: string;
  method: string;
  /** The route as registered (`/api/token/:id`), never the raw URL. */
  route: string;
  /** What was done: a named action (`option.update`, `user.login`) or `METHOD route`. */
  action: string;
  target_type: string;
  target_id: string;
  status: number;
}

/** The chain's part of a row: its place and its links. */
export interface AuditLinks {
  /** The row's place in the chain: 1, 2, 3... with no gap. */
  seq: number;
  prev_hash: string;
  hash: string;
}

/** One audit row as the console API sends it. */
export interface AuditRecord extends AuditCallFields, AuditLinks {
  id: number;
  success: boolean;
  changes: AuditChanges | null;
}

/** `GET /api/audit/` filters (and the CSV export's), beside `?p=` and `page_size`. */
export interface AuditFilter {
  user_id?: number;
  username?: string;
  /** Exact action, or a route pattern. */
  action?: string;
  target_type?: string;
  target_id?: string;
  /** `true` or `false`. */
  success?: string;
  start_timestamp?: number;
  end_timestamp?: number;
  /** The rows of one organisation's calls: what its owner and admins read (GET /api/organization/:id/audit). */
  organization_id?: number;
}

/**
 * How a chain breaks: a row `missing` (deleted), `changed` (its hash no longer
 * matches it), `unlinked` (its prev_hash follows no row before it), or the
 * `head` (the chain's recorded head matches no last row).
 */
export type AuditBreakKind = 'missing' | 'changed' | 'unlinked' | 'head';

/** What the chain walk found (`GET /api/audit/verify`, `npm run audit:verify`). */
export interface AuditChainStatus {
  intact: boolean;
  /** Rows walked. */
  rows: number;
  /** The last row's seq (the chain's head); 0 when the log is empty. */
  head_seq: number;
  /** Rows before this seq were pruned (AuditRetentionDays); 0 when none were. */
  anchor_seq: number;
  /** On a break: the first bad row's seq and id (id null when the row is missing) and what is wrong with it. */
  broken_at?: { seq: number; id: number | null; kind: AuditBreakKind; reason: string };
  /** Unix seconds of the walk. */
  checked_at: number;
}

/** Column order of `GET /api/audit/export`. */
export const AUDIT_EXPORT_COLUMNS = [
  'id',
  'seq',
  'created_at',
  'user_id',
  'username',
  'role',
  'ip',
  'user_agent',
  'request_id',
  'method',
  'route',
  'action',
  'target_type',
  'target_id',
  'status',
  'success',
  'changes',
  'organization_id',
  'prev_hash',
  'hash',
] as const satisfies ReadonlyArray<keyof AuditRecord>;
