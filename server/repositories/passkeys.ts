// Passkeys (WebAuthn credentials) and the challenges handed out for them.
// What must happen once happens in one conditional statement: a challenge is
// spent by the DELETE that removes it, a counter moves by an UPDATE that names
// the value it moves from, so two nodes racing with one assertion cannot both
// get through.
import { createHash } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/database';
import type { PasskeysTable } from '../db/schema/passkeys';

type Db = Kysely<Database> | Transaction<Database>;

export type PasskeyRow = Selectable<PasskeysTable>;
export type ChallengePurpose = 'register' | 'login';

const nowSeconds = () => Math.floor(Date.now() / 1000);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** PostgreSQL hands bigint back as numbers (database.ts), MySQL some integers as strings: every number column as a number. */
function normalised(row: PasskeyRow): PasskeyRow {
  return {
    ...row,
    id: Number(row.id),
    user_id: Number(row.user_id),
    counter: Number(row.counter),
    backed_up: Number(row.backed_up),
    created_at: Number(row.created_at),
    last_used_at: Number(row.last_used_at),
  };
}

/** The user's passkeys, oldest first. */
export async function listPasskeys(db: Db, userId: number): Promise<PasskeyRow[]> {
  const rows = await db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('id', 'asc').execute();
  return rows.map(normalised);
}

export async function hasPasskey(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('passkeys').select('id').where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

export async function findPasskeyByCredentialId(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  const row = await db.selectFrom('passkeys').selectAll().where('credential_hash', '=', sha256(credentialId)).executeTakeFirst();
  return row && normalised(row);
}

/** The WebAuthn user handle the account's passkeys carry, if it has any. */
export async function userHandleOf(db: Db, userId: number): Promise<string | undefined> {
  const row = await db.selectFrom('passkeys').select('user_handle').where('user_id', '=', userId).executeTakeFirst();
  return row?.user_handle;
}

export interface NewPasskey {
  userId: number;
  credentialId: string;
  userHandle: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  backedUp: boolean;
}

/** Stores a verified credential; false when that credential is already registered (to anyone). */
export async function insertPasskey(db: Kysely<Database>, passkey: NewPasskey): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    if (await findPasskeyByCredentialId(transaction, passkey.credentialId)) return false;
    await transaction
      .insertInto('passkeys')
      .values({
        user_id: passkey.userId,
        credential_hash: sha256(passkey.credentialId),
        credential_id: passkey.credentialId,
        user_handle: passkey.userHandle,
        public_key: passkey.publicKey,
        counter: passkey.counter,
        transports: passkey.transports.join(','),
        name: passkey.name,
        backed_up: passkey.backedUp ? 1 : 0,
        created_at: nowSeconds(),
        last_used_at: 0,
      })
      .execute();
    return true;
  });
}

/** Removes one of the user's passkeys; false when the user has none with that id. */
export async function deletePasskey(db: Db, userId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Removes every passkey of the user (root's reset); how many went. */
export async function deletePasskeysOfUser(db: Db, userId: number): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Records a sign-in: the counter moves from `fromCounter` (the value the
 * assertion was checked against) to `toCounter`. False when another sign-in
 * moved it first, or the passkey was removed meanwhile.
 */
export async function recordPasskeyUse(db: Db, id: number, fromCounter: number, toCounter: number): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter: toCounter, last_used_at: nowSeconds() })
    .where('id', '=', id)
    .where('counter', '=', fromCounter)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Keeps a challenge for `ttlSeconds`; expired ones go as new ones come. */
export async function storeChallenge(
  db: Db,
  challenge: string,
  holder: { purpose: ChallengePurpose; userId: number; userHandle?: string },
  ttlSeconds: number,
): Promise<void> {
  const now = nowSeconds();
  await db.deleteFrom('passkey_challenges').where('expires_at', '<', now).execute();
  await db
    .insertInto('passkey_challenges')
    .values({
      challenge_hash: sha256(challenge),
      purpose: holder.purpose,
      user_id: holder.userId,
      user_handle: holder.userHandle ?? '',
      expires_at: now + ttlSeconds,
    })
    .execute();
}

/**
 * Spends a challenge: the account it was handed to (0 for a passkey-first
 * sign-in) when it was handed out for `purpose`, has not expired and was not
 * spent before; otherwise undefined.
 */
export async function takeChallenge(
  db: Db,
  challenge: string,
  purpose: ChallengePurpose,
): Promise<{ userId: number; userHandle: string } | undefined> {
  const hash = sha256(challenge);
  const row = await db
    .selectFrom('passkey_challenges')
    .select(['user_id', 'user_handle', 'expires_at'])
    .where('challenge_hash', '=', hash)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  if (!row) return undefined;
  // the one DELETE that removes it is the one use; an expired row goes too
  const deleted = await db.deleteFrom('passkey_challenges').where('challenge_hash', '=', hash).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1 || Number(row.expires_at) < nowSeconds()) return undefined;
  return { userId: Number(row.user_id), userHandle: row.user_handle };
}
