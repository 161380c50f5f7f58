// Queries on users. Every function takes the database or a transaction.
import { budgetOf } from './budgets';
import type { Kysely, Selectable } from 'kysely';
import type { UserRecord } from '../../common/records';
import type { BudgetFields } from '../../common/budgets';
import { Role, TokenStatus, UserStatus } from '../../common/roles';
import { insertReturningId, type Database } from '../db/database';
import { idOf, orderedBy, SEARCH_LIMIT, startsWith, type ListSort, type PageWindow } from './pagination';
import type { DatabaseConfig } from '../config';
import type { UsersTable } from '../db/schema/users';

export type UserRow = Selectable<UsersTable>;
type Executor = Kysely<Database>;

/** A person by id: an organisation's account (organization_id set) is no one to sign in as or administer. */
export function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).where('organization_id', 'is', null).executeTakeFirst();
}

/** A person by username (findUserByUsername also finds organisations' accounts, whose names are taken too). */
export function findPersonByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username).where('organization_id', 'is', null).executeTakeFirst();
}

export function findUserByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

export function findUserByAccessTokenHash(db: Executor, hash: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('access_token_hash', '=', hash).executeTakeFirst();
}

export function findUserByAffCode(db: Executor, affCode: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('aff_code', '=', affCode).executeTakeFirst();
}

export function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

/** Whether an account other than `exceptUserId` already has this address. */
export async function emailTaken(db: Executor, email: string, exceptUserId?: number): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where('email', '=', email);
  if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Gives the user this invite code unless one is already set; throws when another user holds it. */
export async function setAffCodeIfUnset(db: Executor, id: number, code: string): Promise<void> {
  await db.updateTable('users').set({ aff_code: code }).where('id', '=', id).where('aff_code', 'is', null).execute();
}

/** The account bound to this GitHub or WeChat identity. */
export function findUserByIdentity(db: Executor, column: 'github_id' | 'wechat_id', identity: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where(column, '=', identity).executeTakeFirst();
}

export async function bindIdentity(db: Executor, id: number, column: 'github_id' | 'wechat_id', identity: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ [column]: identity })
    .where('id', '=', id)
    .execute();
}

/** Adds to a user's balance in place, so a concurrent charge is not lost. */
export async function addUserQuota(db: Executor, id: number, amount: number): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', amount) }))
    .where('id', '=', id)
    .execute();
}

/** A user's balance, or undefined for a user that no longer exists. */
export async function userQuota(db: Executor, id: number): Promise<number | undefined> {
  const row = await db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirst();
  return row?.quota;
}

/** The usernames of these users, by id (a deleted user is missing). */
export async function usernames(db: Executor, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [Number(row.id), row.username]));
}

/** The user list's facets. */
export interface UserFilter {
  role?: number;
  status?: number;
}

const usersWhere = (db: Executor, filter: UserFilter) => {
  // an organisation's account is no person: it is in no list of users
  let query = db.selectFrom('users').selectAll().where('organization_id', 'is', null);
  if (filter.role !== undefined) query = query.where('role', '=', filter.role);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  return query;
};

export function listUsers(db: Executor, window: PageWindow, sort: ListSort, filter: UserFilter = {}): Promise<UserRow[]> {
  return orderedBy(usersWhere(db, filter), sort).limit(window.limit).offset(window.offset).execute();
}

export function searchUsers(db: Executor, keyword: string, sort: ListSort, filter: UserFilter = {}): Promise<UserRow[]> {
  const id = idOf(keyword);
  const query = usersWhere(db, filter).where((eb) =>
    eb.or([
      ...(id === undefined ? [] : [eb('id', '=', id)]),
      startsWith('username', keyword),
      startsWith('email', keyword),
      startsWith('display_name', keyword),
    ]),
  );
  return orderedBy(query, sort).limit(SEARCH_LIMIT).execute();
}

