// Budgets that reset, on two nodes sharing one database, across a period
// boundary: each node's clock is faked (BudgetTracker.clock) so both cross
// midnight in the operator's time zone on cue. What must hold:
// - within a day, the key's spend in its row is the sum of both nodes' charges;
// - once the next day begins, the first charge of either node replaces the
//   old day's spend and the other node's charge adds to it (nothing of the day
//   before survives, nothing of the new day is lost);
// - a budget used up on one node refuses on the other too, saying when it
//   resets, and the next day both admit again without anyone touching the row;
// - a node whose clock lags (still in the day before) bills its call but does
//   not add it to the newer day's spend;
// - through all of it the ledger is exact: start - logged charges = balance,
//   nothing held.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetPeriodAt } from '../../../common/budgets';
import { LogType } from '../../../common/roles';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { relayContextOf } from '../../../server/plugins/relayContext';
import { buildTestApp } from '../../support/app';
import { databaseTargets } from '../../support/databases';
import { listenOnFreePort, resetRelay, sharedDatabase, startRelayHarness, type RelayHarness } from './harness';

const targets = await databaseTargets('budgets on two nodes');
const ZONE = 'Asia/Shanghai';
const DAY_MS = 86_400_000;

interface Node {
  name: string;
  app: FastifyInstance;
  baseUrl: string;
  /** Moves this node's budget clock to `at` (ms), from which it runs on with real time. */
  setClock(at: number): void;
  settled(): Promise<void>;
}

function nodeOf(name: string, app: FastifyInstance, baseUrl: string): Node {
  const budgets = relayContextOf(app, bookkeepingFor(app.ctx, app.log)).budgets;
  return {
    name,
    app,
    baseUrl,
    setClock(at) {
      const offset = at - Date.now();
      budgets.clock = () => Date.now() + offset;
    },
    settled: () => bookkeepingFor(app.ctx, app.log).idle(),
  };
}

