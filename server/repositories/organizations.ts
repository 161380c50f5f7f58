// Queries on organisations and their members. Who may call which is decided
// before (common/organizations.ts); these only read and write.
import { sql, type Kysely, type Selectable } from 'kysely';
import { budgetUsageAt, isBudgetPeriod } from '../../common/budgets';
import type { DatabaseConfig } from '../config';
import { insertReturningId, type Database } from '../db/database';
import type { OrganizationMembersTable } from '../db/schema/organizationMembers';
import {
  isOrganizationRole,
  OrganizationStatus,
  type MemberCapFields,
  type MemberCapRecord,
  type MyOrganizationRecord,
  type OrganizationMemberRecord,
  type OrganizationRecord,
  type OrganizationRole,
} from '../../common/organizations';
import { createAccount, deleteAccount, disableMemberKeys } from './organizationAccounts';
import { idOf, SEARCH_LIMIT, startsWith, type PageWindow } from './pagination';

type Executor = Kysely<Database>;

/** The organisations with their owner and head count, newest first. */
function organizationsWithOwner(db: Executor) {
  return db
    .selectFrom('organizations as o')
    .leftJoin('organization_members as owner', (join) => join.onRef('owner.organization_id', '=', 'o.id').on('owner.role', '=', 'owner'))
    .leftJoin('users as u', 'u.id', 'owner.user_id')
    .leftJoin('users as account', 'account.organization_id', 'o.id')
    .select(['o.id', 'o.name', 'o.status', 'o.created_time', 'owner.user_id as owner_id', 'u.username as owner_username'])
    .select(['account.quota', 'account.used_quota', 'account.budget_period', 'account.budget_quota'])
    .select((eb) =>
      eb
        .selectFrom('organization_members as m')
        .select(eb.fn.countAll<number>().as('count'))
        .whereRef('m.organization_id', '=', 'o.id')
        .as('member_count'),
    )
    .orderBy('o.id', 'desc');
}

type OrganizationRow = Awaited<ReturnType<ReturnType<typeof organizationsWithOwner>['executeTakeFirstOrThrow']>>;

function toOrganizationRecord(row: OrganizationRow): OrganizationRecord {
  return {
    id: Number(row.id),
    name: row.name,
    status: Number(row.status),
    created_time: Number(row.created_time),
    owner_id: Number(row.owner_id ?? 0),
    owner_username: row.owner_username ?? '',
    member_count: Number(row.member_count ?? 0),
    quota: Number(row.quota ?? 0),
    used_quota: Number(row.used_quota ?? 0),
    budget_period: row.budget_period ?? '',
    budget_quota: Number(row.budget_quota ?? 0),
  };
}

export async function listOrganizations(db: Executor, window: PageWindow): Promise<OrganizationRecord[]> {
  const rows = await organizationsWithOwner(db).limit(window.limit).offset(window.offset).execute();
  return rows.map(toOrganizationRecord);
}

/** By id, or by the start of the name. */
export async function searchOrganizations(db: Executor, keyword: string): Promise<OrganizationRecord[]> {
  const id = idOf(keyword);
  const rows = await organizationsWithOwner(db)
    .where((eb) => eb.or([...(id === undefined ? [] : [eb('o.id', '=', id)]), startsWith('o.name', keyword)]))
    .limit(SEARCH_LIMIT)
    .execute();
  return rows.map(toOrganizationRecord);
}

export async function findOrganization(db: Executor, id: number): Promise<OrganizationRecord | undefined> {
  const row = await organizationsWithOwner(db).where('o.id', '=', id).executeTakeFirst();
  return row ? toOrganizationRecord(row) : undefined;
}

export async function organizationNameTaken(db: Executor, name: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('organizations').select('id').where('name', '=', name);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** A new organisation, its owner and its account, together or not at all; its id. */
export async function createOrganization(
  db: Executor,
  dialect: DatabaseConfig['dialect'],
  fields: { name: string; status?: number; ownerId: number },
): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  return db.transaction().execute(async (transaction) => {
    const id = await insertReturningId(
      dialect,
      transaction
        .insertInto('organizations')
        .values({ name: fields.name, status: fields.status ?? OrganizationStatus.enabled, created_time: now }),
    );
    await transaction
      .insertInto('organization_members')
      .values({ organization_id: id, user_id: fields.ownerId, role: 'owner', created_time: now })
      .execute();
    await createAccount(transaction, dialect, id, fields.status ?? OrganizationStatus.enabled);
    return id;
  });
}

export async function updateOrganization(db: Executor, id: number, patch: { name?: string; status?: number }): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  await db.updateTable('organizations').set(patch).where('id', '=', id).execute();
}

/** Deletes the organisation, its memberships, its account and keys (not their logs); whether it existed. */
export async function deleteOrganization(db: Executor, id: number): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('organization_members').where('organization_id', '=', id).execute();
    await deleteAccount(transaction, id);
    const result = await transaction.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/** The user's role in the organisation, or undefined for an outsider. */