/** Whether some active root account has a GitHub or WeChat identity bound (the ways it could sign in without a password). */
export async function rootSignInBindings(db: Executor): Promise<{ github: boolean; wechat: boolean }> {
  const roots = await db
    .selectFrom('users')
    .select(['github_id', 'wechat_id'])
    .where('role', '>=', Role.root)
    .where('status', '=', UserStatus.enabled)
    .execute();
  return { github: roots.some((row) => row.github_id !== ''), wechat: roots.some((row) => row.wechat_id !== '') };
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('organization_id', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A new account in its callers' words (defaults left out); createUser maps it onto the users row, which the table's type checks. */
export interface NewUser {
  username: string;
  passwordHash: string;
  displayName?: string;
  role?: number;
  quota?: number;
  inviterId?: number;
  email?: string;
  /** 'default' unless given (an admin's create names an existing group). */
  group?: string;
  /** A budget that resets, as parseBudget (common/budgets.ts) accepted it; none unless given. */
  budget?: BudgetFields;
}

export function createUser(db: Executor, dialect: DatabaseConfig['dialect'], user: NewUser): Promise<number> {
  return insertReturningId(
    dialect,
    db.insertInto('users').values({
      username: user.username,
      password_hash: user.passwordHash,
      display_name: user.displayName ?? user.username,
      role: user.role ?? 1,
      status: 1,
      email: user.email ?? '',
      github_id: '',
      wechat_id: '',
      access_token_hash: null,
      quota: user.quota ?? 0,
      used_quota: 0,
      request_count: 0,
      group: user.group ?? 'default',
      budget_period: user.budget?.budget_period ?? '',
      budget_quota: user.budget?.budget_quota ?? 0,
      aff_code: null,
      inviter_id: user.inviterId ?? 0,
      session_version: 0,
      created_at: Math.floor(Date.now() / 1000),
    }),
  );
}

export type UserPatch = Partial<
  Pick<
    UserRow,
    | 'username'
    | 'display_name'
    | 'password_hash'
    | 'email'
    | 'role'
    | 'status'
    | 'quota'
    | 'group'
    | 'session_version'
    | 'access_token_hash'
    | 'aff_code'
    | 'concurrency_limit'
    | 'rpm_limit'
    | 'tpm_limit'
    | 'budget_period'
    | 'budget_quota'
    | 'period_spent'
    | 'period_start'
  >
>;

export async function updateUser(db: Executor, id: number, patch: UserPatch): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  await db.updateTable('users').set(patch).where('id', '=', id).execute();
}

/** Deletes the user and the relay tokens that would otherwise be orphaned; logs stay for accounting. */
export async function deleteUser(db: Executor, id: number): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('tokens').where('user_id', '=', id).execute();
    await transaction.deleteFrom('organization_members').where('user_id', '=', id).execute();
    // the keys they held on organisations' accounts stop spending those organisations' money
    await transaction.updateTable('tokens').set({ status: TokenStatus.disabled }).where('member_user_id', '=', id).execute();
    await transaction.deleteFrom('two_factor_recovery_codes').where('user_id', '=', id).execute();
    await transaction.deleteFrom('two_factor').where('user_id', '=', id).execute();
    await transaction.deleteFrom('oidc_identities').where('user_id', '=', id).execute();
    await transaction.deleteFrom('passkeys').where('user_id', '=', id).execute();
    await transaction.deleteFrom('users').where('id', '=', id).execute();
  });
}

/** The user as the console may see it: no password hash, no access token; with the operator's time zone, the spend of their budget this period. */
export function toUserRecord(row: UserRow, budgetZone?: string): UserRecord {
  return {
    id: Number(row.id),
    username: row.username,
    display_name: row.display_name,
    email: row.email,
    github_id: row.github_id,
    wechat_id: row.wechat_id,
    role: Number(row.role),
    status: Number(row.status),
    quota: Number(row.quota),
    used_quota: Number(row.used_quota),
    request_count: Number(row.request_count),
    group: row.group,
    aff_code: row.aff_code ?? '',
    inviter_id: Number(row.inviter_id),
    concurrency_limit: Number(row.concurrency_limit ?? 0),
    rpm_limit: row.rpm_limit === null || row.rpm_limit === undefined ? null : Number(row.rpm_limit),
    tpm_limit: row.tpm_limit === null || row.tpm_limit === undefined ? null : Number(row.tpm_limit),
    ...budgetOf(row, budgetZone),
  };
}
