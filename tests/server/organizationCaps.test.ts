// A member's spending caps in an organisation, relayed through the OpenAI
// emulator on SQLite (its own ledger), PostgreSQL and MariaDB (quota leases on
// the first node, reservation rows on the second): a lifetime cap refuses once
// used up, saying which cap and what is left; a daily cap starts over the next
// day (the budgets' clock moved); calls at once hold against the cap and never
// overrun it; a call the upstream fails charges nothing and gives its hold
// back; and through it all, per member, spent_quota is the sum of the logged
// charges of the member's keys and, per organisation, top-ups less charges is
// the balance, on both nodes.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetPeriodAt } from '../../common/budgets';
import { LogType } from '../../common/roles';
import { bookkeepingFor } from '../../server/billing/bookkeeping';
import { relayContextOf } from '../../server/plugins/relayContext';
import { asBrowser, buildTestApp, login, register } from '../support/app';
import { databaseTargets } from '../support/databases';
import { listenOnFreePort, resetRelay, sharedDatabase, startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('member caps');
const ZONE = 'Asia/Shanghai';
const DAY_MS = 86_400_000;

for (const target of targets) {
  describe.runIf(target.available)(`a member's spending caps (${target.name})`, () => {
    let database: Awaited<ReturnType<typeof sharedDatabase>> | undefined;
    let harness: RelayHarness;
    let second: FastifyInstance;
    let secondUrl = '';
    let orgId = 0;
    let accountId = 0;
    let memberId = 0;
    let ownerCookie = '';
    const keys: Record<'member' | 'service', { id: number; key: string }> = { member: { id: 0, key: '' }, service: { id: 0, key: '' } };

    const owner = async (method: 'GET' | 'PUT', url: string, payload?: unknown) =>
      (await asBrowser(harness.app, ownerCookie, { method, url, ...(payload === undefined ? {} : { payload: payload as never }) })).json();
    const setCaps = async (caps: Record<string, unknown>) => {
      const saved = await owner('PUT', `/api/organization/${orgId}/member`, { user_id: memberId, ...caps });
      expect(saved.success, saved.message).toBe(true);
      // each node's cached key row, as if its refresh had come round
      harness.app.ctx.relayCache.clear();
      second.ctx.relayCache.clear();
    };
    /** A call whose answer is never longer than max_tokens: its hold covers its charge. */
    const ask = (key: string, { maxTokens = 20, model = 'gpt-3.5-turbo', url = harness.baseUrl } = {}) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${key}` },
        body: JSON.stringify({
          model,
          max_tokens: maxTokens,
          emulator: { chunks: maxTokens, respect_max_tokens: true },
          messages: [{ role: 'user', content: 'hello' }],
        }),
      });
    const settled = async () => {
      await bookkeepingFor(harness.app.ctx, harness.app.log).idle();
      await bookkeepingFor(second.ctx, second.log).idle();
    };
    const setClock = (at: number) => {
      for (const app of [harness.app, second]) {
        const budgets = relayContextOf(app, bookkeepingFor(app.ctx, app.log)).budgets;
        budgets.clock = () => Date.now() + (at - Date.now());
      }
    };
    const memberRow = () =>
      harness.app.ctx.db
        .selectFrom('organization_members')
        .selectAll()
        .where('organization_id', '=', orgId)
        .where('user_id', '=', memberId)
        .executeTakeFirstOrThrow();
    const sum = async (type: number, tokenId?: number) => {
      let query = harness.app.ctx.db
        .selectFrom('logs')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
        .where('type', '=', type)
        .where('user_id', '=', accountId);
      if (tokenId !== undefined) query = query.where('token_id', '=', tokenId);
      return Number((await query.executeTakeFirstOrThrow()).sum);
    };
    /** The member's and the organisation's ledgers, as the database has them, checked exact; the member's spend. */
    const expectLedgerExact = async () => {
      await settled();
      const row = await memberRow();
      expect(Number(row.spent_quota)).toBe(await sum(LogType.consume, keys.member.id));
      const account = await harness.app.ctx.db
        .selectFrom('users')
        .select(['quota', 'held_quota'])
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      expect(Number(account.held_quota)).toBe(0);
      expect(Number(account.quota)).toBe((await sum(LogType.topup)) - (await sum(LogType.consume)));
      return Number(row.spent_quota);
    };
    /** One answered call: its logged charge. */
    const answered = async (key: string, options?: Parameters<typeof ask>[1]) => {
      const before = await sum(LogType.consume);
      const response = await ask(key, options);
      expect(response.status, await response.clone().text()).toBe(200);
      await settled();
      const charge = (await sum(LogType.consume)) - before;
      expect(charge).toBeGreaterThan(0);
      return charge;
    };
    const refused = async (key: string, url = harness.baseUrl, model = 'gpt-3.5-turbo') => {
      const response = await ask(key, { url, model });
      const body = (await response.json()) as { error: { message: string; code: string } };
      expect(response.status, body.error.message).toBe(429);
      expect(body.error.code).toBe('member_cap_exceeded');
      return { message: body.error.message, retryAfter: response.headers.get('retry-after') };
    };

    beforeAll(async () => {
      database = await sharedDatabase(target);
      const { config } = database;
      harness = await startRelayHarness(config);
      await resetRelay(harness);
      await harness.addChannel({ name: 'emulator', key: 'sk-upstream', models: 'gpt-3.5-turbo' });
      // gpt-4 goes to an upstream that fails every call
      await harness.addChannel({ name: 'down', key: 'sk-down', models: 'gpt-4' });
      await harness.app.ctx.options.set('TimeZone', ZONE);
      // refusals in quota, so the amounts read back exactly
      await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'false');
      // the second node keeps reservation rows where the first takes quota leases (the DB ledger, not the lease one)
      second = await buildTestApp(target.name === 'sqlite' ? {} : { quotaLeases: false }, config);
      secondUrl = await listenOnFreePort(second);
      for (const name of ['owner1', 'member2']) await register(harness.app, name);
      ownerCookie = await login(harness.app, 'owner1', 'password-123');
      const memberCookie = await login(harness.app, 'member2', 'password-123');
      const created = await harness.admin('POST', '/api/organization/', { name: 'Capped Co', owner: 'owner1' });
      expect(created.success, created.message).toBe(true);
      orgId = created.data.id;
      const ids = await harness.app.ctx.db.selectFrom('users').select(['id', 'username', 'organization_id']).execute();
      accountId = Number(ids.find((row) => Number(row.organization_id) === orgId)!.id);
      memberId = Number(ids.find((row) => row.username === 'member2')!.id);
      const added = await asBrowser(harness.app, ownerCookie, {
        method: 'POST',
        url: `/api/organization/${orgId}/member`,
        payload: { username: 'member2' },
      });
      expect(added.json().success).toBe(true);
      expect((await harness.admin('POST', `/api/organization/${orgId}/topup`, { quota: 50_000_000 })).success).toBe(true);
      for (const [who, cookie, service] of [
        ['member', memberCookie, false],
        ['service', ownerCookie, true],
      ] as const) {
        const key = await asBrowser(harness.app, cookie, {
          method: 'POST',
          url: `/api/organization/${orgId}/token`,
          payload: { name: who, unlimited_quota: true, service },
        });
        expect(key.json().success, key.body).toBe(true);
        keys[who] = { id: key.json().data.id, key: key.json().data.key };
      }
    });
    afterAll(async () => {
      await second?.close();
      await harness?.close();
      await database?.drop();
    });

    it('lets the owner set caps, shows them, and refuses what the rules refuse', async () => {
      const wrong = await owner('PUT', `/api/organization/${orgId}/member`, { user_id: memberId, cap_period: 'day', cap_period_quota: 0 });
      expect(wrong).toMatchObject({ success: false, message: expect.stringMatching(/cap_period_quota must be .* above 0/) });
      const negative = await owner('PUT', `/api/organization/${orgId}/member`, { user_id: memberId, cap_quota: -5 });
      expect(negative.message).toMatch(/cap_quota must be a whole number/);
      await setCaps({ cap_quota: 40_000_000, cap_period: 'week', cap_period_quota: 30_000_000 });
      const members = await owner('GET', `/api/organization/${orgId}/member`);
      expect(members.data.find((row: { user_id: number }) => row.user_id === memberId)).toMatchObject({
        cap_quota: 40_000_000,
        cap_period: 'week',
        cap_period_quota: 30_000_000,
        spent_quota: 0,
        period_spent: 0,
      });
      const memberCookie = await login(harness.app, 'member2', 'password-123');
      // the member sees their own caps on the organisation, but may not set them
      const mine = await asBrowser(harness.app, memberCookie, { method: 'GET', url: `/api/organization/${orgId}` });
      expect(mine.json().data.member_cap).toMatchObject({ cap_quota: 40_000_000, spent_quota: 0 });
      const raise = await asBrowser(harness.app, memberCookie, {
        method: 'PUT',
        url: `/api/organization/${orgId}/member`,
        payload: { user_id: memberId, cap_quota: 0 },
      });
      expect(raise.json()).toMatchObject({ success: false, code: 'permission_denied' });
      const audit = await harness.app.ctx.db
        .selectFrom('audit_log')
        .select(['changes', 'organization_id'])
        .where('route', '=', '/api/organization/:id/member')
        .where('method', '=', 'PUT')
        .where('success', '=', 1)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(Number(audit.organization_id)).toBe(orgId);
      expect(JSON.parse(audit.changes!).after.member).toMatchObject({ user_id: memberId, cap_quota: 40_000_000, cap_period: 'week' });
    });

    it('adds every charge of the member’s keys to their spend, on both nodes, and none of a service key’s', async () => {
      const charges = [await answered(keys.member.key), await answered(keys.member.key, { url: secondUrl })];
      await answered(keys.service.key, { url: secondUrl });
      expect(await expectLedgerExact()).toBe(charges[0] + charges[1]);
      const row = await memberRow();
      expect(Number(row.period_spent)).toBe(charges[0] + charges[1]);
    });

    it('refuses once the lifetime cap is used up, saying what is left, on either node; a service key still runs', async () => {
      const spent = await expectLedgerExact();
      await setCaps({ cap_quota: spent + 1, cap_period: '' });
      const logsBefore = await sum(LogType.consume);
      for (const url of [harness.baseUrl, secondUrl]) {
        const refusal = await refused(keys.member.key, url);
        expect(refusal.message).toContain('lifetime spending cap in this organization');
        expect(refusal.message).toContain(`${spent} of ${spent + 1} quota spent, 1 quota left, this request holds`);
        expect(refusal.retryAfter).toBeNull();
      }
      expect(await sum(LogType.consume)).toBe(logsBefore);
      await answered(keys.service.key);
      await setCaps({ cap_quota: 0 });
      await answered(keys.member.key);
      await expectLedgerExact();
    });

    it('starts a daily cap over the next day', async () => {
      const noon = (budgetPeriodAt('day', Date.now(), ZONE).start + 12 * 3600) * 1000;
      setClock(noon);
      await setCaps({ cap_quota: 0, cap_period: 'day', cap_period_quota: 10_000_000 });
      const today = budgetPeriodAt('day', noon, ZONE);
      let row = await memberRow();
      // a spend stored with today's start counts (the earlier weekly cap's, on a Monday), as for a key's budget
      const earlier = Number(row.period_start) === today.start ? Number(row.period_spent) : 0;
      const spent = earlier + (await answered(keys.member.key));
      row = await memberRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({ spent, start: today.start });
      await setCaps({ cap_period_quota: spent });
      const refusal = await refused(keys.member.key);
      expect(refusal.message).toContain(
        `daily spending cap in this organization: ${spent} of ${spent} quota spent this period, 0 quota left, this request holds`,
      );
      expect(refusal.message).toContain(new Date(today.end * 1000).toISOString());
      expect(Number(refusal.retryAfter)).toBeGreaterThan(12 * 3600 - 120);
      // a call holds more than it costs: without the spend of a Monday's weekly cap (above), today's spend can be
      // less than one call holds, so the cap is raised to fit one; what is checked next is the period starting over
      const holds = Number(/this request holds (\d+)/.exec(refusal.message)![1]);
      if (holds > spent) await setCaps({ cap_period_quota: holds });
      setClock(noon + DAY_MS);
      const next = await answered(keys.member.key, { url: secondUrl });
      row = await memberRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({
        spent: next,
        start: budgetPeriodAt('day', noon + DAY_MS, ZONE).start,
      });
      await setCaps({ cap_period: '' });
      await expectLedgerExact();
    });

    it('holds calls in flight against the cap: twenty at once never overrun it', async () => {
      const cost = await answered(keys.member.key, { maxTokens: 100 });
      const spent = await expectLedgerExact();
      await setCaps({ cap_quota: spent + 4 * cost + Math.floor(cost / 2) });
      const answers = await Promise.all(Array.from({ length: 20 }, () => ask(keys.member.key, { maxTokens: 100 }).then((r) => r.status)));
      const served = answers.filter((status) => status === 200).length;
      expect(served).toBeGreaterThan(0);
      expect(served).toBeLessThanOrEqual(4);
      for (const status of answers) expect([200, 429]).toContain(status);
      const after = await expectLedgerExact();
      expect(after).toBeLessThanOrEqual(spent + 4 * cost + Math.floor(cost / 2));
      await setCaps({ cap_quota: 0 });
    });

    it('charges nothing for a call the upstream fails, and gives its hold back', async () => {
      const spent = await expectLedgerExact();
      // what a call to the failing upstream holds, as the refusal says
      await setCaps({ cap_quota: spent + 1 });
      const { message } = await refused(keys.member.key, harness.baseUrl, 'gpt-4');
      const hold = Number(/this request holds (\d+) quota/.exec(message)?.[1]);
      expect(hold).toBeGreaterThan(1);
      // room for one such hold, not two: a hold left behind by the first failure would refuse the second call
      await setCaps({ cap_quota: spent + hold + Math.floor(hold / 2) });
      const before = await sum(LogType.consume);
      for (const attempt of [1, 2]) {
        const failed = await ask(keys.member.key, { model: 'gpt-4' });
        const body = (await failed.json()) as { error: { code: string } };
        // admitted (the cap let it through) and failed upstream: not a refusal of the cap
        expect([failed.status, body.error.code], `attempt ${attempt}`).toEqual([500, 'upstream_error']);
      }
      await settled();
      expect(await sum(LogType.consume)).toBe(before);
      expect(Number((await memberRow()).spent_quota)).toBe(spent);
      await expectLedgerExact();
    });

    it('starts a member removed and added again from nothing spent, on a node that counted their old spend', async () => {
      const spent = await expectLedgerExact();
      expect(spent).toBeGreaterThan(0);
      await setCaps({ cap_quota: spent + 1 });
      await refused(keys.member.key);
      const removed = await asBrowser(harness.app, ownerCookie, { method: 'DELETE', url: `/api/organization/${orgId}/member/${memberId}` });
      expect(removed.json().success, removed.body).toBe(true);
      // a membership is told apart by when it began (seconds): the new one begins in a later second
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const added = await asBrowser(harness.app, ownerCookie, {
        method: 'POST',
        url: `/api/organization/${orgId}/member`,
        payload: { username: 'member2' },
      });
      expect(added.json().success, added.body).toBe(true);
      const memberCookie = await login(harness.app, 'member2', 'password-123');
      const key = await asBrowser(harness.app, memberCookie, {
        method: 'POST',
        url: `/api/organization/${orgId}/token`,
        payload: { name: 'member again', unlimited_quota: true },
      });
      expect(key.json().success, key.body).toBe(true);
      await setCaps({ cap_quota: spent + 1 });
      // the old spend is gone with the old membership: a call of the new key fits a cap the old spend would fill
      const charge = await answered(key.json().data.key as string);
      expect(Number((await memberRow()).spent_quota)).toBe(charge);
    });
  });
}
