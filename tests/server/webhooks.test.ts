// Webhooks on SQLite, PostgreSQL and MySQL: the admin routes in
// ra-data-simple-rest's convention, signed deliveries to a receiver on
// loopback, retries on the configured schedule, the delivery log, redelivery,
// and each event fired by its real trigger.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChannelStatus, TokenStatus } from '../../common/roles';
import { runHealthPass } from '../../server/channels/channelHealth';
import { channelJobDepsOf } from '../../server/plugins/backgroundJobs';
import { pruneDeliveries } from '../../server/webhooks/delivery';
import { verifyWebhookSignature } from '../../server/webhooks/signing';
import { asBrowser, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('webhooks', { besideSqlite: 'mysql' });
const RETRY_DELAYS_MS = [40, 80, 120];

for (const target of targets) {
  describe.runIf(target.available)(`webhooks on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    let receiver: WebhookReceiver;
    let root: string;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config, {
        webhooks: { retryDelaysMs: RETRY_DELAYS_MS, pollIntervalMs: 20, timeoutMs: 5000 },
      });
      receiver = await startWebhookReceiver();
      root = await login(harness.app, 'root', ROOT_PASSWORD);
    });
    afterAll(async () => {
      await harness?.close();
      await receiver?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      await resetRelay(harness);
      const { db } = harness.app.ctx;
      await db.deleteFrom('webhook_deliveries').execute();
      await db.deleteFrom('webhooks').execute();
      receiver.received.length = 0;
      receiver.script([]);
    });

    const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, cookie: string | undefined = root) =>
      asBrowser(harness.app, cookie, { method, url, ...(payload === undefined ? {} : { payload: payload as never }) });
    const createWebhook = async (fields: Record<string, unknown> = {}) => {
      const response = await api('POST', '/api/webhook', {
        name: 'ops',
        url: receiver.url,
        events: ['channel.disabled', 'channel.enabled', 'user.balance_low', 'token.exhausted'],
        ...fields,
      });
      expect(response.statusCode).toBe(201);
      return response.json<{ id: number; secret: string; name: string }>();
    };
    const deliveries = () => harness.app.ctx.db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();

    it('creates, lists, reads, updates and deletes webhooks in the simple-rest convention; the secret is shown once', async () => {
      const generated = await createWebhook({ name: 'alpha' });
      expect(generated.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
      const chosen = await createWebhook({ name: 'beta', secret: 'my-own-secret-123456', events: ['token.exhausted'] });
      expect(chosen.secret).toBe('my-own-secret-123456');
      await createWebhook({ name: 'gamma', enabled: false });

      const list = await api(
        'GET',
        `/api/webhook?${new URLSearchParams({ sort: '["name","ASC"]', range: '[1,1]', filter: '{}' }).toString()}`,
      );
      expect(list.statusCode).toBe(200);
      expect(list.headers['content-range']).toBe('webhook 1-1/3');
      expect(list.headers['access-control-expose-headers']).toBe('Content-Range');
      expect(list.json()).toEqual([expect.objectContaining({ name: 'beta', events: ['token.exhausted'], enabled: true })]);
      expect(list.body).not.toContain('secret');

      const disabled = await api('GET', `/api/webhook?${new URLSearchParams({ filter: '{"enabled":false}' }).toString()}`);
      expect(disabled.json().map((row: { name: string }) => row.name)).toEqual(['gamma']);
      const searched = await api('GET', `/api/webhook?${new URLSearchParams({ filter: '{"q":"alp"}' }).toString()}`);
      expect(searched.json().map((row: { name: string }) => row.name)).toEqual(['alpha']);
      const many = await api(
        'GET',
        `/api/webhook?${new URLSearchParams({ filter: JSON.stringify({ id: [generated.id, chosen.id] }) }).toString()}`,
      );
      expect(
        many
          .json()
          .map((row: { id: number }) => row.id)
          .sort(),
      ).toEqual([generated.id, chosen.id].sort());
      expect(many.headers['content-range']).toBe('webhook 0-1/2');

      const one = await api('GET', `/api/webhook/${generated.id}`);
      expect(one.json()).toMatchObject({ id: generated.id, name: 'alpha', url: receiver.url });
      expect(one.json().secret).toBeUndefined();

      const updated = await api('PUT', `/api/webhook/${generated.id}`, { name: 'alpha-2', events: ['channel.disabled'], enabled: false });
      expect(updated.json()).toMatchObject({ id: generated.id, name: 'alpha-2', events: ['channel.disabled'], enabled: false });
      expect(updated.json().secret).toBeUndefined();
      const row = await harness.app.ctx.db.selectFrom('webhooks').selectAll().where('id', '=', generated.id).executeTakeFirstOrThrow();
      expect(row.secret).toBe(generated.secret);

      // as ra-data-simple-rest sends it: a DELETE with Content-Type text/plain and no body
      const removed = await asBrowser(harness.app, root, {
        method: 'DELETE',
        url: `/api/webhook/${generated.id}`,
        headers: { 'content-type': 'text/plain' },
      });
      expect(removed.json()).toMatchObject({ id: generated.id });
      expect((await api('GET', `/api/webhook/${generated.id}`)).statusCode).toBe(404);
      expect((await api('GET', '/api/webhook')).headers['content-range']).toBe('webhook 0-1/2');
    });

    it('refuses bad input with a 400 and the reason, and a user with a 403', async () => {
      for (const payload of [
        { name: 'x', url: 'ftp://example.com', events: ['token.exhausted'] },
        { name: 'x', url: 'http://user:pass@example.com', events: ['token.exhausted'] },
        { name: 'x', url: receiver.url, events: [] },
        { name: 'x', url: receiver.url, events: ['nope'] },
        { name: '', url: receiver.url, events: ['token.exhausted'] },
        { name: 'x', url: receiver.url, events: ['token.exhausted'], secret: 'short' },
      ]) {
        const response = await api('POST', '/api/webhook', payload);
        expect(response.statusCode, JSON.stringify(payload)).toBe(400);
        expect(response.json()).toMatchObject({ success: false });
      }
      expect((await api('GET', '/api/webhook?sort=["secret","ASC"]')).statusCode).toBe(400);
      expect((await api('GET', '/api/webhook?range=[5,1]')).statusCode).toBe(400);
      expect((await api('GET', '/api/webhook?filter={"secret":"x"}')).statusCode).toBe(400);
      await register(harness.app, 'hookuser');
      const user = await login(harness.app, 'hookuser', 'password-123');
      const refused = await api('GET', '/api/webhook', undefined, user);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ success: false, code: 'permission_denied' });
      expect((await harness.app.inject({ method: 'GET', url: '/api/webhook' })).statusCode).toBe(401);
      // state-changing calls from another site are refused like every other /api write
      for (const [method, url] of [
        ['POST', '/api/webhook'],
        ['PUT', '/api/webhook/1'],
        ['DELETE', '/api/webhook/1'],
        ['POST', '/api/webhook_delivery/1/redeliver'],
      ] as const) {
        const crossSite = await asBrowser(harness.app, root, {
          method,
          url,
          payload: { name: 'x', url: receiver.url, events: ['token.exhausted'] },
          headers: { 'sec-fetch-site': 'cross-site' },
        });
        expect(crossSite.statusCode, `${method} ${url}`).toBe(403);
      }
      expect(await harness.app.ctx.db.selectFrom('webhooks').select('id').execute()).toHaveLength(0);
    });

    it('signs each delivery over "timestamp.body" with the secret; the body is {id, type, created_at, data}', async () => {
      const webhook = await createWebhook();
      const test = await api('POST', `/api/webhook/${webhook.id}/test`);
      expect(test.statusCode).toBe(201);
      const [delivery] = await receiver.waitFor((received) => received.length === 1);
      expect(delivery.json).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: 'webhook.test',
        created_at: expect.any(Number),
        data: { webhook: { id: webhook.id, name: 'ops' } },
      });
      const signature = String(delivery.headers['x-switchboard-signature']);
      expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyWebhookSignature(webhook.secret, signature, delivery.body)).toBe(true);
      expect(verifyWebhookSignature('another-secret-entirely', signature, delivery.body)).toBe(false);
      expect(verifyWebhookSignature(webhook.secret, signature, delivery.body.replace('ops', 'opz'))).toBe(false);
      const timestamp = Number(/t=(\d+)/.exec(signature)![1]);
      expect(verifyWebhookSignature(webhook.secret, signature, delivery.body, 300, timestamp + 301)).toBe(false);
      expect(delivery.headers['x-switchboard-event']).toBe('webhook.test');
      expect(delivery.headers['x-switchboard-event-id']).toBe(delivery.json.id);
      expect(delivery.headers['content-type']).toBe('application/json');
    });

    it('retries with backoff until a 2xx: a receiver failing twice gets the same event three times, and the log says so', async () => {
      const webhook = await createWebhook();
      receiver.script([500, 503]);
      const created = (await api('POST', `/api/webhook/${webhook.id}/test`)).json();
      const received = await receiver.waitFor((all) => all.length === 3);
      expect(new Set(received.map((delivery) => delivery.body)).size).toBe(1);
      const [row] = await eventually(deliveries, (rows) => rows[0]?.status === 'delivered');
      expect(row).toMatchObject({ status: 'delivered', last_error: null });
      expect(Number(row.attempts)).toBe(3);
      expect(Number(row.last_status_code)).toBe(200);

      const log = await api(
        'GET',
        `/api/webhook_delivery?${new URLSearchParams({ filter: JSON.stringify({ webhook_id: webhook.id }), sort: '["id","DESC"]', range: '[0,9]' }).toString()}`,
      );
      expect(log.headers['content-range']).toBe('webhook_delivery 0-0/1');
      expect(log.json()).toEqual([
        expect.objectContaining({ id: created.id, status: 'delivered', attempts: 3, last_status_code: 200, event_type: 'webhook.test' }),
      ]);
    });

    it('gives up after the last attempt of the schedule, and redelivers the same event on demand', async () => {
      const webhook = await createWebhook();
      receiver.script(Array(RETRY_DELAYS_MS.length + 1).fill(500));
      await api('POST', `/api/webhook/${webhook.id}/test`);
      const [failed] = await eventually(deliveries, (rows) => rows[0]?.status === 'failed');
      expect(Number(failed.attempts)).toBe(RETRY_DELAYS_MS.length + 1);
      expect(Number(failed.last_status_code)).toBe(500);
      // the status alone: what the target answered (the receiver says "receiver says no") is not kept
      expect(failed.last_error).toBe('HTTP 500');
      expect(receiver.received).toHaveLength(RETRY_DELAYS_MS.length + 1);
      const logged = await api(
        'GET',
        `/api/webhook_delivery?${new URLSearchParams({ filter: JSON.stringify({ id: failed.id }) }).toString()}`,
      );
      expect(logged.json()).toEqual([expect.objectContaining({ id: Number(failed.id), last_status_code: 500, last_error: 'HTTP 500' })]);
      expect(logged.body).not.toContain('receiver says no');

      const again = await api('POST', `/api/webhook_delivery/${failed.id}/redeliver`);
      expect(again.statusCode).toBe(201);
      expect(again.json()).toMatchObject({ event_id: failed.event_id, status: 'pending', attempts: 0 });
      await eventually(deliveries, (rows) => rows.length === 2 && rows[1].status === 'delivered');
      expect(receiver.received.at(-1)!.json.id).toBe(failed.event_id);
      const byStatus = await api('GET', `/api/webhook_delivery?${new URLSearchParams({ filter: '{"status":"failed"}' }).toString()}`);
      expect(byStatus.json().map((row: { id: number }) => row.id)).toEqual([Number(failed.id)]);
    });

    it("shows a delivery logged with the target's answer (before it stopped being kept) by its status alone", async () => {
      const webhook = await createWebhook();
      receiver.script(Array(RETRY_DELAYS_MS.length + 1).fill(500));
      await api('POST', `/api/webhook/${webhook.id}/test`);
      const [failed] = await eventually(deliveries, (rows) => rows[0]?.status === 'failed');
      await harness.app.ctx.db
        .updateTable('webhook_deliveries')
        .set({ last_error: 'HTTP 500: {"internal":"10.0.0.7 admin panel"}' })
        .where('id', '=', failed.id)
        .execute();
      const logged = await api(
        'GET',
        `/api/webhook_delivery?${new URLSearchParams({ filter: JSON.stringify({ id: failed.id }) }).toString()}`,
      );
      expect(logged.json()).toEqual([expect.objectContaining({ id: Number(failed.id), last_error: 'HTTP 500' })]);
      expect(logged.body).not.toContain('10.0.0.7');
    });

    it('a receiver that refuses connections is retried and its error logged', async () => {
      const webhook = await createWebhook({ url: 'http://127.0.0.1:9/closed' });
      await api('POST', `/api/webhook/${webhook.id}/test`);
      const [row] = await eventually(deliveries, (rows) => Number(rows[0]?.attempts) >= 1);
      expect(Number(row.last_status_code)).toBe(0);
      expect(row.last_error).toMatch(/ECONNREFUSED|connect/i);
    });

    it('channel.disabled when a failing upstream makes the relay disable a channel; channel.enabled when the health check brings it back', async () => {
      await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      await createWebhook();
      const channelId = await harness.addChannel({ name: 'dying', key: 'sk-dead' });
      const answer = await harness.post('/v1/chat/completions', { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      const [disabled] = await receiver.waitFor((all) => all.some((delivery) => delivery.json.type === 'channel.disabled'));
      expect(disabled.json.data).toMatchObject({ channel: { id: channelId, name: 'dying', type: 8 }, automatic: true });
      expect(disabled.json.data.reason).toEqual(expect.any(String));

      await harness.app.ctx.db.updateTable('channels').set({ key: 'sk-good' }).where('id', '=', channelId).execute();
      const pass = await runHealthPass(channelJobDepsOf(harness.app));
      expect(pass?.reenabled).toEqual([channelId]);
      const all = await receiver.waitFor((received) => received.some((delivery) => delivery.json.type === 'channel.enabled'));
      expect(all.find((delivery) => delivery.json.type === 'channel.enabled')!.json.data).toMatchObject({
        channel: { id: channelId },
        automatic: true,
      });
      expect(all.filter((delivery) => delivery.json.type === 'channel.disabled')).toHaveLength(1);
      await harness.app.ctx.options.set('AutomaticDisableChannelEnabled', 'false');
    });

    it("channel.disabled and channel.enabled for an admin's changes, one-by-one and in bulk; a repeat is no event", async () => {
      await createWebhook({ events: ['channel.disabled', 'channel.enabled'] });
      const channelId = await harness.addChannel({ name: 'manual', key: 'sk-good' });
      await harness.admin('PUT', '/api/channel/', { id: channelId, status: ChannelStatus.disabled });
      await harness.admin('PUT', '/api/channel/', { id: channelId, status: ChannelStatus.disabled });
      await harness.admin('POST', '/api/channel/bulk', { ids: [channelId], action: 'enable' });
      const received = await receiver.waitFor((all) => all.length >= 2);
      expect(received.map((delivery) => [delivery.json.type, delivery.json.data.channel.id, delivery.json.data.automatic])).toEqual([
        ['channel.disabled', channelId, false],
        ['channel.enabled', channelId, false],
      ]);
      expect(await deliveries()).toHaveLength(2);
    });

    it('token.exhausted once when a limited token is relayed to exhaustion', async () => {
      await createWebhook({ events: ['token.exhausted'] });
      await harness.addChannel({ name: 'emu', key: 'sk-good' });
      const created = await harness.admin('POST', '/api/token/', { name: 'small', remain_quota: 30 });
      const key = `sk-${created.data.key}`;
      let answer: Response | undefined;
      for (let tries = 0; tries < 100; tries += 1) {
        // the emulator overruns max_tokens (as some providers do), and the overrun is billed: the token ends below zero
        answer = await harness.post(
          '/v1/chat/completions',
          { model: 'gpt-3.5-turbo', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }], emulator: { chunks: 40 } },
          key,
        );
        if (answer.status === 401) break;
        await harness.settled();
        if (answer.status === 429) await new Promise((wake) => setTimeout(wake, 100));
      }
      expect(answer?.status).toBe(401);
      const token = await harness.app.ctx.db.selectFrom('tokens').selectAll().where('id', '=', created.data.id).executeTakeFirstOrThrow();
      expect(Number(token.status)).toBe(TokenStatus.exhausted);
      const [event] = await receiver.waitFor((all) => all.length === 1);
      expect(event.json).toMatchObject({ type: 'token.exhausted', data: { token: { id: created.data.id, name: 'small', user_id: 1 } } });
      expect(await deliveries()).toHaveLength(1);
    });

    it('user.balance_low when a charge takes the balance below QuotaRemindThreshold, not again below it', async () => {
      await createWebhook({ events: ['user.balance_low'] });
      await harness.addChannel({ name: 'emu', key: 'sk-good' });
      await harness.settled();
      const { db, options } = harness.app.ctx;
      await options.set('QuotaRemindThreshold', '100000');
      await db.updateTable('users').set({ quota: 100_001 }).where('username', '=', 'root').execute();
      harness.app.ctx.relayCache.clear();
      for (let index = 0; index < 2; index += 1) {
        const answer = await harness.post('/v1/chat/completions', { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] });
        expect(answer.status).toBe(200);
        await harness.settled();
      }
      const [event] = await receiver.waitFor((all) => all.length >= 1);
      const quota = Number((await db.selectFrom('users').select('quota').where('username', '=', 'root').executeTakeFirstOrThrow()).quota);
      expect(event.json).toMatchObject({
        type: 'user.balance_low',
        data: { user: { id: 1, username: 'root' }, threshold: 100000, used_up: false },
      });
      expect(event.json.data.quota).toBeLessThan(100_000);
      expect(quota).toBeLessThanOrEqual(event.json.data.quota);
      await harness.app.webhookDelivery.runOnce();
      expect(await deliveries()).toHaveLength(1);
      await options.set('QuotaRemindThreshold', '0');
    });

    it('prunes finished deliveries older than the log keeps them, never pending ones', async () => {
      const webhook = await createWebhook();
      await api('POST', `/api/webhook/${webhook.id}/test`);
      await eventually(deliveries, (rows) => rows[0]?.status === 'delivered');
      receiver.script(Array(10).fill(500));
      await api('POST', `/api/webhook/${webhook.id}/test`);
      const [, retrying] = await eventually(deliveries, (rows) => rows.length === 2 && Number(rows[1].attempts) >= 1);
      // its next attempt an hour away, as a later retry of the default schedule would be
      await harness.app.ctx.db
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', next_attempt_at: Date.now() + 3_600_000, claimed_by: null })
        .where('id', '=', retrying.id)
        .execute();
      const inFortyDays = Date.now() + 40 * 86_400_000;
      expect(await pruneDeliveries(harness.app.ctx.db, 30)).toBe(0);
      expect(await pruneDeliveries(harness.app.ctx.db, 0, inFortyDays)).toBe(0);
      // forty days on: the delivered one goes, the pending one stays
      expect(await pruneDeliveries(harness.app.ctx.db, 30, inFortyDays)).toBe(1);
      expect((await deliveries()).map((row) => [Number(row.id), row.status])).toEqual([[Number(retrying.id), 'pending']]);
      receiver.script([]);
    });

    it('a disabled webhook gets no events; a deleted one takes its log with it', async () => {
      const webhook = await createWebhook({ enabled: false, events: ['channel.disabled'] });
      const channelId = await harness.addChannel({ name: 'quiet', key: 'sk-good' });
      await harness.admin('PUT', '/api/channel/', { id: channelId, status: ChannelStatus.disabled });
      expect(await deliveries()).toHaveLength(0);
      await api('POST', `/api/webhook/${webhook.id}/test`);
      await receiver.waitFor((all) => all.length === 1);
      await api('DELETE', `/api/webhook/${webhook.id}`);
      expect(await deliveries()).toHaveLength(0);
    });
  });
}
