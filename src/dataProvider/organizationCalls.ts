// The console API's organisation calls, typed (the map atop index.ts lists
// each URL). Organisations are a page, not a react-admin resource: a member
// reaches one through "My organisations", an admin through the site list.
import type { AuditRecord } from '../../common/audit';
import type { OrganizationUsage } from '../../common/organizationUsage';
import type {
  MemberCapFields,
  MemberCapRecord,
  MyOrganizationRecord,
  OrganizationMemberRecord,
  OrganizationRecord,
  OrganizationRole,
} from '../../common/organizations';
import type { TokenRecord } from '../../common/records';
import type { HttpClient } from './httpClient';

/** A key of an organisation: a token of its account, with the member who holds it (0 and '' for a service key). */
export type OrganizationKeyRecord = TokenRecord & { member_user_id: number; member_username: string };

/** An organisation as one of its members (or a site admin: role null when not a member) reads it. */
export type OrganizationView = OrganizationRecord & { role: OrganizationRole | null; member_cap?: MemberCapRecord | null };

const base = '/api/organization';
const one = (id: number) => `${base}/${encodeURIComponent(String(id))}`;
const page = (page0: number) => `?p=${page0}&page_size=100`;

export const organizationEndpoints = {
  list: (page0: number) => `${base}/${page(page0)}`,
  search: (keyword: string) => `${base}/search?keyword=${encodeURIComponent(keyword)}`,
  collection: `${base}/`,
  self: `${base}/self`,
  one,
  members: (id: number, page0 = 0) => `${one(id)}/member${page(page0)}`,
  member: (id: number) => `${one(id)}/member`,
  removeMember: (id: number, userId: number) => `${one(id)}/member/${encodeURIComponent(String(userId))}`,
  keys: (id: number, page0 = 0) => `${one(id)}/token${page(page0)}`,
  key: (id: number) => `${one(id)}/token`,
  keySecret: (id: number, tokenId: number) => `${one(id)}/token/${encodeURIComponent(String(tokenId))}/key`,
  removeKey: (id: number, tokenId: number) => `${one(id)}/token/${encodeURIComponent(String(tokenId))}`,
  topUp: (id: number) => `${one(id)}/topup`,
  audit: (id: number, page0 = 0) => `${one(id)}/audit${page(page0)}`,
  usage: (id: number, start: number, end: number) => `${one(id)}/usage?start_timestamp=${start}&end_timestamp=${end}`,
};

export function organizationCalls(httpClient: HttpClient) {
  const endpoints = organizationEndpoints;
  return {
    /** Every organisation, the first 100 (site admins); with a keyword, the search. */
    listOrganizations: async (keyword = '') =>
      (await httpClient<OrganizationRecord[]>(keyword ? endpoints.search(keyword) : endpoints.list(0))).data ?? [],
    myOrganizations: async () => (await httpClient<MyOrganizationRecord[]>(endpoints.self)).data ?? [],
    getOrganization: async (id: number) => (await httpClient<OrganizationView>(endpoints.one(id))).data as OrganizationView,
    createOrganization: async (payload: { name: string; owner: string }) =>
      (await httpClient<OrganizationRecord>(endpoints.collection, { method: 'POST', body: payload })).data as OrganizationRecord,
    updateOrganization: async (payload: { id: number; name?: string; owner?: string; status?: number }) =>
      (await httpClient<OrganizationRecord>(endpoints.collection, { method: 'PUT', body: payload })).data as OrganizationRecord,
    deleteOrganization: async (id: number) => {
      await httpClient(endpoints.one(id), { method: 'DELETE' });
    },
    topUpOrganization: async (id: number, quota: number) =>
      Number((await httpClient<number>(endpoints.topUp(id), { method: 'POST', body: { quota } })).data ?? 0),
    /** The organisation's own audit rows, the newest 100 (its owner and admins). */
    organizationAudit: async (id: number) => (await httpClient<AuditRecord[]>(endpoints.audit(id))).data ?? [],
    /** What the organisation's keys spent from `start` to `end` (unix seconds): every key's, or a member's own. */
    organizationUsage: async (id: number, start: number, end: number) =>
      (await httpClient<OrganizationUsage>(endpoints.usage(id, start, end))).data as OrganizationUsage,
    organizationMembers: async (id: number) => (await httpClient<OrganizationMemberRecord[]>(endpoints.members(id))).data ?? [],
    addOrganizationMember: async (id: number, username: string, role: OrganizationRole) => {
      await httpClient(endpoints.member(id), { method: 'POST', body: { username, role } });
    },
    setOrganizationMemberRole: async (id: number, userId: number, role: OrganizationRole) => {
      await httpClient(endpoints.member(id), { method: 'PUT', body: { user_id: userId, role } });
    },
    setOrganizationMemberCaps: async (id: number, userId: number, caps: MemberCapFields) => {
      await httpClient(endpoints.member(id), { method: 'PUT', body: { user_id: userId, ...caps } });
    },
    removeOrganizationMember: async (id: number, userId: number) => {
      await httpClient(endpoints.removeMember(id, userId), { method: 'DELETE' });
    },
    organizationKeys: async (id: number) => (await httpClient<OrganizationKeyRecord[]>(endpoints.keys(id))).data ?? [],
    /** A new key spending the organisation's money; the answer carries the whole secret, once. */
    createOrganizationKey: async (id: number, payload: { name: string; service?: boolean } & Record<string, unknown>) =>
      (await httpClient<OrganizationKeyRecord>(endpoints.key(id), { method: 'POST', body: payload })).data as OrganizationKeyRecord,
    setOrganizationKeyStatus: async (id: number, tokenId: number, status: number) => {
      await httpClient(endpoints.key(id), { method: 'PUT', body: { id: tokenId, status } });
    },
    revealOrganizationKey: async (id: number, tokenId: number) => (await httpClient<string>(endpoints.keySecret(id, tokenId))).data ?? '',
    deleteOrganizationKey: async (id: number, tokenId: number) => {
      await httpClient(endpoints.removeKey(id, tokenId), { method: 'DELETE' });
    },
  };
}
