// Quota leases on PostgreSQL and MySQL (billing/leaseLedger.ts): many
// reservations come out of few transactions; settlements take their charges off
// the leases in batches; two nodes sharing one balance can never hold more than
// it; a top-up is usable at once and an admin's cut within a second; a batch
// retried after its COMMIT's answer was lost applies once; and whatever a node
// leased comes back when it is idle or stops.
import type { Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { LeaseLedger, LEASE_MAX_AGE_MS } from '../../../server/billing/leaseLedger';
import type { Reservation, Settlement } from '../../../server/billing/quota';
import { migrateToLatest, openDatabase, type Database } from '../../../server/db/database';
import { renewLease, sweepDeadNodes } from '../../../server/relay/nodeLease';
import { databaseTargets, type TestDatabase } from '../../support/databases';

const targets = (await databaseTargets('quota leases')).filter((target) => target.name !== 'sqlite');

const quiet = { warn: () => undefined, error: () => undefined };

for (const target of targets) {
  describe.runIf(target.available)(`quota leases on ${target.name}`, () => {
    let database: TestDatabase;
    let db: Kysely<Database>;
    let userId = 0;
    let tokenId = 0;
    let requests = 0;
    const ledgers: LeaseLedger[] = [];
    const newLedger = (nodeId: string, options: { maxAgeMs?: number; idleMs?: number } = {}) => {
      const ledger = new LeaseLedger(db, { nodeId, dialect: target.name as 'postgres' | 'mysql', log: quiet, ...options });
      ledgers.push(ledger);
      return ledger;
    };
    const reservation = (amount: number, limitedToken = true): Reservation => ({
      id: `req-${(requests += 1)}`,
      userId,
      tokenId,
      limitedToken,
      amount,
    });
    const settlement = (held: Reservation, charge: number): Settlement => ({
      reservation: held,
      charge,
      channelId: 0,
      countRequest: true,
      log: { userId, username: 'lease-user', type: LogType.consume, content: 'test', quota: charge, tokenId, modelName: 'gpt-3.5-turbo' },
    });
    const state = async () => {
      const user = await db
        .selectFrom('users')
        .select(['quota', 'held_quota', 'used_quota', 'request_count'])
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      const token = await db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota', 'used_quota'])
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      const logged = await db
        .selectFrom('logs')
        .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'), eb.fn.countAll<number>().as('count')])
        .where('type', '=', LogType.consume)
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      const rows = await db
        .selectFrom('reservations')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return {
        quota: Number(user.quota),
        userHeld: Number(user.held_quota),
        used: Number(user.used_quota),
        requests: Number(user.request_count),
        remain: Number(token.remain_quota),
        tokenHeld: Number(token.held_quota),
        tokenUsed: Number(token.used_quota),
        logged: Number(logged.sum),
        logs: Number(logged.count),
        rows: Number(rows.count),
      };
    };
    const setBalances = async (quota: number, remain: number) => {
      await db.updateTable('users').set({ quota, held_quota: 0, used_quota: 0, request_count: 0 }).where('id', '=', userId).execute();
      await db.updateTable('tokens').set({ remain_quota: remain, held_quota: 0, used_quota: 0 }).where('id', '=', tokenId).execute();
      await db.deleteFrom('logs').execute();
      await db.deleteFrom('reservations').execute();
    };

    beforeAll(async () => {
      database = await target.create();
      db = (await openDatabase(database.config)).db;
      await migrateToLatest(db);
      await db
        .insertInto('users')
        .values({
          username: 'lease-user',
          password_hash: 'x',
          display_name: 'lease user',
          role: 1,
          status: 1,
          email: '',
          github_id: '',
          wechat_id: '',
          access_token_hash: null,
          quota: 0,
          used_quota: 0,
          rpm_limit: null,
          tpm_limit: null,
          request_count: 0,
          group: 'default',
          aff_code: 'lease-aff',
          inviter_id: 0,
          session_version: 0,
          created_at: 0,
        })
        .execute();
      userId = Number((await db.selectFrom('users').select('id').where('username', '=', 'lease-user').executeTakeFirstOrThrow()).id);
      await db
        .insertInto('tokens')
        .values({
          user_id: userId,
          key: 'lease-ledger-key',
          name: 'lease',
          status: 1,
          created_time: 0,
          accessed_time: 0,
          expired_time: -1,
          remain_quota: 0,
          unlimited_quota: 0,
          used_quota: 0,
        })
        .execute();
      tokenId = Number((await db.selectFrom('tokens').select('id').where('key', '=', 'lease-ledger-key').executeTakeFirstOrThrow()).id);
    });
    beforeEach(() => {
      ledgers.length = 0;
    });
    // a test that failed half-way leaves no lease behind for the next one to find
    afterEach(async () => {
      await Promise.all(ledgers.map((ledger) => ledger.close().catch(() => undefined)));
    });
    afterAll(async () => {
      await db?.destroy();
      await database?.drop();
    });

    it('a hundred reservations come out of a few leases, and their settlements leave the ledger exact', async () => {
      await setBalances(10_000_000, 5_000_000);
      // no lease ages out (1 s by default) during the two hundred reservations, however slow the machine: this test
      // counts leases; the age of a lease is the later tests' subject (a loaded run took a third lease here)
      const ledger = newLedger('node-a', { maxAgeMs: 60_000 });
      const held = Array.from({ length: 100 }, () => reservation(1000));
      const results = await Promise.all(held.map((one) => ledger.reserve(one)));
      expect(results.every((result) => result.ok)).toBe(true);
      const leased = await state();
      // group commit: the hundred waited together for one lease, or a handful
      expect(leased.rows).toBeGreaterThanOrEqual(1);
      expect(leased.rows).toBeLessThanOrEqual(3);
      expect(leased.userHeld).toBeGreaterThanOrEqual(100 * 1000);
      expect(leased.quota + leased.userHeld).toBe(10_000_000);
      expect(leased.remain + leased.tokenHeld).toBe(5_000_000);
      // a hundred more from the lease alone: no new row
      const more = Array.from({ length: 100 }, () => reservation(1000));
      for (const [index, one] of more.entries()) {
        await ledger.release(held[index]);
        expect(await ledger.reserve(one)).toEqual({ ok: true });
      }
      expect((await state()).rows).toBe(leased.rows);

      const charges = more.map((one, index) => settlement(one, 10 + index));
      for (const one of charges) ledger.noteSettlement(one);
      await ledger.settle(charges);
      const charged = charges.reduce((sum, one) => sum + one.charge, 0);
      const settled = await state();
      expect(settled.quota + settled.userHeld).toBe(10_000_000 - charged);
      expect(settled.remain + settled.tokenHeld).toBe(5_000_000 - charged);
      expect([settled.used, settled.tokenUsed, settled.logged, settled.logs, settled.requests]).toEqual([
        charged,
        charged,
        charged,
        100,
        100,
      ]);
      // idle: nothing held, no lease row left
      await ledger.quiesce();
      const idle = await state();
      expect(idle).toMatchObject({ quota: 10_000_000 - charged, userHeld: 0, remain: 5_000_000 - charged, tokenHeld: 0, rows: 0 });
      await ledger.close();
    });

    it('two nodes on one balance hold no more than it between them, and settle exactly', async () => {
      await setBalances(50_000, 1_000_000);
      const [a, b] = [newLedger('node-a'), newLedger('node-b')];
      const asks = Array.from({ length: 80 }, (_, index) => ({ ledger: index % 2 === 0 ? a : b, held: reservation(1000) }));
      const results = await Promise.all(asks.map(({ ledger, held }) => ledger.reserve(held)));
      const granted = asks.filter((_, index) => results[index].ok);
      expect(granted.length).toBeLessThanOrEqual(50);
      expect(granted.length).toBeGreaterThan(0);
      const refused = results.filter((result) => !result.ok);
      expect(refused.every((result) => !result.ok && result.reason === 'user')).toBe(true);
      const midway = await state();
      expect(midway.quota).toBeGreaterThanOrEqual(0);
      expect(midway.quota + midway.userHeld).toBe(50_000);
      // every granted request is charged in full (the most a hold allows)
      for (const ledger of [a, b]) {
        const mine = granted.filter((ask) => ask.ledger === ledger).map((ask) => settlement(ask.held, 1000));
        for (const one of mine) ledger.noteSettlement(one);
        await ledger.settle(mine);
      }
      await Promise.all([a.quiesce(), b.quiesce()]);
      const after = await state();
      expect(after).toMatchObject({
        quota: 50_000 - granted.length * 1000,
        userHeld: 0,
        tokenHeld: 0,
        rows: 0,
        logged: granted.length * 1000,
      });
      await Promise.all([a.close(), b.close()]);
    });

    it("a top-up is usable at once; an admin's cut stops new holds within a second", async () => {
      await setBalances(0, 1_000_000);
      const ledger = newLedger('node-a');
      expect(await ledger.reserve(reservation(500))).toEqual({ ok: false, reason: 'user' });
      await db.updateTable('users').set({ quota: 100_000 }).where('id', '=', userId).execute();
      const first = reservation(500);
      expect(await ledger.reserve(first)).toEqual({ ok: true });
      const lease = (await state()).userHeld;
      expect(lease).toBeGreaterThanOrEqual(500);
      // the admin sets the balance to nothing while this node holds a lease
      await db.updateTable('users').set({ quota: 0 }).where('id', '=', userId).execute();
      await new Promise((wake) => setTimeout(wake, LEASE_MAX_AGE_MS + 100));
      expect(await ledger.reserve(reservation(500))).toEqual({ ok: false, reason: 'user' });
      ledger.noteSettlement(settlement(first, 200));
      await ledger.settle([settlement(first, 200)]);
      await ledger.quiesce();
      const after = await state();
      // the admin's 0 is the balance outside the lease; what the lease held beyond its charge comes back on top
      expect(after).toMatchObject({ quota: lease - 200, userHeld: 0, logged: 200, rows: 0 });
      await ledger.close();
    });

    it('a limited key refuses for itself, and a key with room is never held past its own balance', async () => {
      await setBalances(1_000_000, 3000);
      const ledger = newLedger('node-a');
      const held = [reservation(1000), reservation(1000), reservation(1000)];
      for (const one of held) expect(await ledger.reserve(one)).toEqual({ ok: true });
      expect(await ledger.reserve(reservation(1000))).toEqual({ ok: false, reason: 'token' });
      // an unlimited key of the same user is not bound by it
      expect(await ledger.reserve(reservation(1000, false))).toEqual({ ok: true });
      const midway = await state();
      expect(midway.remain).toBeGreaterThanOrEqual(0);
      for (const one of held) await ledger.release(one);
      await ledger.quiesce();
      // the unlimited one is still in flight: its lease stays until it ends
      expect((await state()).remain).toBe(3000);
      await ledger.close();
    });

    it('a batch retried after an ambiguous COMMIT, or handed over twice, applies once', async () => {
      await setBalances(1_000_000, 1_000_000);
      const ledger = newLedger('node-a');
      const held = [reservation(1000), reservation(2000)];
      for (const one of held) expect(await ledger.reserve(one)).toEqual({ ok: true });
      const batch = held.map((one) => settlement(one, 300));
      for (const one of batch) ledger.noteSettlement(one);
      // the COMMIT lands, its answer does not: the connection breaks right after it
      let broken = false;
      const original = db.getExecutor().provideConnection.bind(db.getExecutor());
      const executor = db.getExecutor() as unknown as { provideConnection: typeof original };
      executor.provideConnection = (consumer) =>
        original(async (connection) => {
          const result = await consumer(connection);
          if (!broken) {
            broken = true;
            throw Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' });
          }
          return result;
        });
      try {
        await expect(ledger.settle(batch)).rejects.toThrow(/Connection terminated/);
      } finally {
        executor.provideConnection = original;
      }
      await ledger.settle(batch);
      await ledger.settle(batch);
      await ledger.quiesce();
      const after = await state();
      expect(after).toMatchObject({
        quota: 1_000_000 - 600,
        userHeld: 0,
        remain: 1_000_000 - 600,
        tokenHeld: 0,
        logged: 600,
        logs: 2,
        rows: 0,
      });
      await ledger.close();
    });

    it("a dead node's lease that its charges overran goes back all the same: the overrun comes off the balance", async () => {
      await setBalances(1_000_000, 1_000_000);
      const leaseMs = 30_000;
      await renewLease(db, 'dead-node', leaseMs);
      // a node that dies holds on to its lease: the stand-in's own timers must not give it back first (a loaded run took
      // more than the 250 ms an idle lease lasts between the settlement and the sweep, and found nothing to sweep)
      const ledger = newLedger('dead-node', { idleMs: 120_000, maxAgeMs: 120_000 });
      const one = reservation(1000);
      expect(await ledger.reserve(one)).toEqual({ ok: true });
      const lease = (await state()).userHeld;
      // the provider ignored the limit: the charge is more than the whole lease
      const charge = lease + 2500;
      ledger.noteSettlement(settlement(one, charge));
      await ledger.settle([settlement(one, charge)]);
      expect((await state()).userHeld).toBe(-2500);
      // the node dies here (it never gives the lease back); a lease later a live node sweeps
      const swept = await sweepDeadNodes(db, leaseMs, Date.now() + leaseMs + 1000);
      expect(swept.reservations).toBe(1);
      expect(await state()).toMatchObject({
        quota: 1_000_000 - charge,
        userHeld: 0,
        remain: 1_000_000 - charge,
        tokenHeld: 0,
        logged: charge,
      });
      // it was only frozen: its late give-back finds the row swept, gives nothing, and drops the row
      await ledger.close();
      expect(await state()).toMatchObject({
        quota: 1_000_000 - charge,
        userHeld: 0,
        remain: 1_000_000 - charge,
        tokenHeld: 0,
        logged: charge,
        rows: 0,
      });
    });

    it('an idle lease goes back by itself', async () => {
      await setBalances(1_000_000, 1_000_000);
      const ledger = newLedger('node-a', { idleMs: 100 });
      const one = reservation(1000);
      expect(await ledger.reserve(one)).toEqual({ ok: true });
      await ledger.release(one);
      expect((await state()).userHeld).toBeGreaterThan(0);
      const deadline = Date.now() + 5000;
      let now = await state();
      while (now.userHeld !== 0 && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 50));
        now = await state();
      }
      expect(now).toMatchObject({ quota: 1_000_000, userHeld: 0, remain: 1_000_000, tokenHeld: 0, rows: 0 });
      await ledger.close();
    });
  });
}
