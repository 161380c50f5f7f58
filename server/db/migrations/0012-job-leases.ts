// Frozen: the leases of the background jobs. Every worker of every node runs
// the same timers; before a job runs, its worker claims the job's row here
// (server/jobs/jobLeases.ts), so a job runs on one worker of one node at a
// time. `holder` is the claiming node's id, `expires_at` unix milliseconds;
// `detail` carries what the holder wants the other workers to read (the
// progress of a test-all run, for a console poll that lands on another worker).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_leases')
    .addColumn('name', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('holder', 'varchar(64)', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('detail', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_leases').execute();
}
