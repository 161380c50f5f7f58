// Budgets that reset (common/budgets.ts, server/billing/budgets.ts): a key's
// or user's spend per day, week or month is written with each charge, counts
// as nothing once another period began in the operator's time zone, and a
// request that would take it over the budget is refused with when it resets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetPeriodAt } from '../../../common/budgets';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { type RelayContext } from '../../../server/relay/context';
import { relayContextOf } from '../../../server/plugins/relayContext';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { lastConsumeLog, resetRelay, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('budgets');
const ZONE = 'Asia/Shanghai';
const DAY_MS = 86_400_000;

for (const target of targets) {
  describe.runIf(target.available)(`budgets that reset on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let ctx: RelayContext;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      await resetRelay(harness);
      await harness.addChannel({ name: 'emulator', key: 'sk-upstream' });
      await harness.app.ctx.options.set('TimeZone', ZONE);
      ctx = relayContextOf(harness.app, bookkeepingFor(harness.app.ctx, harness.app.log));
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    const ask = () =>
      harness.post('/v1/chat/completions', { model: 'gpt-3.5-turbo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const tokenRow = () => harness.app.ctx.db.selectFrom('tokens').selectAll().where('id', '=', harness.tokenId).executeTakeFirstOrThrow();
    const userRow = () => harness.app.ctx.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const setToken = async (values: Record<string, number>) => {
      await harness.app.ctx.db.updateTable('tokens').set(values).where('id', '=', harness.tokenId).execute();
      harness.app.ctx.relayCache.clear();
    };
    const setUser = async (values: Record<string, number>) => {
      await harness.app.ctx.db.updateTable('users').set(values).where('id', '=', 1).execute();
      harness.app.ctx.relayCache.clear();
    };
    const answered = async () => {
      const response = await ask();
      expect(response.status, await response.clone().text()).toBe(200);
      await harness.settled();
      return Number((await lastConsumeLog(harness)).quota);
    };
    const refused = async () => {
      const response = await ask();
      expect(response.status).toBe(429);
      const body = (await response.json()) as { error: { message: string; code: string; type: string } };
      expect(body.error).toMatchObject({ code: 'budget_exceeded', type: 'insufficient_quota' });
      return { message: body.error.message, retryAfter: Number(response.headers.get('retry-after')) };
    };

    it('refuses bad budgets with a clear message', async () => {
      const period = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'year', budget_quota: 10 });
      expect(period).toMatchObject({ success: false, message: 'budget_period must be one of "", "day", "week" or "month"' });
      const amount = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'day', budget_quota: 0 });
      expect(amount).toMatchObject({
        success: false,
        message: 'budget_quota must be a whole number of quota above 0 when a budget period is set',
      });
      const user = await harness.admin('PUT', '/api/user/', { id: 1, budget_period: 'week', budget_quota: -5 });
      expect(user).toMatchObject({
        success: false,
        message: 'budget_quota must be a whole number of quota above 0 when a budget period is set',
      });
      const zone = await harness.admin('PUT', '/api/option/', { key: 'TimeZone', value: 'Mars/Olympus' });
      expect(zone.success).toBe(false);
      expect(zone.message).toContain('TimeZone must be a time zone name');
    });

    it("a key's budget: the charge adds to this period's spend, the list shows it, and a request over it is refused with when it resets", async () => {
      const saved = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'day', budget_quota: 1_000_000 });
      expect(saved.success, saved.message).toBe(true);
      harness.app.ctx.relayCache.clear();
      const today = budgetPeriodAt('day', Date.now(), ZONE);

      const charge = await answered();
      expect(charge).toBeGreaterThan(0);
      const row = await tokenRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({ spent: charge, start: today.start });

      const list = await harness.admin('GET', '/api/token/?p=0');
      const listed = (list.data as Array<Record<string, unknown>>).find((token) => token.id === harness.tokenId);
      expect(listed).toMatchObject({
        budget_period: 'day',
        budget_quota: 1_000_000,
        budget_usage: { spent: charge, period_start: today.start, resets_at: today.end },
      });

      // the day's budget is used up: nothing is held, the message says when it resets
      await setToken({ period_spent: 1_000_000 });
      const before = await userRow();
      const refusal = await refused();
      expect(refusal.message).toContain('daily budget of the API key');
      expect(refusal.message).toContain(new Date(today.end * 1000).toISOString());
      expect(refusal.message).toContain(`00:00 (${ZONE})`);
      // in the display currency (DisplayInCurrencyEnabled, on by default): 1,000,000 quota at 500,000 per dollar
      expect(refusal.message).toContain('budget of the API key: $2.00 of $2.00 spent this period;');
      expect(refusal.retryAfter).toBeGreaterThan(0);
      expect(refusal.retryAfter).toBeLessThanOrEqual(86_400);
      const after = await userRow();
      expect(Number(after.quota)).toBe(Number(before.quota));
      expect(Number(after.held_quota)).toBe(0);
    });

    it("the key's spend starts over when the next day begins", async () => {
      ctx.budgets.clock = () => Date.now() + DAY_MS;
      try {
        const tomorrow = budgetPeriodAt('day', Date.now() + DAY_MS, ZONE);
        const charge = await answered();
        const row = await tokenRow();
        // the row's spend was of yesterday: replaced, not added to
        expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({ spent: charge, start: tomorrow.start });
      } finally {
        ctx.budgets.clock = Date.now;
      }
      // a charge of an earlier period than the row's is not added to it (a node whose clock is behind)
      const row = await tokenRow();
      harness.app.ctx.relayCache.clear();
      await answered();
      expect(Number((await tokenRow()).period_spent)).toBe(Number(row.period_spent));
      const cleared = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: '' });
      expect(cleared.success, cleared.message).toBe(true);
      expect(await tokenRow()).toMatchObject({ budget_period: '' });
      expect(Number((await tokenRow()).period_spent)).toBe(0);
    });

    it("a user's weekly budget: a spend of an earlier week counts as nothing, this week's refuses when used up", async () => {
      const saved = await harness.admin('PUT', '/api/user/', { id: 1, budget_period: 'week', budget_quota: 500_000 });
      expect(saved.success, saved.message).toBe(true);
      const week = budgetPeriodAt('week', Date.now(), ZONE);
      expect(new Date((week.start + 8 * 3600) * 1000).getUTCDay()).toBe(1);
      // last week's spend, all of it: this week starts from nothing
      await setUser({ period_spent: 500_000, period_start: week.start - 7 * 86_400 });
      harness.app.ctx.relayCache.clear();
      const charge = await answered();
      const row = await userRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({ spent: charge, start: week.start });

      const read = await harness.admin('GET', '/api/user/1');
      expect(read.data).toMatchObject({
        budget_period: 'week',
        budget_quota: 500_000,
        budget_usage: { spent: charge, period_start: week.start, resets_at: week.end },
      });

      await setUser({ period_spent: 499_999 });
      // the operator shows quota, not dollars: the refusal says quota
      await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'false');
      let refusal: Awaited<ReturnType<typeof refused>>;
      try {
        refusal = await refused();
      } finally {
        await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'true');
      }
      expect(refusal.message).toContain('weekly budget of your account: 499999 of 500000 quota spent this period;');
      expect(refusal.message).toContain(new Date(week.end * 1000).toISOString());
      const cleared = await harness.admin('PUT', '/api/user/', { id: 1, budget_period: '' });
      expect(cleared.success, cleared.message).toBe(true);
      harness.app.ctx.relayCache.clear();
      await answered();
    });

    it('counts the holds of requests in flight against the budget, and gives them back', async () => {
      const saved = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'month', budget_quota: 1_000 });
      expect(saved.success, saved.message).toBe(true);
      harness.app.ctx.relayCache.clear();
      const token = await tokenRow();
      const user = await userRow();
      const first = { userId: 1, tokenId: harness.tokenId, limitedToken: true, amount: 600 };
      const second = { ...first, amount: 600 };
      expect(ctx.budgets.hold(token, user, first)).toBeUndefined();
      const overHeld = ctx.budgets.hold(token, user, second);
      expect(overHeld?.message).toContain(': $0.00 of $0.002 spent this period, $0.0012 held by requests in flight;');
      expect(overHeld?.retryAfter).toBe(2);
      ctx.budgets.release(first);
      expect(ctx.budgets.hold(token, user, second)).toBeUndefined();
      // settled at 250: the spend of this month is 250, so 800 more no longer fits
      expect(ctx.budgets.settle(second, 250)).toEqual({ tokenStart: budgetPeriodAt('month', Date.now(), ZONE).start });
      expect(ctx.budgets.hold(token, user, { ...first, amount: 800 })?.message).toContain('$0.0005 of $0.002 spent this period;');
      await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'false');
      try {
        expect(ctx.budgets.hold(token, user, { ...first, amount: 800 })?.message).toContain('250 of 1000 quota spent this period;');
        expect(ctx.budgets.hold(token, user, first)).toBeUndefined();
        expect(ctx.budgets.hold(token, user, { ...first, amount: 200 })?.message).toContain(
          '250 of 1000 quota spent this period, 600 held by requests in flight;',
        );
        ctx.budgets.release(first);
      } finally {
        await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'true');
      }
      expect(ctx.budgets.hold(token, user, { ...first, amount: 750 })).toBeUndefined();
    });
  });
}
