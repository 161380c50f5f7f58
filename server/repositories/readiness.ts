// The readiness probe's one query (plugins/readiness.ts): a trivial round
// trip that proves the database answers, whatever its tables hold.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database';

/** Asks the database for `select 1`; resolves once it answers. */
export function pingDatabase(db: Kysely<Database>) {
  return sql`select 1`.execute(db);
}