for (const target of targets) {
  describe.runIf(target.available)(`a key's daily budget on two nodes across midnight (${target.name})`, () => {
    let shared: Awaited<ReturnType<typeof sharedDatabase>> | undefined;
    let harness: RelayHarness;
    let second: FastifyInstance;
    let a: Node;
    let b: Node;
    let startQuota = 0;
    let startRemain = 0;
    /** Noon of today in the zone: far from either midnight, whatever the real time. */
    let noon = 0;

    beforeAll(async () => {
      // on SQLite the two share a file, as two processes on one machine would
      shared = await sharedDatabase(target);
      const { config } = shared;
      harness = await startRelayHarness(config);
      await resetRelay(harness);
      await harness.addChannel({ name: 'emulator', key: 'sk-upstream' });
      await harness.app.ctx.options.set('TimeZone', ZONE);
      // refusals say quota, not dollars (budgets.test.ts checks both units), so the spend reads back exactly
      await harness.app.ctx.options.set('DisplayInCurrencyEnabled', 'false');
      // the second node starts once the channel and the zone are written, as a node joining a running cluster
      second = await buildTestApp({}, config);
      a = nodeOf('A', harness.app, harness.baseUrl);
      b = nodeOf('B', second, await listenOnFreePort(second));
      const saved = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'day', budget_quota: 5_000_000 });
      expect(saved.success, saved.message).toBe(true);
      const before = await harness.balances();
      startQuota = Number(before.user.quota);
      startRemain = Number(before.token.remain_quota);
      noon = (budgetPeriodAt('day', Date.now(), ZONE).start + 12 * 3600) * 1000;
    });
    afterAll(async () => {
      await second?.close();
      await harness?.close();
      await shared?.drop();
    });

    const ask = (node: Node, extra: Record<string, unknown> = {}) =>
      fetch(`${node.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.apiKey}` },
        body: JSON.stringify({
          model: 'gpt-3.5-turbo',
          max_tokens: 10,
          messages: [{ role: 'user', content: `hi from ${node.name}` }],
          ...extra,
        }),
      });
    const consumeLogs = () =>
      harness.app.ctx.db.selectFrom('logs').select(['id', 'quota']).where('type', '=', LogType.consume).orderBy('id', 'asc').execute();
    const tokenRow = () => harness.app.ctx.db.selectFrom('tokens').selectAll().where('id', '=', harness.tokenId).executeTakeFirstOrThrow();
    const forget = () => {
      // each node's cached key row, as if its refresh had come round
      harness.app.ctx.relayCache.clear();
      second.ctx.relayCache.clear();
    };
    /** One answered call through `node`: the quota its log row charged. */
    const answered = async (node: Node, extra?: Record<string, unknown>) => {
      const logsBefore = (await consumeLogs()).length;
      const response = await ask(node, extra);
      expect(response.status, `${node.name}: ${await response.clone().text()}`).toBe(200);
      await node.settled();
      const logs = await consumeLogs();
      expect(logs.length).toBe(logsBefore + 1);
      const charge = Number(logs[logs.length - 1].quota);
      expect(charge).toBeGreaterThan(0);
      return charge;
    };
    const refused = async (node: Node) => {
      const response = await ask(node);
      expect(response.status, `${node.name} should refuse`).toBe(429);
      const body = (await response.json()) as { error: { message: string; code: string } };
      expect(body.error.code).toBe('budget_exceeded');
      return { message: body.error.message, retryAfter: Number(response.headers.get('retry-after')) };
    };
    const expectLedgerExact = async () => {
      await a.settled();
      await b.settled();
      const charged = (await consumeLogs()).reduce((sum, log) => sum + Number(log.quota), 0);
      const now = await harness.balances();
      expect(Number(now.user.quota)).toBe(startQuota - charged);
      expect(Number(now.token.remain_quota)).toBe(startRemain - charged);
      const held = await harness.app.ctx.db.selectFrom('users').select('held_quota').where('id', '=', 1).executeTakeFirstOrThrow();
      expect(Number(held.held_quota)).toBe(0);
    };

    it('adds both nodes’ charges to the day’s spend', async () => {
      a.setClock(noon);
      b.setClock(noon);
      const today = budgetPeriodAt('day', noon, ZONE);
      const charges = [await answered(a), await answered(b), await answered(a), await answered(b)];
      const row = await tokenRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({
        spent: charges.reduce((x, y) => x + y, 0),
        start: today.start,
      });
      await expectLedgerExact();
    });

    it('starts the spend over at midnight: the first charge of the new day replaces the old, the other node’s adds to it', async () => {
      const tomorrowNoon = noon + DAY_MS;
      const tomorrow = budgetPeriodAt('day', tomorrowNoon, ZONE);
      const yesterdaySpent = Number((await tokenRow()).period_spent);
      expect(yesterdaySpent).toBeGreaterThan(0);
      a.setClock(tomorrowNoon);
      b.setClock(tomorrowNoon);
      // B first, with its cached row and its own entry both still of the day before
      const first = await answered(b);
      expect({ spent: Number((await tokenRow()).period_spent), start: Number((await tokenRow()).period_start) }).toEqual({
        spent: first,
        start: tomorrow.start,
      });
      const secondCharge = await answered(a);
      const third = await answered(b);
      const row = await tokenRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({
        spent: first + secondCharge + third,
        start: tomorrow.start,
      });
      await expectLedgerExact();
    });

    it('a budget used up through one node refuses on the other, says when it resets, and both admit again the next day', async () => {
      const tomorrowNoon = noon + DAY_MS;
      const tomorrow = budgetPeriodAt('day', tomorrowNoon, ZONE);
      const before = Number((await tokenRow()).period_spent);
      const budget = before + 1_000;
      const saved = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'day', budget_quota: budget });
      expect(saved.success, saved.message).toBe(true);
      forget();
      // through A, a call whose answer overruns its max_tokens (a provider's overrun): admitted, it spends past the budget
      const big = await answered(a, { max_tokens: 500, emulator: { chunks: 3_000 } });
      const spent = before + big;
      expect(spent).toBeGreaterThan(budget);
      expect(Number((await tokenRow()).period_spent)).toBe(spent);
      // B, once its cached key row is refreshed, refuses as A does
      forget();
      const logsBefore = (await consumeLogs()).length;
      for (const node of [b, a]) {
        const refusal = await refused(node);
        expect(refusal.message).toContain('daily budget of the API key');
        expect(refusal.message).toContain(`${spent} of ${budget} quota spent this period;`);
        expect(refusal.message).toContain(new Date(tomorrow.end * 1000).toISOString());
        // told to come back at the reset: twelve hours from the faked noon, give or take the test's own time
        expect(refusal.retryAfter).toBeGreaterThan(12 * 3600 - 120);
        expect(refusal.retryAfter).toBeLessThanOrEqual(12 * 3600);
      }
      expect((await consumeLogs()).length).toBe(logsBefore);
      await expectLedgerExact();

      // the day after: nobody touches the row, and both nodes admit again
      const dayAfterNoon = noon + 2 * DAY_MS;
      const dayAfter = budgetPeriodAt('day', dayAfterNoon, ZONE);
      a.setClock(dayAfterNoon);
      b.setClock(dayAfterNoon);
      const fromA = await answered(a);
      const fromB = await answered(b);
      const row = await tokenRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({ spent: fromA + fromB, start: dayAfter.start });
      await expectLedgerExact();
    });

    it('a node whose clock lags a day behind bills its call but does not add it to the newer day’s spend', async () => {
      const raised = await harness.admin('PUT', '/api/token/', { id: harness.tokenId, budget_period: 'day', budget_quota: 5_000_000 });
      expect(raised.success, raised.message).toBe(true);
      forget();
      const dayAfter = budgetPeriodAt('day', noon + 2 * DAY_MS, ZONE);
      const before = await tokenRow();
      expect(Number(before.period_start)).toBe(dayAfter.start);
      b.setClock(noon + DAY_MS);
      const late = await answered(b);
      expect(late).toBeGreaterThan(0);
      const row = await tokenRow();
      expect({ spent: Number(row.period_spent), start: Number(row.period_start) }).toEqual({
        spent: Number(before.period_spent),
        start: dayAfter.start,
      });
      await expectLedgerExact();
    });
  });
}
