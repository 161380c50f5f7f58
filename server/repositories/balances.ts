// What a user, and a limited key, have and hold right now: read only off the
// hot path, when a reservation was refused or its output limit is lowered.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

export interface Balances {
  /** What a new reservation could take at most. */
  available: number;
  userHeld: number;
  tokenHeld: number;
}

export async function balancesOf(
  db: Kysely<Database>,
  payer: { userId: number; tokenId: number; limitedToken: boolean },
): Promise<Balances> {
  const user = await db.selectFrom('users').select(['quota', 'held_quota']).where('id', '=', payer.userId).executeTakeFirst();
  const token = payer.limitedToken
    ? await db.selectFrom('tokens').select(['remain_quota', 'held_quota']).where('id', '=', payer.tokenId).executeTakeFirst()
    : undefined;
  const userQuota = Number(user?.quota ?? 0);
  return {
    available: Math.max(0, payer.limitedToken ? Math.min(userQuota, Number(token?.remain_quota ?? 0)) : userQuota),
    userHeld: Number(user?.held_quota ?? 0),
    tokenHeld: Number(token?.held_quota ?? 0),
  };
}
