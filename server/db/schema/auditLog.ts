import type { Generated } from 'kysely';
import type { AuditCallFields, AuditLinks } from '../../../common/audit';

/** A row before it is linked into the chain (server/audit/chain.ts): every column but id, seq and the hashes. */
export interface AuditFields extends AuditCallFields {
  /** 1 or 0. */
  success: number;
  /** JSON of { before, after }, secrets masked; null when the call named no change. */
  changes: string | null;
}

/** One audited call: see migration 0022 and server/audit/chain.ts. Times in Unix seconds. */
export interface AuditLogTable extends AuditFields, AuditLinks {
  id: Generated<number>;
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
