// What the relay's authentication reads and writes of a key (relay/tokenAuth.ts
// decides): the token and its owner by the key, and the token's status once
// it is found expired or spent.
import type { Kysely, Selectable } from 'kysely';
import { TokenStatus } from '../../common/roles';
import type { Database } from '../db/database';
import type { OrganizationMembersTable } from '../db/schema/organizationMembers';

type Executor = Kysely<Database>;

/** The caps of the member who holds an organisation's key, and what they spent (billing/budgets.ts). */
export type MemberCapRow = Pick<
  Selectable<OrganizationMembersTable>,
  | 'organization_id'
  | 'user_id'
  | 'created_time'
  | 'cap_quota'
  | 'spent_quota'
  | 'cap_period'
  | 'cap_period_quota'
  | 'period_spent'
  | 'period_start'
>;

/**
 * The token of a key and its owner (undefined when the key names no token);
 * for a member's key of an organisation, also the member's caps (absent for a
 * service key, or when the member has left).
 */
export async function tokenAndOwnerByKey(db: Executor, key: string) {
  const token = await db.selectFrom('tokens').selectAll().where('key', '=', key).executeTakeFirst();
  if (!token) return undefined;
  const user = await db.selectFrom('users').selectAll().where('id', '=', Number(token.user_id)).executeTakeFirst();
  const organizationId = user?.organization_id;
  if (token.member_user_id === null || organizationId === null || organizationId === undefined) return { token, user };
  const member = await db
    .selectFrom('organization_members')
    .select([
      'organization_id',
      'user_id',
      'created_time',
      'cap_quota',
      'spent_quota',
      'cap_period',
      'cap_period_quota',
      'period_spent',
      'period_start',
    ])
    .where('organization_id', '=', Number(organizationId))
    .where('user_id', '=', Number(token.member_user_id))
    .executeTakeFirst();
  return { token, user, member };
}

/** Records a token as expired. */
export async function markTokenExpired(db: Executor, tokenId: number): Promise<void> {
  await db.updateTable('tokens').set({ status: TokenStatus.expired }).where('id', '=', tokenId).execute();
}

/**
 * Marks an enabled limited token exhausted if its balance, with nothing held
 * by requests in flight, is spent as the database says at this moment;
 * whether this call flipped it.
 */
export async function markTokenExhaustedIfSpent(db: Executor, tokenId: number): Promise<boolean> {
  const marked = await db
    .updateTable('tokens')
    .set({ status: TokenStatus.exhausted })
    .where('id', '=', tokenId)
    .where('status', '=', TokenStatus.enabled)
    .where('unlimited_quota', '!=', 1)
    .where((eb) => eb(eb('remain_quota', '+', eb.ref('held_quota')), '<=', 0))
    .executeTakeFirst();
  return Number(marked.numUpdatedRows) > 0;
}
