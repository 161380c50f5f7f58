// Two gateway processes on one PostgreSQL database, both running the webhook
// delivery loop: every event is delivered exactly once (the per-row claim),
// retries of a failing receiver are not doubled by the second node, and the
// events fired by the real triggers on both nodes at once (a channel disabled
// by a dead key, a token relayed to exhaustion) are written once.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../server/config';
import { openDatabase, type Database } from '../../server/db/database';
import { spawnGatewayProcess, type GatewayProcess } from '../support/gatewayProcess';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';

const ROOT_PASSWORD = 'two-node-webhooks-root-password';
const targets = (await databaseTargets('webhooks on two nodes')).filter((target) => target.name === 'postgres');

const startNode = (database: DatabaseConfig, secret: string, consoleDir: string) =>
  spawnGatewayProcess(
    {
      SQL_DSN: database.dialect === 'sqlite' ? '' : database.connectionString,
      SESSION_SECRET: secret,
      CONSOLE_DIR: consoleDir,
      INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
      WEBHOOK_RETRY_DELAYS_SECONDS: '0.05,0.1,0.2',
      WEBHOOK_POLL_INTERVAL_SECONDS: '0.02',
    },
    45_000,
  );

for (const target of targets) {
  describe.runIf(target.available)(`webhooks from two nodes on ${target.name}`, () => {
    let database: TestDatabase;
    let db: Kysely<Database>;
    let emulator: OpenAIEmulator;
    let receiver: WebhookReceiver;
    let consoleDir: string;
    const nodes: GatewayProcess[] = [];
    let cookie = '';
    let webhookId = 0;
    const secret = randomBytes(32).toString('hex');

    const call = async (node: GatewayProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${node.baseUrl}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), cookie, 'sec-fetch-site': 'same-origin' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, json: (await response.json()) as any };
    };
    const relay = (node: GatewayProcess, key: string, body: Record<string, unknown> = {}) =>
      fetch(`${node.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${key}` },
        body: JSON.stringify({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }], ...body }),
      }).then(async (response) => {
        await response.text();
        return response.status;
      });
    const deliveriesOf = (type: string) => db.selectFrom('webhook_deliveries').selectAll().where('event_type', '=', type).execute();

    beforeAll(async () => {
      database = await target.create();
      consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-webhook-nodes-'));
      emulator = await startOpenAIEmulator();
      receiver = await startWebhookReceiver();
      nodes.push(await startNode(database.config, secret, consoleDir));
      nodes.push(await startNode(database.config, secret, consoleDir));
      db = (await openDatabase(database.config)).db;
      const login = await fetch(`${nodes[0].baseUrl}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
      });
      cookie = String(login.headers.get('set-cookie')).split(';')[0];
      // each node keeps its own copy of the options: set the toggle on both
      for (const node of nodes)
        expect((await call(node, 'PUT', '/api/option/', { key: 'AutomaticDisableChannelEnabled', value: 'true' })).json.success).toBe(true);
      const created = await call(nodes[0], 'POST', '/api/webhook', {
        name: 'both nodes',
        url: receiver.url,
        events: ['channel.disabled', 'channel.enabled', 'token.exhausted', 'user.balance_low'],
      });
      expect(created.status).toBe(201);
      webhookId = created.json.id;
    }, 120_000);

    afterAll(async () => {
      await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
      await db?.destroy();
      await emulator?.close();
      await receiver?.close();
      await database?.drop();
      if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
    });

    it('delivers each of 40 events, queued on both nodes at once, exactly once', async () => {
      const created = await Promise.all(
        Array.from({ length: 40 }, (_, index) => call(nodes[index % 2], 'POST', `/api/webhook/${webhookId}/test`)),
      );
      expect(created.filter((answer) => answer.status !== 201)).toEqual([]);
      const eventIds = new Set(created.map((answer) => answer.json.event_id as string));
      expect(eventIds.size).toBe(40);
      await eventually(
        () => deliveriesOf('webhook.test'),
        (rows) => rows.length === 40 && rows.every((row) => row.status === 'delivered'),
        60_000,
      );
      const received = receiver.received.filter((delivery) => delivery.json.type === 'webhook.test');
      expect(received).toHaveLength(40);
      expect(new Set(received.map((delivery) => delivery.json.id))).toEqual(eventIds);
      expect((await deliveriesOf('webhook.test')).every((row) => Number(row.attempts) === 1)).toBe(true);
    });

    it('a receiver failing twice gets the event three times in all, not more, with both nodes polling', async () => {
      receiver.received.length = 0;
      receiver.script([500, 500]);
      const created = await call(nodes[1], 'POST', `/api/webhook/${webhookId}/test`);
      const [row] = await eventually(
        () => db.selectFrom('webhook_deliveries').selectAll().where('id', '=', created.json.id).execute(),
        (rows) => rows[0]?.status === 'delivered',
        60_000,
      );
      expect(Number(row.attempts)).toBe(3);
      // a last pass of both loops must not send it again
      await new Promise((wake) => setTimeout(wake, 300));
      expect(receiver.received.map((delivery) => delivery.json.id)).toEqual([
        created.json.event_id,
        created.json.event_id,
        created.json.event_id,
      ]);
    });

    it('one channel.disabled when both nodes see the same dead key at once', async () => {
      receiver.received.length = 0;
      const channel = await call(nodes[0], 'POST', '/api/channel/', {
        name: 'dead',
        type: 8,
        key: 'sk-dead',
        base_url: emulator.baseUrl,
        models: 'gpt-3.5-turbo',
      });
      expect(channel.json.success).toBe(true);
      const token = await call(nodes[0], 'POST', '/api/token/', { name: 'unlimited', unlimited_quota: true });
      const statuses = await Promise.all(Array.from({ length: 10 }, (_, index) => relay(nodes[index % 2], token.json.data.key)));
      expect(statuses.every((status) => status >= 400)).toBe(true);
      await eventually(
        () => deliveriesOf('channel.disabled'),
        (rows) => rows.length === 1 && rows[0].status === 'delivered',
        60_000,
      );
      const disabled = receiver.received.filter((delivery) => delivery.json.type === 'channel.disabled');
      expect(disabled).toHaveLength(1);
      expect(disabled[0].json.data.channel.id).toBe(channel.json.data.ids[0]);
      await call(nodes[0], 'DELETE', `/api/channel/${channel.json.data.ids[0]}/`);
    });

    it('one token.exhausted when a token is relayed to exhaustion through both nodes', async () => {
      receiver.received.length = 0;
      const channel = await call(nodes[0], 'POST', '/api/channel/', {
        name: 'good',
        type: 8,
        key: 'sk-good',
        base_url: emulator.baseUrl,
        models: 'gpt-3.5-turbo',
      });
      expect(channel.json.success).toBe(true);
      const token = await call(nodes[0], 'POST', '/api/token/', { name: 'small', remain_quota: 30 });
      const key = token.json.data.key as string;
      // the emulator overruns max_tokens and the overrun is billed, so the key ends at or below zero
      for (let round = 0; round < 100; round += 1) {
        const statuses = await Promise.all(nodes.map((node) => relay(node, key, { max_tokens: 1, emulator: { chunks: 40 } })));
        if (statuses.every((status) => status === 401)) break;
        await new Promise((wake) => setTimeout(wake, 100));
      }
      await eventually(
        () => deliveriesOf('token.exhausted'),
        (rows) => rows.length === 1 && rows[0].status === 'delivered',
        60_000,
      );
      const exhausted = receiver.received.filter((delivery) => delivery.json.type === 'token.exhausted');
      expect(exhausted).toHaveLength(1);
      expect(exhausted[0].json.data.token).toMatchObject({ id: token.json.data.id, name: 'small' });
    });
  });
}
