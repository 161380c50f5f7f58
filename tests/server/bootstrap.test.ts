// The root account when several workers or nodes start at once on one empty database: exactly one creates it, and
// it is the users table's first row (id 1, as one-api's root is), whichever insert reaches the database first.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRootUser } from '../../server/bootstrap';
import { migrateToLatest, openDatabase, type Database } from '../../server/db/database';
import { testConfig } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = (await databaseTargets('root bootstrap')).filter((target) => target.name !== 'sqlite');

for (const target of targets) {
  describe.runIf(target.available)(`root bootstrap on ${target.name}, four nodes at once`, () => {
    let database: TestDatabase;
    const pools: Kysely<Database>[] = [];

    beforeAll(async () => {
      database = await target.create();
      const first = (await openDatabase(database.config)).db;
      await migrateToLatest(first);
      pools.push(first);
      for (let node = 1; node < 4; node += 1) pools.push((await openDatabase(database.config)).db);
    });
    afterAll(async () => {
      for (const pool of pools) await pool.destroy();
      await database?.drop();
    });

    it('creates root once, as user 1, in every round of simultaneous starts', async () => {
      const config = testConfig({}, database.config);
      for (let round = 0; round < 5; round += 1) {
        // two starts per pool, all at once, on an empty users table
        const results = await Promise.all(Array.from({ length: 8 }, (_, index) => ensureRootUser(pools[index % 4], config)));
        expect(results.filter((result) => result.created)).toHaveLength(1);
        const users = await pools[0].selectFrom('users').select(['id', 'username', 'role']).execute();
        expect(users.map((user) => ({ ...user, id: Number(user.id) }))).toEqual([{ id: 1, username: 'root', role: 100 }]);
        // empty again, its ids starting from 1 again, for the next round
        await pools[0].deleteFrom('users').execute();
        if (target.name === 'postgres') await sql`select setval(pg_get_serial_sequence('users', 'id'), 1, false)`.execute(pools[0]);
        else await sql`alter table users auto_increment = 1`.execute(pools[0]);
      }
    });
  });
}
