// Only errors that come out of the database driver count as "the database is
// unavailable" (a 503): a refused SMTP or upstream connection with the same
// socket code is an ordinary failure. A connection that could not be had at
// all is known to have changed nothing; any later fault may have struck after
// a COMMIT, and the relay treats it as such.
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { databaseChangedNothing, isConnectionFault, isDatabaseUnavailable, tagDatabaseFaults } from '../../../server/db/faults';
import { freePort } from '../../e2e/support/gateway';

describe('database fault classification', () => {
  it('marks a refused connection from the PostgreSQL and MySQL drivers as unavailable and unreached', async () => {
    const port = await freePort(); // nothing listens there
    const dialects = [
      new PostgresDialect({
        pool: new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/none`, connectionTimeoutMillis: 2000 }),
      }),
      new MysqlDialect({ pool: createPool({ uri: `mysql://root@127.0.0.1:${port}/none`, connectTimeout: 2000 }) }),
    ];
    for (const dialect of dialects) {
      const db = new Kysely<any>({ dialect: tagDatabaseFaults(dialect) });
      const error = await sql`select 1`.execute(db).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(isDatabaseUnavailable(error), String(error)).toBe(true);
      expect(databaseChangedNothing(error)).toBe(true);
      await db.destroy();
    }
  });

  it('leaves errors from elsewhere alone, whatever their code', () => {
    const smtp = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ECONNREFUSED' });
    expect(isConnectionFault(smtp)).toBe(true);
    expect(isDatabaseUnavailable(smtp)).toBe(false);
    expect(isDatabaseUnavailable(new Error('duplicate key value violates unique constraint'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });

  it('knows the codes of a killed or shut-down connection', () => {
    expect(isConnectionFault(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(
      true,
    );
    expect(isConnectionFault(Object.assign(new Error('Connection was killed'), { code: 'ER_CONNECTION_KILLED' }))).toBe(true);
    expect(isConnectionFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionFault(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isConnectionFault(new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]))).toBe(true);
  });
});
