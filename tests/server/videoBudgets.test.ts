// Videos under budgets and an organisation member's caps, on all three
// databases (the spends are dialect SQL), with a second node on PostgreSQL and
// MariaDB that keeps reservation rows where the first takes quota leases: a
// video's hold counts as spent from its submission, a video that would pass a
// key's budget or a member's cap is refused with the relayed call's 429 (no
// task, no vendor call), and its settlement leaves each spend equal to the
// logged charges (a relayed chat call's beside them, settled by each node's own
// ledger): the charge on completion, nothing of a failed video, also when the
// node that took it restarted in between. The ledger's invariant (start +
// top-ups - logged charges - held = balance) is checked after each step.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import { bookkeepingFor } from '../../server/billing/bookkeeping';
import { findTaskById } from '../../server/repositories/tasks';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { startVideoEmulator, type VideoEmulator } from '../support/emulators/videoEmulator';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

/** 8 s of sora-2 at $0.10 a second, 500,000 quota per dollar. */
const EIGHT_SECONDS = 400_000;
/** Two videos fit, a third does not. */
const LIMIT = 1_000_000;
const POLLING = { intervalMs: 0, pollEveryMs: 0, leaseMs: 60_000 };
const IN_FLIGHT = ['submitting', 'queued', 'in_progress'];

const targets = await databaseTargets('video budgets');

