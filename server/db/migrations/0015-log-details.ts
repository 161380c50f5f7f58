// Frozen: what a relayed request's log says beyond its columns (`other`, JSON:
// the protocol, the pricing and its formula, every channel tried), and the
// indexes the log list reads by: its order by time (created_at, id), so rows
// imported or back-dated fall in place, and its lookup by request id. The
// composite index serves everything the one on created_at alone did.
import { MysqlAdapter, type Kysely } from 'kysely';

/** MySQL names the table of an index it drops; SQLite and PostgreSQL refuse the clause. */
function dropIndex(db: Kysely<any>, name: string) {
  const dropped = db.schema.dropIndex(name);
  return db.getExecutor().adapter instanceof MysqlAdapter ? dropped.on('logs') : dropped;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('other', 'text').execute();
  await db.schema.createIndex('logs_created_at_id_idx').on('logs').columns(['created_at', 'id']).execute();
  await dropIndex(db, 'logs_created_at_idx').execute();
  await db.schema.createIndex('logs_request_id_idx').on('logs').column('request_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropIndex(db, 'logs_request_id_idx').execute();
  await db.schema.createIndex('logs_created_at_idx').on('logs').column('created_at').execute();
  await dropIndex(db, 'logs_created_at_id_idx').execute();
  await db.schema.alterTable('logs').dropColumn('other').execute();
}
