// Reservation rows and the lease rule. On PostgreSQL and MySQL each
// reservation is a row: a batch of settlements applied twice (a retry after an
// ambiguous COMMIT) changes the balances once, and what a node that stopped
// renewing its lease held is given back by another node exactly once, with a
// log line; a late settlement of such a reservation charges only. On SQLite a
// settlement and its consume logs commit together or not at all.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { renewLease, sweepDeadNodes } from '../../../server/relay/nodeLease';
import { kyselyLedger, type Reservation, type Settlement } from '../../../server/billing/quota';
import { buildTestApp } from '../../support/app';
import { databaseTargets, type TestDatabase } from '../../support/databases';

const targets = await databaseTargets('reservation rows');

const consumeLog = (reservation: Reservation, charge: number) => ({
  userId: reservation.userId,
  username: 'root',
  type: LogType.consume,
  content: 'test settlement',
  quota: charge,
  tokenId: reservation.tokenId,
  modelName: 'gpt-3.5-turbo',
});

for (const target of targets) {
  describe.runIf(target.available)(`reservations and their settlement on ${target.name}`, () => {
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
        .select(['remain_quota', 'held_quota'])
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      const logs = await app.ctx.db.selectFrom('logs').select(['type', 'quota', 'content']).orderBy('id').execute();
      return {
        quota: Number(user.quota),
        userHeld: Number(user.held_quota),
        used: Number(user.used_quota),
        remain: Number(token.remain_quota),
        tokenHeld: Number(token.held_quota),
        consumed: logs.filter((log) => Number(log.type) === LogType.consume).reduce((sum, log) => sum + Number(log.quota), 0),
        consumeLogs: logs.filter((log) => Number(log.type) === LogType.consume).length,
        systemLogs: logs
          .filter((log) => Number(log.type) === LogType.system)
          .map((log) => ({ quota: Number(log.quota), content: log.content })),
      };
    };

    let requests = 0;
    const reservation = (amount: number): Reservation => ({
      id: `test-${target.name}-${(requests += 1)}`,
      userId: 1,
      tokenId,
      limitedToken: true,
      amount,
    });

    beforeAll(async () => {
      database = await target.create();
      // a reservation row per request (QUOTA_LEASES=off); the leases' rows are checked in leaseLedger.test.ts
      app = await buildTestApp({ quotaLeases: false }, database.config);
      await app.ctx.db.updateTable('users').set({ quota: 100_000 }).where('id', '=', 1).execute();
      await app.ctx.db
        .insertInto('tokens')
        .values({
          user_id: 1,
          key: 'reservation-rows-key',
          name: 'rows',
          status: 1,
          created_time: 0,
          accessed_time: 0,
          expired_time: -1,
          remain_quota: 50_000,
          unlimited_quota: 0,
          used_quota: 0,
        })
        .execute();
      tokenId = Number(
        (await app.ctx.db.selectFrom('tokens').select('id').where('key', '=', 'reservation-rows-key').executeTakeFirstOrThrow()).id,
      );
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    if (target.name === 'sqlite') {
      it('a settlement and its consume logs commit together: a log that cannot be written takes the charge back with it', async () => {
        const ledger = app.ctx.ledger;
        const held = reservation(1000);
        expect(await ledger.reserve(held)).toEqual({ ok: true });
        const before = await state();
        await app.ctx.db.executeQuery({
          sql: "create trigger refuse_logs before insert on logs begin select raise(abort, 'logs refused'); end",
          parameters: [],
          query: { kind: 'RawNode' } as never,
        } as never);
        try {
          await expect(
            ledger.settle([{ reservation: held, charge: 400, channelId: 0, countRequest: true, log: consumeLog(held, 400) }]),
          ).rejects.toThrow(/logs refused/);
          expect(await state()).toEqual(before);
        } finally {
          await app.ctx.db.executeQuery({ sql: 'drop trigger refuse_logs', parameters: [], query: { kind: 'RawNode' } as never } as never);
        }
        // the retry (the settlement queue keeps a failed batch) writes both
        await ledger.settle([{ reservation: held, charge: 400, channelId: 0, countRequest: true, log: consumeLog(held, 400) }]);
        const after = await state();
        expect(after.quota).toBe(before.quota + 1000 - 400);
        expect(after.consumed).toBe(before.consumed + 400);
        expect([after.userHeld, after.tokenHeld]).toEqual([0, 0]);
      });
      return;
    }

    it('a batch settled twice (its COMMIT answer lost, so retried) changes balances and logs once', async () => {
      const ledger = app.ctx.ledger;
      const before = await state();
      const held = [reservation(1000), reservation(2000), reservation(500)];
      for (const one of held) expect(await ledger.reserve(one)).toEqual({ ok: true });
      const batch: Settlement[] = held.map((one, index) => ({
        reservation: one,
        charge: 100 * (index + 1),
        channelId: 0,
        countRequest: true,
        log: consumeLog(one, 100 * (index + 1)),
      }));
      await ledger.settle(batch);
      await ledger.settle(batch);
      // and two nodes retrying at the same moment
      await Promise.all([ledger.settle(batch), ledger.settle(batch)]);
      const after = await state();
      expect(after.quota).toBe(before.quota - 600);
      expect(after.remain).toBe(before.remain - 600);
      expect(after.used).toBe(before.used + 600);
      expect([after.userHeld, after.tokenHeld]).toEqual([0, 0]);
      expect(after.consumeLogs).toBe(before.consumeLogs + 3);
      expect(after.consumed).toBe(before.consumed + 600);
      // a release after the settlement gives nothing back either
      await ledger.release(held[0]);
      expect(await state()).toEqual(after);
      const rows = await app.ctx.db
        .selectFrom('reservations')
        .select('id')
        .where(
          'id',
          'in',
          held.map((one) => one.id!),
        )
        .execute();
      expect(rows).toEqual([]);
    });

    it("a dead node's held reservations come back once, logged, even with two sweeps at once; a late settlement charges only", async () => {
      const leaseMs = 30_000;
      const deadNode = `dead-${target.name}`;
      await renewLease(app.ctx.db, deadNode, leaseMs);
      const dead = kyselyLedger(app.ctx.db, { reservationRows: true, nodeId: deadNode });
      const before = await state();
      const held = [reservation(700), reservation(300), { ...reservation(1000), limitedToken: false }];
      for (const one of held) expect(await dead.reserve(one)).toEqual({ ok: true });
      expect((await state()).userHeld).toBe(2000);

      // while its lease runs, nothing is swept
      expect(await sweepDeadNodes(app.ctx.db, leaseMs)).toMatchObject({ reservations: 0 });
      // the node stopped renewing: a lease later, two live nodes sweep at the same time
      const later = Date.now() + leaseMs + 1000;
      const sweeps = await Promise.allSettled([sweepDeadNodes(app.ctx.db, leaseMs, later), sweepDeadNodes(app.ctx.db, leaseMs, later)]);
      const returned = sweeps.reduce((sum, sweep) => sum + (sweep.status === 'fulfilled' ? sweep.value.quota : 0), 0);
      expect(returned).toBe(2000);
      // a sweep that lost the race and failed is simply run again next round: nothing left for it
      expect(await sweepDeadNodes(app.ctx.db, leaseMs, later)).toMatchObject({ reservations: 0, quota: 0 });
      const swept = await state();
      expect(swept.quota).toBe(before.quota);
      expect(swept.remain).toBe(before.remain);
      expect([swept.userHeld, swept.tokenHeld]).toEqual([0, 0]);
      const newLogs = swept.systemLogs.slice(before.systemLogs.length);
      expect(newLogs).toEqual([{ quota: 2000, content: `returned 2000 quota held by requests that node ${deadNode} cut off` }]);
      expect(await app.ctx.db.selectFrom('relay_nodes').select('id').where('id', '=', deadNode).execute()).toEqual([]);

      // the dead node was only frozen: it settles late, twice; each charge is taken once, nothing given back again
      const batch: Settlement[] = held.map((one) => ({
        reservation: one,
        charge: 100,
        channelId: 0,
        countRequest: true,
        log: consumeLog(one, 100),
      }));
      await dead.settle(batch);
      await dead.settle(batch);
      const after = await state();
      expect(after.quota).toBe(before.quota - 300);
      expect(after.remain).toBe(before.remain - 200);
      expect([after.userHeld, after.tokenHeld]).toEqual([0, 0]);
      expect(after.consumed - before.consumed).toBe(300);
      // it finds its lease row gone and registers again
      expect(await renewLease(app.ctx.db, deadNode, leaseMs)).toBe(true);
      expect(await renewLease(app.ctx.db, deadNode, leaseMs)).toBe(false);
    });

    it("the app's own node holds a live lease, so its requests in flight are never swept", async () => {
      // the sweep "a lease later" above dropped this node's row too; its next renewal puts it back
      await renewLease(app.ctx.db, app.ctx.nodeId, 30_000);
      const held = reservation(400);
      expect(await app.ctx.ledger.reserve(held)).toEqual({ ok: true });
      const row = await app.ctx.db
        .selectFrom('reservations')
        .select(['node_id', 'state'])
        .where('id', '=', held.id!)
        .executeTakeFirstOrThrow();
      expect(row.node_id).toBe(app.ctx.nodeId);
      expect(await sweepDeadNodes(app.ctx.db, 0)).toMatchObject({ reservations: 0 });
      await app.ctx.ledger.release(held);
      expect((await state()).userHeld).toBe(0);
    });
  });
}
