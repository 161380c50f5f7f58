// Server-side sessions (services/session.ts): each row is a session's id
// hash, its user, its expiry, whether it was revoked and whether it still
// waits for its second factor.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** The session with this id hash, as the checks read it. */
export function findSession(db: Executor, idHash: string) {
  return db.selectFrom('sessions').select(['user_id', 'revoked', 'expires_at', 'partial']).where('id_hash', '=', idHash).executeTakeFirst();
}

/** Revokes the session with this id hash. */
export async function revokeSessionByHash(db: Executor, idHash: string): Promise<void> {
  await db.updateTable('sessions').set({ revoked: 1 }).where('id_hash', '=', idHash).execute();
}

/** Revokes every live session of the user but the one with `exceptIdHash`. */
export async function revokeSessionsOfUser(db: Executor, userId: number, exceptIdHash?: string): Promise<void> {
  let query = db.updateTable('sessions').set({ revoked: 1 }).where('user_id', '=', userId).where('revoked', '=', 0);
  if (exceptIdHash) query = query.where('id_hash', '!=', exceptIdHash);
  await query.execute();
}

/** Deletes the sessions that expired before `now` (unix seconds). */
export async function deleteExpiredSessions(db: Executor, now: number): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<', now).execute();
}

export interface NewSession {
  idHash: string;
  userId: number;
  createdAt: number;
  expiresAt: number;
  partial: boolean;
}

/** Writes a new, unrevoked session. */
export async function insertSession(db: Executor, session: NewSession): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      id_hash: session.idHash,
      user_id: session.userId,
      created_at: session.createdAt,
      expires_at: session.expiresAt,
      revoked: 0,
      partial: session.partial ? 1 : 0,
    })
    .execute();
}
