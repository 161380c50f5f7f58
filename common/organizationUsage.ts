// An organisation's usage over a range, as GET /api/organization/:id/usage
// answers it (server/routes/api/organizationUsage.ts) and the organisation
// page's Usage tab draws it. Read from the usage rollups of the
// organisation's account: each key is a token of that account, and a key's
// member is tokens.member_user_id. Money is raw quota, as on the dashboard.
import type { DashboardGranularity, ModelUsage, TokenUsage, UsageTotals, UserUsage } from './dashboard';

/** A key's use: its id, its name now ('' once deleted) and its member (0: a service key, or a deleted key). */
export interface OrganizationKeyUsage extends TokenUsage {
  member_user_id: number;
}

export interface OrganizationUsage {
  /** The range read (start down to the start of its hour or day) and its granularity, as on the dashboard. */
  start: number;
  end: number;
  granularity: DashboardGranularity;
  /**
   * 'organization': every key's use, for the owner, its admins and site
   * admins; 'own': a member's, their own keys only (as they see only those).
   */
  scope: 'organization' | 'own';
  totals: UsageTotals;
  /** Per member, by quota, highest first; user_id 0 (username '') gathers service keys and deleted keys. */
  by_member: UserUsage[];
  by_model: ModelUsage[];
  by_key: OrganizationKeyUsage[];
}
