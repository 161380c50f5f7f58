import type { Generated } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  display_name: string;
  role: number;
  status: number;
  email: string;
  github_id: string;
  wechat_id: string;
  /** sha256 hex of the user's access token; the token itself is shown once and never stored. */
  access_token_hash: string | null;
  quota: number;
  used_quota: number;
  /** Reserved by requests in flight (already taken off quota); what a crash leaves here is given back at start. */
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
  request_count: number;
  group: string;
  aff_code: string | null;
  inviter_id: number;
  /** Bumped to revoke every session of the user (password change, reset). */
  session_version: number;
  created_at: number;
  /** Set on the account row that holds an organisation's balance (it never signs in); null for a person. */
  organization_id: Generated<number | null>;
}

export interface UsersSchema {
  users: UsersTable;
}
