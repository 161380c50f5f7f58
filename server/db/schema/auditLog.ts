import type { Generated } from 'kysely';

/** One audited call: see migration 0022 and server/audit/chain.ts. Times in Unix seconds. */
export interface AuditLogTable {
  id: Generated<number>;
  /** The row's place in the hash chain: 1, 2, 3... with no gap. */
  seq: number;
  created_at: number;
  organization_id: number | null;
  /** null: nobody known (a failed sign-in with a name that matches no one). */
  user_id: number | null;
  username: string;
  role: number;
  ip: string;
  user_agent: string;
  request_id: string;
  method: string;
  route: string;
  action: string;
  target_type: string;
  target_id: string;
  status: number;
  /** 1 or 0. */
  success: number;
  /** JSON of { before, after }, secrets masked; null when the call named no change. */
  changes: string | null;
  prev_hash: string;
  hash: string;
}

/** The chain's one row (id 1): its head, and the anchor retention left. */
export interface AuditChainTable {
  id: number;
  head_seq: number;
  head_hash: string;
  anchor_seq: number;
  anchor_hash: string;
}

export interface AuditLogSchema {
  audit_log: AuditLogTable;
  audit_chain: AuditChainTable;
}
