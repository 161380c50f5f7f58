// The background jobs' leases (migration 0012): who may run a job, until when.
// A claim is one conditional UPDATE (the row exists and has run out) or one
// INSERT that gives way to a row already there, so two workers claiming at
// once never both win: PostgreSQL and MySQL re-check the UPDATE's condition
// on the row another transaction just changed, and the primary key settles
// two INSERTs; SQLite runs one writer at a time. Times are unix milliseconds
// of the claiming process's clock: the nodes' clocks must agree to within a
// fraction of a lease (as for relay_nodes).
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/database';
import type { DatabaseConfig } from '../config';
import type { JobLeasesTable } from '../db/schema/jobLeases';

type Executor = Kysely<Database>;

/** A lease as its store gives it: the row's holder and detail, its expiry (unix ms) as a number. */
export type JobLeaseRow = Pick<Selectable<JobLeasesTable>, 'holder' | 'detail'> & { expiresAt: JobLeasesTable['expires_at'] };

/** What holds the leases: these queries, or a map in memory where the process is alone (SQLite). */
export interface JobLeaseStore {
  /** Takes `name` for `holder` until `until` when nobody holds it (no row, or its lease ran out before `now`); whether it did. */
  claim(name: string, holder: string, now: number, until: number, detail?: string): Promise<boolean>;
  /** Moves the lease's end to `until` (and sets `detail` when given) while `holder` holds it; whether it still did. */
  extend(name: string, holder: string, until: number, detail?: string): Promise<boolean>;
  read(name: string): Promise<JobLeaseRow | undefined>;
}

export function sqlJobLeases(db: Executor, dialect: DatabaseConfig['dialect']): JobLeaseStore {
  return {
    async claim(name, holder, now, until, detail) {
      const taken = await db
        .updateTable('job_leases')
        .set({ holder, expires_at: until, detail: detail ?? null })
        .where('name', '=', name)
        .where('expires_at', '<', now)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) > 0) return true;
      const insert = db.insertInto('job_leases').values({ name, holder, expires_at: until, detail: detail ?? null });
      // MySQL has no ON CONFLICT; INSERT IGNORE skips the duplicate key the same way
      const inserted = await (
        dialect === 'mysql' ? insert.ignore() : insert.onConflict((conflict) => conflict.column('name').doNothing())
      ).executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async extend(name, holder, until, detail) {
      // MySQL counts matched rows here (mysql2 connects with FOUND_ROWS), so an unchanged row still says "held"
      const extended = await db
        .updateTable('job_leases')
        .set(detail === undefined ? { expires_at: until } : { expires_at: until, detail })
        .where('name', '=', name)
        .where('holder', '=', holder)
        .executeTakeFirst();
      return Number(extended.numUpdatedRows) > 0;
    },
    async read(name) {
      const row = await db.selectFrom('job_leases').select(['holder', 'expires_at', 'detail']).where('name', '=', name).executeTakeFirst();
      return row && { holder: row.holder, expiresAt: Number(row.expires_at), detail: row.detail };
    },
  };
}

/** The same rules in memory, for a process that is alone on its database (SQLite, whose instance lock is the lease). */
export function localJobLeases(): JobLeaseStore {
  const rows = new Map<string, JobLeaseRow>();
  return {
    claim(name, holder, now, until, detail) {
      const row = rows.get(name);
      if (row && row.expiresAt >= now) return Promise.resolve(false);
      rows.set(name, { holder, expiresAt: until, detail: detail ?? null });
      return Promise.resolve(true);
    },
    extend(name, holder, until, detail) {
      const row = rows.get(name);
      if (!row || row.holder !== holder) return Promise.resolve(false);
      rows.set(name, { holder, expiresAt: until, detail: detail ?? row.detail });
      return Promise.resolve(true);
    },
    read(name) {
      const row = rows.get(name);
      return Promise.resolve(row && { ...row });
    },
  };
}
