// One-time codes: stored hashed, expiring, limited to a few wrong guesses, and
// consumed by their first successful use.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

export type CodePurpose = 'verify' | 'reset';
export const MAX_CODE_ATTEMPTS = 5;

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

/** Replaces any earlier code for the same purpose and address. */
export async function storeCode(db: Kysely<Database>, purpose: CodePurpose, target: string, code: string, ttlSeconds: number): Promise<void> {
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

/** True once per valid code; a wrong guess counts against the code. */
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
  if (Number(row.attempts) + 1 >= MAX_CODE_ATTEMPTS) {
    await db.deleteFrom('verification_codes').where('id', '=', row.id).execute();
  } else {
    await db.updateTable('verification_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('id', '=', row.id).execute();
  }
  return false;
}
