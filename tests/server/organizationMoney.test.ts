// Keys that spend an organisation's money, relayed through the OpenAI
// emulator on SQLite, PostgreSQL and MariaDB: two members' keys draw on one
// shared balance; per organisation, top-ups less logged charges is the
// balance; a member's removal switches their keys off; and two gateway
// instances on one database never spend more than the organisation holds.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType, TokenStatus } from '../../common/roles';
import { bookkeepingFor } from '../../server/billing/bookkeeping';
import { asBrowser, buildTestApp, login, register } from '../support/app';
import { databaseTargets } from '../support/databases';
import { listenOnFreePort, resetRelay, sharedDatabase, startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('organisation money');

for (const target of targets) {
  describe.runIf(target.available)(`an organisation's shared balance (${target.name})`, () => {
    let shared: Awaited<ReturnType<typeof sharedDatabase>> | undefined;
    let harness: RelayHarness;
    let second: FastifyInstance;
    let secondUrl = '';
    let orgId = 0;
    let accountId = 0;
    const cookies: Record<string, string> = {};
    const keys: Record<string, { id: number; key: string }> = {};

    const as = async (who: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      (await asBrowser(harness.app, cookies[who], { method, url, ...(payload === undefined ? {} : { payload: payload as never }) })).json();
    /** A request whose answer is never longer than max_tokens: the hold covers the charge, so nothing can overrun. */
    const ask = (baseUrl: string, key: string, content: string, maxTokens = 20) =>
      fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${key}` },
        body: JSON.stringify({
          model: 'gpt-3.5-turbo',
          max_tokens: maxTokens,
          emulator: { chunks: maxTokens, respect_max_tokens: true },
          messages: [{ role: 'user', content }],
        }),
      });
    const settled = async () => {
      await bookkeepingFor(harness.app.ctx, harness.app.log).idle();
      if (second) await bookkeepingFor(second.ctx, second.log).idle();
    };
    const consumeLogs = () =>
      harness.app.ctx.db.selectFrom('logs').select(['id', 'quota']).where('type', '=', LogType.consume).orderBy('id').execute();
    /** The organisation's ledger as the database has it. */
    const ledger = async () => {
      await settled();
      const db = harness.app.ctx.db;
      const account = await db.selectFrom('users').select(['quota', 'held_quota']).where('id', '=', accountId).executeTakeFirstOrThrow();
      const sum = async (type: number) =>
        Number(
          (
            await db
              .selectFrom('logs')
              .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
              .where('type', '=', type)
              .where('user_id', '=', accountId)
              .executeTakeFirstOrThrow()
          ).sum,
        );
      return {
        quota: Number(account.quota),
        held: Number(account.held_quota),
        toppedUp: await sum(LogType.topup),
        charged: await sum(LogType.consume),
      };
    };

    beforeAll(async () => {
      // on SQLite the two share a file, as two processes on one machine would
      shared = await sharedDatabase(target);
      const { config } = shared;
      harness = await startRelayHarness(config);
      await resetRelay(harness);
      await harness.addChannel({ name: 'emulator', key: 'sk-upstream' });
      second = await buildTestApp({}, config);
      secondUrl = await listenOnFreePort(second);
      for (const name of ['owner1', 'member2']) {
        await register(harness.app, name);
        cookies[name] = await login(harness.app, name, 'password-123');
      }
      const created = await harness.admin('POST', '/api/organization/', { name: 'Shared Co', owner: 'owner1' });
      expect(created.success, created.message).toBe(true);
      orgId = created.data.id;
      accountId = Number(
        (await harness.app.ctx.db.selectFrom('users').select('id').where('organization_id', '=', orgId).executeTakeFirstOrThrow()).id,
      );
      expect((await as('owner1', 'POST', `/api/organization/${orgId}/member`, { username: 'member2' })).success).toBe(true);
      expect((await harness.admin('POST', `/api/organization/${orgId}/topup`, { quota: 1_000_000 })).success).toBe(true);
      for (const who of ['owner1', 'member2']) {
        const key = await as(who, 'POST', `/api/organization/${orgId}/token`, { name: `${who} key`, unlimited_quota: true });
        expect(key.success, key.message).toBe(true);
        keys[who] = { id: key.data.id, key: key.data.key };
      }
    });
    afterAll(async () => {
      await second?.close();
      await harness?.close();
      await shared?.drop();
    });

    it("draws both members' keys on the organisation's balance, never the members' own", async () => {
      const people = () =>
        harness.app.ctx.db
          .selectFrom('users')
          .select(['username', 'quota'])
          .where('username', 'in', ['owner1', 'member2'])
          .orderBy('username')
          .execute();
      const peopleBefore = await people();
      for (const who of ['owner1', 'member2', 'owner1', 'member2'])
        expect((await ask(harness.baseUrl, keys[who].key, `hello from ${who}`)).status).toBe(200);
      const after = await ledger();
      expect(after.charged).toBeGreaterThan(0);
      expect(after).toEqual({ quota: 1_000_000 - after.charged, held: 0, toppedUp: 1_000_000, charged: after.charged });
      const tokens = await harness.app.ctx.db
        .selectFrom('tokens')
        .select(['id', 'used_quota', 'user_id', 'member_user_id'])
        .where('id', 'in', [keys.owner1.id, keys.member2.id])
        .execute();
      for (const token of tokens) {
        expect(Number(token.user_id)).toBe(accountId);
        expect(Number(token.used_quota)).toBeGreaterThan(0);
      }
      expect(await people()).toEqual(peopleBefore);
      const organization = await as('owner1', 'GET', `/api/organization/${orgId}`);
      expect(organization.data).toMatchObject({ quota: after.quota, used_quota: after.charged });
    });

    it("switches a removed member's keys off, and only theirs", async () => {
      const member2 = await harness.app.ctx.db.selectFrom('users').select('id').where('username', '=', 'member2').executeTakeFirstOrThrow();
      expect((await as('owner1', 'DELETE', `/api/organization/${orgId}/member/${member2.id}`)).success).toBe(true);
      const status = await harness.app.ctx.db
        .selectFrom('tokens')
        .select('status')
        .where('id', '=', keys.member2.id)
        .executeTakeFirstOrThrow();
      expect(Number(status.status)).toBe(TokenStatus.disabled);
      expect((await ask(harness.baseUrl, keys.member2.key, 'still here?')).status).toBe(401);
      expect((await ask(secondUrl, keys.member2.key, 'still here?')).status).toBe(401);
      expect((await ask(secondUrl, keys.owner1.key, 'still here')).status).toBe(200);
      // the owner may not switch it back on for someone who left
      const again = await as('owner1', 'PUT', `/api/organization/${orgId}/token`, { id: keys.member2.id, status: TokenStatus.enabled });
      expect(again.message).toMatch(/left the organization/);
      const ledgerNow = await ledger();
      expect(ledgerNow.quota).toBe(ledgerNow.toppedUp - ledgerNow.charged);
    });

    it('never overspends the shared balance with two instances on one database', async () => {
      // what one request of the race costs: its answer is as long as its hold allows, so the hold is about the charge
      const logsBefore = await consumeLogs();
      expect((await ask(harness.baseUrl, keys.owner1.key, 'race', 100)).status).toBe(200);
      await settled();
      const calibration = (await consumeLogs()).slice(logsBefore.length);
      expect(calibration).toHaveLength(1);
      const cost = Number(calibration[0].quota);
      expect(cost).toBeGreaterThan(0);
      // an organisation of its own whose balance buys a handful of requests; 40 are sent at once across both instances
      const race = await harness.admin('POST', '/api/organization/', { name: 'Race Co', owner: 'owner1' });
      expect(race.success, race.message).toBe(true);
      const raceAccount = await harness.app.ctx.db
        .selectFrom('users')
        .select('id')
        .where('organization_id', '=', race.data.id)
        .executeTakeFirstOrThrow();
      accountId = Number(raceAccount.id);
      expect(
        (await harness.admin('POST', `/api/organization/${race.data.id}/topup`, { quota: 4 * cost + Math.floor(cost / 2) })).success,
      ).toBe(true);
      const raceKeys: string[] = [];
      for (const service of [false, true]) {
        const created = await as('owner1', 'POST', `/api/organization/${race.data.id}/token`, {
          name: 'race',
          unlimited_quota: true,
          service,
        });
        expect(created.success, created.message).toBe(true);
        raceKeys.push(created.data.key);
      }
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          ask(index % 2 ? secondUrl : harness.baseUrl, raceKeys[index % 2], 'race', 100).then((response) => response.status),
        ),
      );
      const after = await ledger();
      const served = answers.filter((status) => status === 200).length;
      expect(served).toBeGreaterThan(0);
      // the balance buys four of these and not a fifth, whichever instance takes them
      expect(served).toBeLessThanOrEqual(4);
      for (const status of answers) expect([200, 403, 429]).toContain(status);
      expect(after.quota).toBeGreaterThanOrEqual(0);
      expect(after.held).toBe(0);
      expect(after.quota).toBe(after.toppedUp - after.charged);
      expect(after.charged).toBeLessThanOrEqual(after.toppedUp);
    });
  });
}
