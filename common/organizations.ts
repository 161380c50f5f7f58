// Organisations (teams): who may do what in which organisation. This is the
// one place the rules live; the server's routes ask it before every change
// and the console asks it which buttons to show. An organisation is not a
// one-api group (users.group, a price tier and channel pool).
import { isBudgetPeriod, type BudgetPeriod } from './budgets';
import { isAdmin } from './roles';

/** A member's role inside one organisation, lowest first. */
export const ORGANIZATION_ROLES = ['member', 'admin', 'owner'] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];

/** organizations.status */
export const OrganizationStatus = { enabled: 1, disabled: 2 } as const;

export function isOrganizationRole(value: unknown): value is OrganizationRole {
  return typeof value === 'string' && (ORGANIZATION_ROLES as readonly string[]).includes(value);
}

const RANK: Record<OrganizationRole, number> = { member: 1, admin: 2, owner: 3 };

/** An organisation as the console sees it. */
export interface OrganizationRecord {
  id: number;
  name: string;
  status: number;
  created_time: number;
  /** The owner's user id and username (0 and '' while it has none). */
  owner_id: number;
  owner_username: string;
  member_count: number;
  /** The organisation's shared balance and what its keys have spent (quota units). */
  quota: number;
  used_quota: number;
  /** Its optional budget per period, as a user's (common/budgets.ts). */
  budget_period: string;
  budget_quota: number;
}

/** An organisation the caller belongs to, with the caller's role in it. */
export interface MyOrganizationRecord extends OrganizationRecord {
  role: OrganizationRole;
}

/** A member's caps on the organisation's money, in quota units: a lifetime cap (0 = none) and one per period ('' = none). */
export interface MemberCapFields {
  cap_quota: number;
  cap_period: BudgetPeriod;
  cap_period_quota: number;
}

/** A member's caps and what the member's keys spent against them. */
export interface MemberCapRecord extends MemberCapFields {
  /** Everything the member's keys charged the organisation. */
  spent_quota: number;
  /** Charged in the current period (0 without a period cap); the period ends at resets_at (Unix seconds, 0 without one). */
  period_spent: number;
  resets_at: number;
}

/** One member of an organisation. */
export interface OrganizationMemberRecord extends MemberCapRecord {
  organization_id: number;
  user_id: number;
  username: string;
  display_name: string;
  role: OrganizationRole;
  created_time: number;
}

/**
 * Who is asking: their site role and, when they belong to the organisation in
 * question, their role in it (undefined for an outsider).
 */
export interface OrganizationActor {
  siteRole: number;
  /** The actor's own user id, so "leave" can be told from "remove". */
  userId: number;
  membership?: OrganizationRole;
  /** A disabled organisation is read-only to everyone but site admins. */
  organizationEnabled: boolean;
}

/** Site admins see and change every organisation; nobody else acts as one. */
const siteAdmin = (actor: OrganizationActor) => isAdmin(actor.siteRole);

/** May the actor see the organisation at all (its name, status and their own role)? */
export function canViewOrganization(actor: OrganizationActor): boolean {
  return siteAdmin(actor) || actor.membership !== undefined;
}

/** May the actor list the organisation's members (and, later, its keys)? */
export function canManageMembers(actor: OrganizationActor): boolean {
  if (siteAdmin(actor)) return true;
  if (!actor.organizationEnabled || actor.membership === undefined) return false;
  return RANK[actor.membership] >= RANK.admin;
}

/**
 * The roles the actor may give someone joining or moving within the
 * organisation: a site admin any role (owner included: that is assigning the
 * owner), the owner admin or member (owner only by transferring), an admin
 * only member.
 */
export function assignableRoles(actor: OrganizationActor): OrganizationRole[] {
  if (siteAdmin(actor)) return [...ORGANIZATION_ROLES];
  if (!canManageMembers(actor) || actor.membership === undefined) return [];
  return ORGANIZATION_ROLES.filter((role) => RANK[role] < RANK[actor.membership!]);
}

/** Why the actor may not add someone with `role`; undefined when they may. */
export function addMemberProblem(actor: OrganizationActor, role: OrganizationRole): string | undefined {
  if (!canManageMembers(actor)) return 'only the organisation owner and its admins manage its members';
  if (role === 'owner' && !siteAdmin(actor)) return 'the owner is changed by transferring ownership';
  if (!assignableRoles(actor).includes(role)) return `you may not make someone ${role}`;
  return undefined;
}

/** Someone in the organisation: their user id and current role. */
export interface MemberTarget {
  userId: number;
  role: OrganizationRole;
}

/**
 * Why the actor may not change `target` to `role`; undefined when they may.
 * Making someone owner is a transfer (the former owner becomes an admin):
 * the site admin or the current owner. Only a site admin demotes the owner
 * directly; anyone else moves ownership to another member first.
 */