/** The id of the organisation of this exact name, if one has it. */
export async function organizationIdByName(db: Executor, name: string): Promise<number | undefined> {
  const row = await db.selectFrom('organizations').select('id').where('name', '=', name).executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

export async function membershipOf(db: Executor, organizationId: number, userId: number): Promise<OrganizationRole | undefined> {
  const row = await db
    .selectFrom('organization_members')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row && isOrganizationRole(row.role) ? row.role : undefined;
}

/** The organisations the user belongs to, with their role in each. */
export async function organizationsOfMember(db: Executor, userId: number): Promise<MyOrganizationRecord[]> {
  const rows = await organizationsWithOwner(db)
    .innerJoin('organization_members as mine', 'mine.organization_id', 'o.id')
    .select('mine.role as role')
    .where('mine.user_id', '=', userId)
    .execute();
  return rows.map((row) => ({ ...toOrganizationRecord(row), role: isOrganizationRole(row.role) ? row.role : 'member' }));
}

/** The owner first, then admins, then members, each in the order they joined. */
const roleOrder = sql<number>`case m.role when 'owner' then 0 when 'admin' then 1 else 2 end`;

const CAP_COLUMNS = ['m.cap_quota', 'm.spent_quota', 'm.cap_period', 'm.cap_period_quota', 'm.period_spent', 'm.period_start'] as const;

type CapColumns = Pick<
  Selectable<OrganizationMembersTable>,
  'cap_quota' | 'spent_quota' | 'cap_period' | 'cap_period_quota' | 'period_spent' | 'period_start'
>;

/** A member's caps as the console API shows them; the period's spend as of now in `zone` (the operator's time zone). */
export function memberCapOf(row: CapColumns, zone: string, now = Date.now()): MemberCapRecord {
  const period = isBudgetPeriod(row.cap_period) ? row.cap_period : '';
  const usage = budgetUsageAt(
    { budget_period: period, period_spent: Number(row.period_spent), period_start: Number(row.period_start) },
    now,
    zone,
  );
  return {
    cap_quota: Number(row.cap_quota),
    cap_period: period,
    cap_period_quota: period ? Number(row.cap_period_quota) : 0,
    spent_quota: Number(row.spent_quota),
    period_spent: usage?.spent ?? 0,
    resets_at: usage?.resets_at ?? 0,
  };
}

/** The member's caps and spend, or undefined for an outsider. */
export async function memberCapsOf(
  db: Executor,
  organizationId: number,
  userId: number,
  zone: string,
): Promise<MemberCapRecord | undefined> {
  const row = await db
    .selectFrom('organization_members as m')
    .select(CAP_COLUMNS)
    .where('m.organization_id', '=', organizationId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
  return row ? memberCapOf(row, zone) : undefined;
}

/** Sets a member's caps; their spend stays as it is. */
export async function setMemberCaps(db: Executor, organizationId: number, userId: number, caps: MemberCapFields): Promise<void> {
  await db
    .updateTable('organization_members')
    .set({ cap_quota: caps.cap_quota, cap_period: caps.cap_period, cap_period_quota: caps.cap_period_quota })
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

export async function listMembers(
  db: Executor,
  organizationId: number,
  window: PageWindow,
  zone: string,
): Promise<OrganizationMemberRecord[]> {
  const rows = await db
    .selectFrom('organization_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.organization_id', 'm.user_id', 'm.role', 'm.created_time', 'u.username', 'u.display_name', ...CAP_COLUMNS])
    .where('m.organization_id', '=', organizationId)
    .orderBy(roleOrder)
    .orderBy('m.created_time')
    .orderBy('m.user_id')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  return rows.map((row) => ({
    organization_id: Number(row.organization_id),
    user_id: Number(row.user_id),
    username: row.username,
    display_name: row.display_name,
    role: isOrganizationRole(row.role) ? row.role : 'member',
    created_time: Number(row.created_time),
    ...memberCapOf(row, zone),
  }));
}

export async function addMember(
  db: Executor,
  organizationId: number,
  userId: number,
  role: Exclude<OrganizationRole, 'owner'>,
): Promise<void> {
  await db
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: userId, role, created_time: Math.floor(Date.now() / 1000) })
    .execute();
}

export async function setMemberRole(db: Executor, organizationId: number, userId: number, role: Exclude<OrganizationRole, 'owner'>) {
  await db
    .updateTable('organization_members')
    .set({ role })
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

/**
 * Makes the user the owner (joining them when they are not a member yet);
 * whoever owned the organisation before stays on as an admin. One
 * transaction, so the organisation never has two owners.
 */
export async function makeOwner(db: Executor, organizationId: number, userId: number): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction
      .updateTable('organization_members')
      .set({ role: 'admin' })
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'owner')
      .where('user_id', '!=', userId)
      .execute();
    // read first: MySQL counts only changed rows as updated, so an owner made owner again would look absent
    const member = await transaction
      .selectFrom('organization_members')
      .select('role')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (member) {
      await transaction
        .updateTable('organization_members')
        .set({ role: 'owner' })
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .execute();
      return;
    }
    await transaction
      .insertInto('organization_members')
      .values({ organization_id: organizationId, user_id: userId, role: 'owner', created_time: Math.floor(Date.now() / 1000) })
      .execute();
  });
}

/** Removes the member and disables the keys they hold on the organisation's account; whether they were there. */
export async function removeMember(db: Executor, organizationId: number, userId: number): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    const result = await transaction
      .deleteFrom('organization_members')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    const account = await transaction.selectFrom('users').select('id').where('organization_id', '=', organizationId).executeTakeFirst();
    if (account) await disableMemberKeys(transaction, userId, Number(account.id));
    return Number(result.numDeletedRows) > 0;
  });
}
