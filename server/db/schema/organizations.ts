import type { Generated } from 'kysely';

/** An organisation (team); its members are in organization_members, its balance on its account row in users. */
export interface OrganizationsTable {
  id: Generated<number>;
  /** Unique among organisations. */
  name: string;
  /** 1 enabled, 2 disabled (common/organizations.ts). */
  status: Generated<number>;
  created_time: number;
}

export interface OrganizationsSchema {
  organizations: OrganizationsTable;
}
