// One-time codes: stored hashed, expiring, and consumed by their first
// successful use. A wrong guess never touches the stored code: if it did, a
// stranger could burn anyone's pending reset link or e-mail code by guessing
// badly. Reset tokens are 256-bit random, so guessing is hopeless; the short
// e-mail codes are guarded by a limit per requester (CODE_GUESSES_PER_REQUESTER
// per IP and address, in the routes), which burns nobody else's code.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

export type CodePurpose = 'verify' | 'reset';
/** Guesses at one address's e-mail code that one IP may make while a code lives. */
export const CODE_GUESSES_PER_REQUESTER = 5;

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

/** Replaces any earlier code for the same purpose and address. */
export async function storeCode(
  db: Kysely<Database>,
  purpose: CodePurpose,
  target: string,
  code: string,
  ttlSeconds: number,
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('verification_codes').where('purpose', '=', purpose).where('target', '=', target).execute();
    await transaction.deleteFrom('verification_codes').where('expires_at', '<', now).execute();
    await transaction
      .insertInto('verification_codes')
      .values({ purpose, target, code_hash: hashCode(code), attempts: 0, expires_at: now + ttlSeconds, created_at: now })
      .execute();
  });
}

/** True once per valid code; a wrong guess changes nothing. */
export async function consumeCode(db: Kysely<Database>, purpose: CodePurpose, target: string, code: string): Promise<boolean> {
  if (!code) return false;
  const now = Math.floor(Date.now() / 1000);
  const row = await db
    .selectFrom('verification_codes')
    .selectAll()
    .where('purpose', '=', purpose)
    .where('target', '=', target)
    .where('expires_at', '>=', now)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!row) return false;
  const given = Buffer.from(hashCode(code));
  const expected = Buffer.from(row.code_hash);
  if (given.length === expected.length && timingSafeEqual(given, expected)) {
    // the conditional delete makes two racing uses of one code succeed once
    const deleted = await db.deleteFrom('verification_codes').where('id', '=', row.id).executeTakeFirst();
    return Number(deleted.numDeletedRows) === 1;
  }
  return false;
}