for (const target of targets) {
  describe.runIf(target.available)(`videos under budgets and member caps on ${target.name}`, () => {
    let database: Awaited<ReturnType<typeof sharedDatabase>>;
    let app: FastifyInstance;
    /** The second node (reservation rows); on SQLite, the one process there is. */
    let second: FastifyInstance;
    let emulator: VideoEmulator;
    let chatEmulator: OpenAIEmulator;
    const urls = { first: '', second: '' };
    let root = '';
    let accountId = 0;
    let memberId = 0;
    let orgId = 0;
    const keys = { budgeted: { id: 0, key: '' }, member: { id: 0, key: '' } };
    /** Each payer's balance before any video, with what it held and was charged: start + top-ups. */
    const starts = new Map<number, number>();

    const db = () => app.ctx.db;
    const admin = async (method: 'POST' | 'PUT', url: string, payload: unknown) =>
      (await asBrowser(app, root, { method, url, payload: payload as never })).json();
    const create = (key: string, url: string) =>
      fetch(`${url}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sora-2', prompt: 'a cat on a skateboard', seconds: '8', size: '720x1280' }),
      });
    /** A relayed chat call of the key, settled: its charge adds to the same budget through the node's ledger. */
    const chat = async (key: string, url: string) => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-3.5-turbo',
          max_tokens: 5,
          emulator: { chunks: 5, respect_max_tokens: true },
          messages: [{ role: 'user', content: 'hello' }],
        }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      for (const node of new Set([app, second])) await bookkeepingFor(node.ctx, node.log).idle();
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
    /** The invariant for a payer: start - logged charges - held = balance; and what it holds is what its tasks hold. */
    const expectLedger = async (userId: number) => {
      const { total, held, tasksHeld } = await balance(userId);
      expect(total + (await logged('user_id', userId))).toBe(starts.get(userId));
      expect(held).toBe(tasksHeld);
    };
    const tokenSpent = async (id = keys.budgeted.id) =>
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
    const settle = async (id: string) => {
      for (let pass = 0; pass < 10; pass += 1) {
        await app.taskPoller.runOnce();
        await second.taskPoller.runOnce();
        const task = await findTaskById(db(), id);
        if (task && !IN_FLIGHT.includes(task.status)) return task;
      }
      throw new Error(`task ${id} never settled`);
    };
    /** One accepted video's id. */
    const accepted = async (key: string, url: string) => {
      const response = await create(key, url);
      const body = (await response.json()) as { id: string; error?: { message: string } };
      expect(response.status, body.error?.message).toBe(200);
      return body.id;
    };
    /** A refusal over a budget or cap: its 429, nothing held, no task written, no vendor called. */
    const refused = async (key: { id: number; key: string }, url: string, code: string) => {
      const creates = emulator.creates.length;
      const tasks = await db().selectFrom('tasks').select('id').where('token_id', '=', key.id).execute();
      const response = await create(key.key, url);
      const body = (await response.json()) as { error: { code: string; type: string; message: string } };
      expect(response.status, body.error.message).toBe(429);
      expect(body.error).toMatchObject({ code, type: 'insufficient_quota' });
      expect(emulator.creates.length).toBe(creates);
      expect(await db().selectFrom('tasks').select('id').where('token_id', '=', key.id).execute()).toHaveLength(tasks.length);
      return body.error.message;
    };

    beforeAll(async () => {
      emulator = await startVideoEmulator();
      chatEmulator = await startOpenAIEmulator();
      database = await sharedDatabase(target);
      app = await buildTestApp({ tasks: POLLING }, database.config);
      second = target.name === 'sqlite' ? app : await buildTestApp({ tasks: POLLING, quotaLeases: false }, database.config);
      urls.first = await listenOnFreePort(app);
      urls.second = second === app ? urls.first : await listenOnFreePort(second);
      root = await login(app, 'root', ROOT_PASSWORD);
      await app.ctx.options.set('DisplayInCurrencyEnabled', 'false');
      await second.ctx.options.set('DisplayInCurrencyEnabled', 'false');
      const channel = await admin('POST', '/api/channel/', {
        type: 1,
        name: 'sora',
        key: 'sk-video-channel',
        base_url: emulator.baseUrl,
        models: 'sora-2',
        group: 'default',
      });
      expect(channel.success, channel.message).toBe(true);
      const chatChannel = await admin('POST', '/api/channel/', {
        type: 8,
        name: 'chat',
        key: 'sk-good',
        base_url: chatEmulator.baseUrl,
        models: 'gpt-3.5-turbo',
        group: 'default',
      });
      expect(chatChannel.success, chatChannel.message).toBe(true);
      const budgeted = await admin('POST', '/api/token/', {
        name: 'budgeted',
        remain_quota: 50_000_000,
        budget_period: 'day',
        budget_quota: LIMIT,
      });
      keys.budgeted = { id: budgeted.data.id, key: `sk-${budgeted.data.key}` };

      for (const name of ['video-owner', 'video-member']) await register(app, name);
      const created = await admin('POST', '/api/organization/', { name: 'Video Co', owner: 'video-owner' });
      expect(created.success, created.message).toBe(true);
      orgId = created.data.id;
      const users = await db().selectFrom('users').select(['id', 'username', 'organization_id']).execute();
      accountId = Number(users.find((row) => Number(row.organization_id) === orgId)!.id);
      memberId = Number(users.find((row) => row.username === 'video-member')!.id);
      const owner = await login(app, 'video-owner', 'password-123');
      const asOwner = (method: 'POST' | 'PUT', url: string, payload: unknown) =>
        asBrowser(app, owner, { method, url, payload: payload as never }).then((response) => response.json());
      expect((await asOwner('POST', `/api/organization/${orgId}/member`, { username: 'video-member' })).success).toBe(true);
      const caps = { user_id: memberId, cap_quota: LIMIT, cap_period: 'day', cap_period_quota: LIMIT };
      expect((await asOwner('PUT', `/api/organization/${orgId}/member`, caps)).success).toBe(true);
      expect((await admin('POST', `/api/organization/${orgId}/topup`, { quota: 50_000_000 })).success).toBe(true);
      const memberKey = await asBrowser(app, await login(app, 'video-member', 'password-123'), {
        method: 'POST',
        url: `/api/organization/${orgId}/token`,
        payload: { name: 'member', unlimited_quota: true },
      });
      keys.member = { id: memberKey.json().data.id, key: `sk-${memberKey.json().data.key}` };
      for (const userId of [1, accountId]) starts.set(userId, (await balance(userId)).total + (await logged('user_id', userId)));
    });

    afterAll(async () => {
      if (second !== app) await second?.close();
      await app?.close();
      await emulator?.close();
      await chatEmulator?.close();
      await database?.drop();
    });

    it("counts a video's hold in the key's budget, its charge once done, nothing once failed, and refuses one over", async () => {
      emulator.plan = { outcome: 'completed', polls: 1 };
      const done = await accepted(keys.budgeted.key, urls.first);
      expect(await tokenSpent()).toBe(EIGHT_SECONDS);
      await expectLedger(1);
      expect(await settle(done)).toMatchObject({ status: 'completed', charged_quota: EIGHT_SECONDS });
      expect(await tokenSpent()).toBe(await logged('token_id', keys.budgeted.id));
      expect(await tokenSpent()).toBe(EIGHT_SECONDS);
      await expectLedger(1);

      // a relayed call of the same key, settled by the node's own ledger (quota leases on PostgreSQL and MariaDB)
      await chat(keys.budgeted.key, urls.first);
      const chatCharge = (await logged('token_id', keys.budgeted.id)) - EIGHT_SECONDS;
      expect(chatCharge).toBeGreaterThan(0);
      expect(await tokenSpent()).toBe(EIGHT_SECONDS + chatCharge);

      emulator.plan = { outcome: 'failed', polls: 0 };
      const failed = await accepted(keys.budgeted.key, urls.first);
      expect(await tokenSpent()).toBe(2 * EIGHT_SECONDS + chatCharge);
      expect(await settle(failed)).toMatchObject({ status: 'failed', charged_quota: 0 });
      expect(await tokenSpent()).toBe(await logged('token_id', keys.budgeted.id));
      await expectLedger(1);

      // the refund freed the budget on the node that took the video: one more fits, the next does not
      app.ctx.relayCache.clear();
      emulator.plan = { outcome: 'completed', polls: 0 };
      const another = await accepted(keys.budgeted.key, urls.first);
      const message = await refused(keys.budgeted, urls.first, 'budget_exceeded');
      expect(message).toContain('daily budget of the API key');
      await settle(another);
      expect(await tokenSpent()).toBe(await logged('token_id', keys.budgeted.id));
      expect(await tokenSpent()).toBe(2 * EIGHT_SECONDS + chatCharge);
      await expectLedger(1);
    });

    it("counts a member's video in their caps and refuses one over, on the node that keeps reservation rows", async () => {
      emulator.plan = { outcome: 'completed', polls: 0 };
      const done = await accepted(keys.member.key, urls.second);
      expect(await memberSpent()).toEqual({ lifetime: EIGHT_SECONDS, period: EIGHT_SECONDS });
      await expectLedger(accountId);
      await settle(done);
      const charged = await logged('token_id', keys.member.id);
      expect(charged).toBe(EIGHT_SECONDS);
      expect(await memberSpent()).toEqual({ lifetime: charged, period: charged });
      // a relayed call of the member's key beside it (reservation rows on PostgreSQL and MariaDB)
      await chat(keys.member.key, urls.second);
      const withChat = await logged('token_id', keys.member.id);
      expect(await memberSpent()).toEqual({ lifetime: withChat, period: withChat });

      emulator.plan = { outcome: 'failed', polls: 0 };
      const failed = await accepted(keys.member.key, urls.second);
      expect((await memberSpent()).lifetime).toBe(withChat + EIGHT_SECONDS);
      await settle(failed);
      expect(await memberSpent()).toEqual({ lifetime: withChat, period: withChat });
      await expectLedger(accountId);

      second.ctx.relayCache.clear();
      emulator.plan = { outcome: 'completed', polls: 0 };
      const last = await accepted(keys.member.key, urls.second);
      const message = await refused(keys.member, urls.second, 'member_cap_exceeded');
      expect(message).toMatch(/(lifetime|daily) spending cap in this organization/);
      await settle(last);
      const total = await logged('token_id', keys.member.id);
      expect(total).toBe(2 * EIGHT_SECONDS + withChat - charged);
      expect(await memberSpent()).toEqual({ lifetime: total, period: total });
      await expectLedger(accountId);
    });

    it('keeps the holds of videos in flight in the budget through a restart, and settles them after it', async () => {
      const token = await admin('POST', '/api/token/', {
        name: 'restarted',
        remain_quota: 50_000_000,
        budget_period: 'day',
        budget_quota: LIMIT,
      });
      const key = { id: token.data.id as number, key: `sk-${token.data.key}` };
      emulator.plan = { outcome: 'failed', polls: 0 };
      const failing = await accepted(key.key, urls.first);
      emulator.plan = { outcome: 'completed', polls: 0 };
      const done = await accepted(key.key, urls.first);
      expect(await tokenSpent(key.id)).toBe(2 * EIGHT_SECONDS);

      // the first node restarts: what the videos hold is in the key's row, not in its memory alone
      await app.close();
      app = await buildTestApp({ tasks: POLLING }, database.config);
      urls.first = await listenOnFreePort(app);
      if (target.name === 'sqlite') [second, urls.second] = [app, urls.first];
      expect(await refused(key, urls.first, 'budget_exceeded')).toContain('daily budget of the API key');
      await settle(failing);
      await settle(done);
      expect(await tokenSpent(key.id)).toBe(await logged('token_id', key.id));
      expect(await tokenSpent(key.id)).toBe(EIGHT_SECONDS);
      await expectLedger(1);
    });
  });
}
