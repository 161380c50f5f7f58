// An organisation's money and keys. Its balance is an account row in users
// (organization_id set; no password, no access token, so it never signs in):
// the relay reserves, settles and logs against it as against anyone, so the
// ledger needs nothing new. Its keys are tokens of that account, each with the
// member it belongs to (tokens.member_user_id; null for a service key).
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseConfig } from '../config';
import { insertReturningId, type Database } from '../db/database';
import { LogType, TokenStatus, UserStatus } from '../../common/roles';
import { OrganizationStatus } from '../../common/organizations';
import { insertLog } from './logs';
import type { PageWindow } from './pagination';
import type { TokenFields, TokenRow } from './tokens';
import type { UserRow } from './users';

type Executor = Kysely<Database>;

/** The account's username: a colon no registration allows, so it never meets a person's. */
export const accountUsername = (organizationId: number) => `org:${organizationId}`;

/** Opens the organisation's account (inside the transaction that creates the organisation). */
export async function createAccount(
  transaction: Transaction<Database>,
  dialect: DatabaseConfig['dialect'],
  organizationId: number,
  status: number,
): Promise<number> {
  return insertReturningId(
    dialect,
    transaction.insertInto('users').values({
      username: accountUsername(organizationId),
      password_hash: '',
      display_name: accountUsername(organizationId),
      role: 1,
      status: status === OrganizationStatus.enabled ? UserStatus.enabled : UserStatus.disabled,
      email: '',
      github_id: '',
      wechat_id: '',
      access_token_hash: null,
      quota: 0,
      used_quota: 0,
      request_count: 0,
      group: 'default',
      aff_code: null,
      inviter_id: 0,
      session_version: 0,
      created_at: Math.floor(Date.now() / 1000),
      organization_id: organizationId,
    }),
  );
}

export function accountOf(db: Executor, organizationId: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
}

/** A disabled organisation's keys stop with its account (the relay refuses a key whose account is disabled). */
export async function setAccountStatus(db: Executor, organizationId: number, organizationStatus: number): Promise<void> {
  const status = organizationStatus === OrganizationStatus.enabled ? UserStatus.enabled : UserStatus.disabled;
  await db.updateTable('users').set({ status }).where('organization_id', '=', organizationId).execute();
}

/** The account's periodic budget (common/budgets.ts); a budget of another period starts with nothing spent. */
export async function setAccountBudget(
  db: Executor,
  account: UserRow,
  budget: { budget_period: string; budget_quota: number },
): Promise<void> {
  const reset = budget.budget_period !== account.budget_period ? { period_spent: 0, period_start: 0 } : {};
  await db
    .updateTable('users')
    .set({ ...budget, ...reset })
    .where('id', '=', Number(account.id))
    .execute();
}

/**
 * Adds to the organisation's balance in place and logs it as a top-up, in one
 * transaction: per account, what it started with plus its top-ups less its
 * logged charges is its balance.
 */
export async function topUpAccount(db: Executor, account: UserRow, amount: number, byUsername: string): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '+', amount) }))
      .where('id', '=', Number(account.id))
      .execute();
    await insertLog(transaction, {
      userId: Number(account.id),
      username: account.username,
      type: LogType.topup,
      content: `${byUsername} topped up the organization: ${amount} quota`,
      quota: amount,
    });
  });
}

/** Deletes the account and its keys; its logs stay for accounting (as a deleted user's do). */
export async function deleteAccount(transaction: Transaction<Database>, organizationId: number): Promise<void> {
  const account = await transaction.selectFrom('users').select('id').where('organization_id', '=', organizationId).executeTakeFirst();
  if (!account) return;
  await transaction.deleteFrom('tokens').where('user_id', '=', Number(account.id)).execute();
  await transaction.deleteFrom('users').where('id', '=', Number(account.id)).execute();
}

/** The account's keys: every one, or one member's only. */
export function listAccountTokens(db: Executor, accountId: number, window: PageWindow, memberUserId?: number): Promise<TokenRow[]> {
  let query = db.selectFrom('tokens').selectAll().where('user_id', '=', accountId);
  if (memberUserId !== undefined) query = query.where('member_user_id', '=', memberUserId);
  return query.orderBy('id', 'desc').limit(window.limit).offset(window.offset).execute();
}

export function findAccountToken(db: Executor, accountId: number, tokenId: number): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('id', '=', tokenId).where('user_id', '=', accountId).executeTakeFirst();
}

/** These keys of the account, by id: their name and the member holding them (null: a service key). A deleted key is missing. */
export async function accountKeyHolders(
  db: Executor,
  accountId: number,
  tokenIds: readonly number[],
): Promise<Map<number, { name: string; memberUserId: number | null }>> {
  if (tokenIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('tokens')
    .select(['id', 'name', 'member_user_id'])
    .where('user_id', '=', accountId)
    .where('id', 'in', [...tokenIds])
    .execute();
  return new Map(
    rows.map((row) => [Number(row.id), { name: row.name, memberUserId: row.member_user_id === null ? null : Number(row.member_user_id) }]),
  );
}

/** A new key of the account for a member (or, with null, for the organisation itself); its id. */
export function createAccountToken(
  db: Executor,
  dialect: DatabaseConfig['dialect'],
  accountId: number,
  memberUserId: number | null,
  key: string,
  fields: TokenFields,
): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  return insertReturningId(
    dialect,
    db.insertInto('tokens').values({
      ...fields,
      user_id: accountId,
      member_user_id: memberUserId,
      key,
      status: TokenStatus.enabled,
      created_time: now,
      accessed_time: now,
      used_quota: 0,
    }),
  );
}

export async function setAccountTokenStatus(db: Executor, accountId: number, tokenId: number, status: number): Promise<void> {
  await db.updateTable('tokens').set({ status }).where('id', '=', tokenId).where('user_id', '=', accountId).execute();
}

export async function deleteAccountToken(db: Executor, accountId: number, tokenId: number): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', tokenId).where('user_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Disables the enabled keys a member holds on organisations' accounts: those
 * of one organisation when they leave it, all of them when the user is
 * deleted. A disabled key is never charged again (the relay refuses it).
 */
export async function disableMemberKeys(db: Executor, memberUserId: number, accountId?: number): Promise<number> {
  let query = db
    .updateTable('tokens')
    .set({ status: TokenStatus.disabled })
    .where('member_user_id', '=', memberUserId)
    .where('status', '=', TokenStatus.enabled);
  if (accountId !== undefined) query = query.where('user_id', '=', accountId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}
