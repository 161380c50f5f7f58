// A lock every migrated PostgreSQL or MySQL database can give: the first row
// of Kysely's migration table, held FOR UPDATE until the caller's transaction
// ends. First starts on an empty database take it so they run one at a time
// (bootstrap.ts).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database';

/** Locks the first migration row in the caller's transaction (not on SQLite, which has no FOR UPDATE and one writer). */
export async function lockFirstMigration(transaction: Kysely<Database>): Promise<void> {
  await sql`select name from kysely_migration order by name limit 1 for update`.execute(transaction);
}
