// What the notices read of the users table: the balance behind the
// low-balance e-mail (billing/quotaReminder.ts) and the user.balance_low
// webhook (webhooks/triggers.ts), and the root account's address
// (channels/autoDisable.ts).
import type { Kysely } from 'kysely';
import { Role } from '../../common/roles';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** A user's address, name and balance columns, for the low-balance e-mail. */
export function userMailAndBalance(db: Executor, userId: number) {
  return db.selectFrom('users').select(['email', 'quota', 'held_quota', 'username']).where('id', '=', userId).executeTakeFirst();
}

/** A user's name and balance columns, for the user.balance_low event. */
export function userBalance(db: Executor, userId: number) {
  return db.selectFrom('users').select(['quota', 'held_quota', 'username']).where('id', '=', userId).executeTakeFirst();
}

/** The first root account's e-mail row (the notices to root go there). */
export function rootEmail(db: Executor) {
  return db.selectFrom('users').select('email').where('role', '>=', Role.root).orderBy('id').executeTakeFirst();
}
