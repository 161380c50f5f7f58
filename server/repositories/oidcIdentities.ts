// Queries on the links between OpenID Connect identities and accounts.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';

type Executor = Kysely<Database>;

/** The id of the account this identity signs in to, if it is linked. */
export async function findOidcLink(db: Executor, issuer: string, subject: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('oidc_identities')
    .select('user_id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
  return row ? Number(row.user_id) : undefined;
}

/** Links the identity to the account; throws when the identity is already linked (its primary key). */
export async function insertOidcLink(db: Executor, link: { issuer: string; subject: string; userId: number }): Promise<void> {
  await db
    .insertInto('oidc_identities')
    .values({ issuer: link.issuer, subject: link.subject, user_id: link.userId, created_at: Math.floor(Date.now() / 1000) })
    .execute();
}

export async function deleteOidcLink(db: Executor, issuer: string, subject: string): Promise<void> {
  await db.deleteFrom('oidc_identities').where('issuer', '=', issuer).where('subject', '=', subject).execute();
}
