import type { Generated } from 'kysely';

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  status: number;
  name: string;
  created_time: number;
  accessed_time: number;
  /** Unix seconds; -1 means never. */
  expired_time: number;
  remain_quota: number;
  /** Reserved by requests in flight (already taken off remain_quota), for a limited token. */
  held_quota: Generated<number>;
  /** In-flight relayed requests allowed on one node: 0 = the option's default, -1 = no limit. */
  concurrency_limit: Generated<number>;
  /** Requests per minute across nodes: null inherits (see common/rateLimits.ts), 0 = unlimited. */
  rpm_limit: number | null;
  /** Tokens per minute across nodes: null inherits, 0 = unlimited. */
  tpm_limit: number | null;
  /** The cap per period ('' = none, 'day', 'week', 'month'; common/budgets.ts). */
  budget_period: Generated<string>;
  /** Quota units per period. */
  budget_quota: Generated<number>;
  /** Charged in the period that began at period_start (Unix seconds); counts as 0 once another period began. */
  period_spent: Generated<number>;
  period_start: Generated<number>;
  unlimited_quota: number;
  used_quota: number;
  /** Comma-separated model allowlist; null or empty allows every model. */
  models: string | null;
  /** Comma-separated client IPs/CIDRs; null or empty allows every address. */
  allowed_ips: string | null;
  /** On a key of an organisation's account: the member it belongs to (null: the organisation's own service key). */
  member_user_id: Generated<number | null>;
}

export interface TokensSchema {
  tokens: TokensTable;
}
