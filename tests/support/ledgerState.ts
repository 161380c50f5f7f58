// The ledger of one user and one key as the database has it, for the tests
// that check it is exact after kills and restarts: balances, what is held,
// the key's consume logs and the reservation (or lease) rows still held.
import type { Kysely } from 'kysely';
import { LogType } from '../../common/roles';
import type { Database } from '../../server/db/database';

export async function ledgerState(db: Kysely<Database>, userId: number, tokenId: number) {
  const user = await db.selectFrom('users').select(['quota', 'held_quota']).where('id', '=', userId).executeTakeFirstOrThrow();
  const token = await db.selectFrom('tokens').select(['remain_quota', 'held_quota']).where('id', '=', tokenId).executeTakeFirstOrThrow();
  const logged = await db
    .selectFrom('logs')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
    .where('type', '=', LogType.consume)
    .where('token_id', '=', tokenId)
    .executeTakeFirstOrThrow();
  const held = await db
    .selectFrom('reservations')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('state', '=', 1)
    .executeTakeFirstOrThrow();
  return {
    quota: Number(user.quota),
    userHeld: Number(user.held_quota),
    remain: Number(token.remain_quota),
    tokenHeld: Number(token.held_quota),
    logged: Number(logged.sum),
    reservationsHeld: Number(held.count),
  };
}
