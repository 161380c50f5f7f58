// What the relay's authentication reads and writes of a key (relay/tokenAuth.ts
// decides): the token and its owner by the key, and the token's status once
// it is found expired or spent.
import type { Kysely } from 'kysely';
import { TokenStatus } from '../../common/roles';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** The token of a key and its owner (undefined when the key names no token). */
export async function tokenAndOwnerByKey(db: Executor, key: string) {
  const token = await db.selectFrom('tokens').selectAll().where('key', '=', key).executeTakeFirst();
  if (!token) return undefined;
  const user = await db.selectFrom('users').selectAll().where('id', '=', Number(token.user_id)).executeTakeFirst();
  return { token, user };
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
