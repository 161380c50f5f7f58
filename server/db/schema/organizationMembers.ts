import type { Generated } from 'kysely';

/** One user in one organisation (the pair is the key). */
export interface OrganizationMembersTable {
  organization_id: number;
  user_id: number;
  /** 'owner', 'admin' or 'member' (common/organizations.ts). */
  role: string;
  created_time: number;
  /** The member's lifetime cap on the organisation's money, in quota units (0 = none). */
  cap_quota: Generated<number>;
  /** Everything the member's keys charged the organisation. */
  spent_quota: Generated<number>;
  /** The member's cap per period ('' = none, 'day', 'week', 'month'; common/budgets.ts) and its amount. */
  cap_period: Generated<string>;
  cap_period_quota: Generated<number>;
  /** Charged in the period that began at period_start (Unix seconds); counts as 0 once another period began. */
  period_spent: Generated<number>;
  period_start: Generated<number>;
}

export interface OrganizationMembersSchema {
  organization_members: OrganizationMembersTable;
}