export function changeRoleProblem(actor: OrganizationActor, target: MemberTarget, role: OrganizationRole): string | undefined {
  if (!canManageMembers(actor)) return 'only the organisation owner and its admins manage its members';
  if (target.role === role || siteAdmin(actor)) return undefined;
  if (role === 'owner') return actor.membership === 'owner' ? undefined : 'only the owner transfers ownership';
  if (target.role === 'owner') return 'the owner keeps the role until ownership is transferred to another member';
  if (target.userId === actor.userId) return 'you may not change your own role';
  const rank = RANK[actor.membership!];
  if (RANK[target.role] >= rank || RANK[role] >= rank) return 'you may only manage members below your own role';
  return undefined;
}

/**
 * Why the actor may not remove `target`; undefined when they may. Anyone but
 * the owner may leave; the owner is removed only after ownership moved on
 * (or by a site admin, which leaves the organisation without an owner until
 * one is assigned).
 */
export function removeMemberProblem(actor: OrganizationActor, target: MemberTarget): string | undefined {
  if (siteAdmin(actor)) return undefined;
  if (target.role === 'owner') return 'the owner cannot be removed: transfer ownership first';
  if (target.userId === actor.userId && actor.membership !== undefined) return undefined;
  if (!canManageMembers(actor)) return 'only the organisation owner and its admins manage its members';
  if (RANK[target.role] >= RANK[actor.membership!]) return 'you may only remove members below your own role';
  return undefined;
}

/** May the actor see and switch off every key of the organisation (not only their own)? */
export const canManageKeys = canManageMembers;

/**
 * Why the actor may not create a key spending the organisation's money;
 * undefined when they may. A member makes keys for themselves; a service key
 * (no member's) is for the owner, admins and site admins.
 */
export function createKeyProblem(actor: OrganizationActor, service: boolean): string | undefined {
  if (!actor.organizationEnabled) return 'the organization is disabled';
  if (service) return canManageKeys(actor) ? undefined : 'only the organisation owner and its admins make service keys';
  return actor.membership === undefined ? 'only members make keys that spend the organization’s money' : undefined;
}

/**
 * Why the actor may not read, switch or delete a key held by `keyMemberId`
 * (null: a service key); undefined when they may: their own key, or any key
 * for the owner, admins and site admins.
 */
export function keyAccessProblem(actor: OrganizationActor, keyMemberId: number | null): string | undefined {
  if (canManageKeys(actor)) return undefined;
  if (actor.membership !== undefined && keyMemberId === actor.userId) return undefined;
  return 'only the organisation owner and its admins manage keys other than their own';
}

/**
 * Why the actor may not set `target`'s caps; undefined when they may: site
 * admins and the owner anyone's (their own too), an admin those of plain
 * members, so nobody raises their own cap but the owner.
 */
export function setCapProblem(actor: OrganizationActor, target: MemberTarget): string | undefined {
  if (!canManageMembers(actor)) return 'only the organisation owner and its admins set members’ caps';
  if (siteAdmin(actor) || actor.membership === 'owner') return undefined;
  if (RANK[target.role] >= RANK[actor.membership!]) return 'you may only set the caps of members below your own role';
  return undefined;
}

const wholeAmount = (value: unknown) => {
  const amount = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof amount === 'number' && Number.isSafeInteger(amount) && amount >= 0 ? amount : undefined;
};

/**
 * A member's caps from an API body, each field left out keeping `current`'s (null is no value):
 * cap_quota a whole number of quota (0: no lifetime cap); cap_period '', day,
 * week or month; cap_period_quota above 0 when a period is set (stored as 0
 * without one).
 */
export function parseMemberCaps(
  body: { cap_quota?: unknown; cap_period?: unknown; cap_period_quota?: unknown },
  current: MemberCapFields,
): { value: MemberCapFields } | { error: string } {
  const capQuota = wholeAmount(body.cap_quota === undefined ? current.cap_quota : body.cap_quota);
  if (capQuota === undefined) return { error: 'cap_quota must be a whole number of quota, 0 for no lifetime cap' };
  const period = body.cap_period === undefined ? current.cap_period : body.cap_period;
  if (!isBudgetPeriod(period)) return { error: 'cap_period must be one of "", "day", "week" or "month"' };
  if (period === '') return { value: { cap_quota: capQuota, cap_period: '', cap_period_quota: 0 } };
  const periodQuota = wholeAmount(body.cap_period_quota === undefined ? current.cap_period_quota : body.cap_period_quota);
  if (!periodQuota) return { error: 'cap_period_quota must be a whole number of quota above 0 when a cap period is set' };
  return { value: { cap_quota: capQuota, cap_period: period, cap_period_quota: periodQuota } };
}
