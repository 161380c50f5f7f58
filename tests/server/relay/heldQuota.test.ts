// What requests in flight hold is on record (held_quota) next to each balance,
// moved in the same UPDATE as the balance by both ledgers (SQLite's own, and
// Kysely's on every database), so a process that dies mid-request loses no
// user any quota: the next start gives it back. A second process on the same
// SQLite file must not give back what the first one's live requests hold.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { kyselyLedger, returnHeldQuota, type QuotaLedger, type Reservation } from '../../../server/billing/quota';
import { buildTestApp } from '../../support/app';
import { databaseTargets, type TestDatabase } from '../../support/databases';

const targets = await databaseTargets('held quota');

for (const target of targets) {
  describe.runIf(target.available)(`held quota on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let tokenId: number;

    const state = async () => {
      const user = await app.ctx.db
        .selectFrom('users')
        .select(['quota', 'held_quota', 'used_quota'])
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      const token = await app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota', 'used_quota'])
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      return {
        user: { quota: Number(user.quota), held: Number(user.held_quota), used: Number(user.used_quota) },
        token: { remain: Number(token.remain_quota), held: Number(token.held_quota), used: Number(token.used_quota) },
      };
    };
    // each reservation has its request's id: on PostgreSQL and MySQL the app ledger settles by its row
    let requests = 0;
    const limited = (amount: number): Reservation => ({ id: `held-${(requests += 1)}`, userId: 1, tokenId, limitedToken: true, amount });
    const unlimited = (amount: number): Reservation => ({ id: `held-${(requests += 1)}`, userId: 1, tokenId, limitedToken: false, amount });

    beforeAll(async () => {
      database = await target.create();
      // requests hold exactly their reservations here: PostgreSQL's and MySQL's quota leases hold more, and are checked in leaseLedger.test.ts
      app = await buildTestApp({ quotaLeases: false }, database.config);
      await app.ctx.db.updateTable('users').set({ quota: 100_000 }).where('id', '=', 1).execute();
      await app.ctx.db
        .insertInto('tokens')
        .values({
          user_id: 1,
          key: 'held-quota-key',
          name: 'held',
          status: 1,
          created_time: 0,
          accessed_time: 0,
          expired_time: -1,
          remain_quota: 5_000,
          unlimited_quota: 0,
          used_quota: 0,
        })
        .execute();
      const token = await app.ctx.db.selectFrom('tokens').select('id').where('key', '=', 'held-quota-key').executeTakeFirstOrThrow();
      tokenId = Number(token.id);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    // the app's own ledger (SQLite's prepared statements on SQLite), and Kysely's on the same database
    const ledgers: Array<[string, () => QuotaLedger]> = [
      ['the app ledger', () => app.ctx.ledger],
      ['the Kysely ledger', () => kyselyLedger(app.ctx.db)],
    ];
    for (const [name, ledgerOf] of ledgers) {
      it(`${name}: a reservation is held until its settlement or release, on the user and a limited token`, async () => {
        const ledger = ledgerOf();
        const before = await state();
        expect(before.user.held).toBe(0);
        expect(before.token.held).toBe(0);

        const seven = limited(700);
        const three = unlimited(300);
        expect(await ledger.reserve(seven)).toEqual({ ok: true });
        expect(await ledger.reserve(three)).toEqual({ ok: true });
        expect(await state()).toEqual({
          user: { quota: before.user.quota - 1000, held: 1000, used: before.user.used },
          token: { remain: before.token.remain - 700, held: 700, used: before.token.used },
        });

        // a limited token that cannot cover it: the user's part goes back, held included
        expect(await ledger.reserve(limited(before.token.remain))).toEqual({ ok: false, reason: 'token' });
        expect((await state()).user).toEqual({ quota: before.user.quota - 1000, held: 1000, used: before.user.used });

        await ledger.settle([{ reservation: seven, charge: 250, channelId: 0, countRequest: true }]);
        await ledger.release(three);
        expect(await state()).toEqual({
          user: { quota: before.user.quota - 250, held: 0, used: before.user.used + 250 },
          token: { remain: before.token.remain - 250, held: 0, used: before.token.used + 250 },
        });
      });
    }

    it('returns what a dead process left held, logs it for the user, and starts every held count from zero', async () => {
      const before = await state();
      expect(await app.ctx.ledger.reserve(limited(400))).toEqual({ ok: true });
      expect(await app.ctx.ledger.reserve(unlimited(600))).toEqual({ ok: true });
      // these two never settle: the process serving them "died"
      expect((await state()).user.held).toBe(1000);

      expect(await returnHeldQuota(app.ctx.db)).toEqual({ users: 1, quota: 1000 });
      expect(await state()).toEqual(before);
      const log = await app.ctx.db
        .selectFrom('logs')
        .selectAll()
        .where('type', '=', LogType.system)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(log).toMatchObject({ user_id: 1, username: 'root', quota: 1000 });
      expect(log.content).toContain('returned 1000 quota');

      // nothing held: nothing to return, nothing logged
      const logs = await app.ctx.db
        .selectFrom('logs')
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirstOrThrow();
      expect(await returnHeldQuota(app.ctx.db)).toEqual({ users: 0, quota: 0 });
      expect(
        await app.ctx.db
          .selectFrom('logs')
          .select((eb) => eb.fn.countAll().as('count'))
          .executeTakeFirstOrThrow(),
      ).toEqual(logs);
    });
  });
}
