// Frozen: the X-Request-Id of a relayed request on its consume log, so an
// operator can go from a client's complaint (or an upstream's log) to the row.
// Nullable: other logs, and those written before, have none.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('request_id', 'varchar(128)').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').dropColumn('request_id').execute();
}
