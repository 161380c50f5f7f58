// Gateway-run batches under budgets and an organisation member's caps, on all
// three databases (the spends are dialect SQL), with two nodes on one
// database: a batch's whole bound is checked against every budget and cap at
// its creation and counts as spent from then on, a batch that would pass a
// key's budget or a member's cap is refused with the relayed call's 429 (no
// task, nothing held), each line's settlement moves the spends by its charge
// less its bound, and a cancel gives the unrun lines' bounds back. After each
// batch the spends equal the logged charges, and the ledger's invariant
// (start + top-ups - logged charges - held = balance; what is held is what
// batches hold) holds for the user, the organisation and the member.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import { bookkeepingFor } from '../../server/billing/bookkeeping';
import { relayContextOf } from '../../server/plugins/relayContext';
import { findTaskById } from '../../server/repositories/tasks';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { runBatchUntilClosed } from '../support/batchRuns';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

const MANUAL = { intervalMs: 0, leaseMs: 60_000, finishLeaseMs: 60_000 };
/** Without quota leases, what users hold is what batches hold. */
const CONFIG = { batches: MANUAL, quotaLeases: false };
const chatLine = (customId: string) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'say hello to the batch' }], max_tokens: 50 },
});
const linesOf = (count: number) => Array.from({ length: count }, (_, index) => chatLine(`request-${index}`));
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

interface Key {
  id: number;
  key: string;
}

const targets = await databaseTargets('batch budgets');

