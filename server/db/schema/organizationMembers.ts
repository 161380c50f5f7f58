/** One user in one organisation (the pair is the key). */
export interface OrganizationMembersTable {
  organization_id: number;
  user_id: number;
  /** 'owner', 'admin' or 'member' (common/organizations.ts). */
  role: string;
  created_time: number;
}

export interface OrganizationMembersSchema {
  organization_members: OrganizationMembersTable;
}