for (const target of targets) {
  describe.runIf(target.available)(`batches under budgets and member caps on ${target.name}`, () => {
    let database: Awaited<ReturnType<typeof sharedDatabase>>;
    let app: FastifyInstance;
    let second: FastifyInstance;
    let emulator: OpenAIEmulator;
    const urls = { first: '', second: '' };
    let root = '';
    let accountId = 0;
    let memberId = 0;
    let orgId = 0;
    let owner = '';
    let memberKey: Key = { id: 0, key: '' };
    /** What one line holds (its bound). */
    let lineBound = 0;
    /** Each payer's balance with what it held and was charged, before any batch: start + top-ups. */
    const starts = new Map<number, number>();

    const db = () => app.ctx.db;
    const admin = async (method: 'POST' | 'PUT', url: string, payload: unknown) =>
      (await asBrowser(app, root, { method, url, payload: payload as never })).json();
    const budgetedKey = async (name: string, budget: number): Promise<Key> => {
      const token = await admin('POST', '/api/token/', { name, remain_quota: 50_000_000, budget_period: 'day', budget_quota: budget });
      expect(token.success, token.message).toBe(true);
      return { id: token.data.id, key: `sk-${token.data.key}` };
    };
    const upload = async (key: string, url: string, text: string): Promise<string> => {
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', new Blob([text]), 'input.jsonl');
      const response = await fetch(`${url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      expect(response.status).toBe(200);
      return ((await response.json()) as { id: string }).id;
    };
    const create = async (key: Key, url: string, count: number) => {
      const input_file_id = await upload(key.key, url, jsonl(linesOf(count)));
      return fetch(`${url}/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      });
    };
    const accepted = async (key: Key, url: string, count: number): Promise<string> => {
      const response = await create(key, url, count);
      const body = (await response.json()) as { id: string; error?: { message: string } };
      expect(response.status, body.error?.message).toBe(200);
      return body.id;
    };
    /** A refusal over a budget or cap: its 429, nothing held, no task written. */
    const refused = async (key: Key, url: string, count: number, code: string) => {
      const tasks = await db().selectFrom('tasks').select('id').where('token_id', '=', key.id).execute();
      const held = await db().selectFrom('users').select(['id', 'held_quota']).orderBy('id').execute();
      const response = await create(key, url, count);
      const body = (await response.json()) as { error: { code: string; type: string; message: string } };
      expect(response.status, body.error.message).toBe(429);
      expect(body.error).toMatchObject({ code, type: 'insufficient_quota' });
      expect(await db().selectFrom('tasks').select('id').where('token_id', '=', key.id).execute()).toHaveLength(tasks.length);
      expect(await db().selectFrom('users').select(['id', 'held_quota']).orderBy('id').execute()).toEqual(held);
      return body.error.message;
    };
    const logged = async (column: 'user_id' | 'token_id', id: number) => {
      const row = await db()
        .selectFrom('logs')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
        .where('type', '=', LogType.consume)
        .where(column, '=', id)
        .executeTakeFirstOrThrow();
      return Number(row.sum);
    };
    const balance = async (userId: number) => {
      const user = await db().selectFrom('users').select(['quota', 'held_quota']).where('id', '=', userId).executeTakeFirstOrThrow();
      const tasks = await db().selectFrom('tasks').select('held_quota').where('user_id', '=', userId).execute();
      return {
        total: Number(user.quota) + Number(user.held_quota),
        held: Number(user.held_quota),
        tasksHeld: tasks.reduce((sum, task) => sum + Number(task.held_quota), 0),
      };
    };
    /** The invariant for a payer: start - logged charges - held = balance; and what it holds is what its batches hold. */
    const expectLedger = async (userId: number) => {
      const { total, held, tasksHeld } = await balance(userId);
      expect(total + (await logged('user_id', userId))).toBe(starts.get(userId));
      expect(held).toBe(tasksHeld);
    };
    const tokenSpent = async (id: number) =>
      Number((await db().selectFrom('tokens').select('period_spent').where('id', '=', id).executeTakeFirstOrThrow()).period_spent);
    const memberSpent = async () => {
      const row = await db()
        .selectFrom('organization_members')
        .select(['spent_quota', 'period_spent'])
        .where('organization_id', '=', orgId)
        .where('user_id', '=', memberId)
        .executeTakeFirstOrThrow();
      return { lifetime: Number(row.spent_quota), period: Number(row.period_spent) };
    };
    /** Passes on the given nodes until the batch closes; `check` after each pass. */
    const runUntilClosed = (id: string, nodes = [app], check?: () => Promise<void>) => runBatchUntilClosed(db(), id, nodes, { check });

    beforeAll(async () => {
      emulator = await startOpenAIEmulator();
      database = await sharedDatabase(target);
      app = await buildTestApp(CONFIG, database.config);
      second = await buildTestApp(CONFIG, database.config);
      urls.first = await listenOnFreePort(app);
      urls.second = await listenOnFreePort(second);
      root = await login(app, 'root', ROOT_PASSWORD);
      for (const node of [app, second]) {
        await node.ctx.options.set('DisplayInCurrencyEnabled', 'false');
        // the gateway runs the lines itself (selfRun.ts), not the vendor's batch API
        await node.ctx.options.set('BatchUpstreamEnabled', 'false');
      }
      const channel = await admin('POST', '/api/channel/', {
        type: 1,
        name: 'openai',
        key: 'sk-batch-channel',
        base_url: emulator.baseUrl,
        models: 'gpt-3.5-turbo',
        group: 'default',
      });
      expect(channel.success, channel.message).toBe(true);

      for (const name of ['batch-owner', 'batch-member']) await register(app, name);
      const created = await admin('POST', '/api/organization/', { name: 'Batch Co', owner: 'batch-owner' });
      expect(created.success, created.message).toBe(true);
      orgId = created.data.id;
      const users = await db().selectFrom('users').select(['id', 'username', 'organization_id']).execute();
      accountId = Number(users.find((row) => Number(row.organization_id) === orgId)!.id);
      memberId = Number(users.find((row) => row.username === 'batch-member')!.id);
      owner = await login(app, 'batch-owner', 'password-123');
      const added = await asBrowser(app, owner, {
        method: 'POST',
        url: `/api/organization/${orgId}/member`,
        payload: { username: 'batch-member' },
      });
      expect(added.json().success).toBe(true);
      expect((await admin('POST', `/api/organization/${orgId}/topup`, { quota: 50_000_000 })).success).toBe(true);
      const token = await asBrowser(app, await login(app, 'batch-member', 'password-123'), {
        method: 'POST',
        url: `/api/organization/${orgId}/token`,
        payload: { name: 'member', unlimited_quota: true },
      });
      memberKey = { id: token.json().data.id, key: `sk-${token.json().data.key}` };
      for (const userId of [1, accountId]) starts.set(userId, (await balance(userId)).total + (await logged('user_id', userId)));
    });

    afterAll(async () => {
      await second?.close();
      await app?.close();
      await emulator?.close();
      await database?.drop();
    });

    it("counts a batch's bound in the key's daily budget, then its lines' charges, and refuses one over what is left", async () => {
      const key = await budgetedKey('budgeted', 50_000_000);
      const id = await accepted(key, urls.first, 2);
      const bound = Number((await findTaskById(db(), id))!.held_quota);
      lineBound = bound / 2;
      expect(lineBound).toBeGreaterThan(0);
      expect(await tokenSpent(key.id)).toBe(bound);
      await expectLedger(1);
      expect(await runUntilClosed(id)).toMatchObject({ status: 'completed', held_quota: 0 });
      const charged = await logged('token_id', key.id);
      expect(charged).toBeGreaterThan(0);
      expect(charged).toBeLessThan(bound);
      expect(await tokenSpent(key.id)).toBe(charged);
      const listed = await asBrowser(app, root, { method: 'GET', url: '/api/token/?p=0' });
      const row = (listed.json().data as Array<{ id: number; budget_usage: { spent: number } }>).find((token) => token.id === key.id);
      expect(row?.budget_usage.spent).toBe(charged);
      await expectLedger(1);

      // a key with room for one line: a one-line batch fits, a second while it is held does not, nor a two-line one
      const small = await budgetedKey('small', Math.floor(1.5 * lineBound));
      const first = await accepted(small, urls.first, 1);
      expect(await refused(small, urls.first, 1, 'budget_exceeded')).toContain('daily budget of the API key');
      const cancelled = await fetch(`${urls.first}/v1/batches/${first}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${small.key}` },
      });
      expect(cancelled.status).toBe(200);
      // the cancel gave the unrun line's bound back to the budget
      expect(await tokenSpent(small.id)).toBe(0);
      await expectLedger(1);
      expect(await refused(small, urls.first, 2, 'budget_exceeded')).toContain('daily budget of the API key');
      await runUntilClosed(first);
      expect(await tokenSpent(small.id)).toBe(0);
      await expectLedger(1);
    });

    it("counts a member's batch in their lifetime and daily caps, and refuses one over", async () => {
      const caps = { user_id: memberId, cap_quota: Math.floor(3.5 * lineBound), cap_period: 'day', cap_period_quota: 3 * lineBound };
      const set = await asBrowser(app, owner, { method: 'PUT', url: `/api/organization/${orgId}/member`, payload: caps });
      expect(set.json().success).toBe(true);
      const id = await accepted(memberKey, urls.second, 2);
      expect(await memberSpent()).toEqual({ lifetime: 2 * lineBound, period: 2 * lineBound });
      expect(await refused(memberKey, urls.second, 2, 'member_cap_exceeded')).toMatch(/(lifetime|daily) spending cap in this organization/);
      await expectLedger(accountId);
      await runUntilClosed(id, [app, second]);
      const charged = await logged('token_id', memberKey.id);
      expect(charged).toBeGreaterThan(0);
      expect(await memberSpent()).toEqual({ lifetime: charged, period: charged });
      await expectLedger(accountId);

      // the organisation's own daily budget (its account's), with room for one line: two are refused, one fits
      const budget = await admin('PUT', '/api/organization/', {
        id: orgId,
        budget_period: 'day',
        budget_quota: Math.floor(1.5 * lineBound),
      });
      expect(budget.success, budget.message).toBe(true);
      second.ctx.relayCache.clear();
      expect(await refused(memberKey, urls.second, 2, 'budget_exceeded')).toContain('daily budget of your account');
      const next = await accepted(memberKey, urls.second, 1);
      const accountSpent = async () =>
        Number((await db().selectFrom('users').select('period_spent').where('id', '=', accountId).executeTakeFirstOrThrow()).period_spent);
      expect(await accountSpent()).toBe(lineBound);
      await runUntilClosed(next, [second]);
      const total = await logged('token_id', memberKey.id);
      expect(await accountSpent()).toBe(total - charged);
      expect(await memberSpent()).toEqual({ lifetime: total, period: total });
      await expectLedger(accountId);
    });

    it("counts a batch in the day it was created: lines settled after midnight leave the new day's spend alone", async () => {
      const key = await budgetedKey('midnight', 50_000_000);
      // created "yesterday": its hold is written to the previous day
      const { budgets } = relayContextOf(app, bookkeepingFor(app.ctx, app.log));
      budgets.clock = () => Date.now() - 86_400_000;
      const id = await accepted(key, urls.first, 2);
      budgets.clock = Date.now;
      expect(await tokenSpent(key.id)).toBe(2 * lineBound);
      // today's first charge, an interactive call's, starts the new day's spend
      const response = await fetch(`${urls.first}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(chatLine('interactive').body),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      await bookkeepingFor(app.ctx, app.log).idle();
      const today = await logged('token_id', key.id);
      expect(today).toBeGreaterThan(0);
      expect(await tokenSpent(key.id)).toBe(today);
      await runUntilClosed(id);
      expect(await logged('token_id', key.id)).toBeGreaterThan(today);
      expect(await tokenSpent(key.id)).toBe(today);
      await expectLedger(1);
    });

    it('never passes the budget with two nodes running one batch, and each spend is the logged charges after', async () => {
      const budget = 5 * lineBound;
      const key = await budgetedKey('shared', budget);
      const id = await accepted(key, urls.first, 4);
      // the other node reads the spend the batch wrote: a second batch that would pass the budget is refused there too
      second.ctx.relayCache.clear();
      expect(await refused(key, urls.second, 2, 'budget_exceeded')).toContain('daily budget of the API key');
      await runUntilClosed(id, [app, second], async () => {
        expect(await tokenSpent(key.id)).toBeLessThanOrEqual(budget);
        expect(await logged('token_id', key.id)).toBeLessThanOrEqual(await tokenSpent(key.id));
      });
      const charged = await logged('token_id', key.id);
      expect(await tokenSpent(key.id)).toBe(charged);
      const lines = await db().selectFrom('batch_lines').select('charged_quota').where('task_id', '=', id).execute();
      expect(lines.reduce((sum, line) => sum + Number(line.charged_quota), 0)).toBe(charged);
      for (const userId of [1, accountId]) await expectLedger(userId);
    });
  });
}
