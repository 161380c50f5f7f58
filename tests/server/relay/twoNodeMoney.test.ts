// The money test: two gateway processes on one PostgreSQL (and one
// MySQL) database with Redis, 200 concurrent relayed requests against one
// limited user and one limited key (half streamed, half without max_tokens,
// every answer longer than what max_tokens allows), one node killed with
// SIGKILL in the middle and started again. Once the dead node's lease has run
// out and a live node has swept its reservations, the ledger must be exact,
// read straight from the database: start - sum(consume logs) = balance now,
// for the user and for the key; nothing held; no reservation left held; no
// balance below zero (the only way there is a provider's overrun, and these
// balances are large enough that the overruns fit).
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import type { DatabaseConfig } from '../../../server/config';
import { openDatabase, type Database } from '../../../server/db/database';
import { rootConsole, spawnGatewayProcess, type GatewayProcess as Node } from '../../support/gatewayProcess';
import { databaseTargets, REDIS_URL, redisAvailable, redisTestPrefix, type TestDatabase } from '../../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';

const ROOT_PASSWORD = 'two-node-money-root-password';
const USER_START = 300_000;
const TOKEN_START = 200_000;
const LEASE_SECONDS = 3;

const targets = (await databaseTargets('two-node money')).filter((target) => target.name !== 'sqlite');
const redisUp = await redisAvailable('two-node money');

const startNode = (database: DatabaseConfig, secret: string, consoleDir: string, redisPrefix: string) =>
  spawnGatewayProcess(
    {
      SQL_DSN: database.dialect === 'sqlite' ? '' : database.connectionString,
      REDIS_CONN_STRING: REDIS_URL,
      // the describe's own: the database is fresh, so its user and key are 1 again, and a node killed in the last
      // describe still holds places in flight for them for 30 s
      REDIS_KEY_PREFIX: redisPrefix,
      SESSION_SECRET: secret,
      CONSOLE_DIR: consoleDir,
      INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
      NODE_LEASE_SECONDS: String(LEASE_SECONDS),
      NODE_LEASE_RENEW_SECONDS: '0.25',
      // every answer names the node that gave it: the test knows which relay_nodes row is the node it kills
      NODE_ID_HEADER: '1',
    },
    45_000,
  );

for (const target of targets) {
  describe.runIf(target.available && redisUp)(`two nodes on ${target.name}, one killed mid-load`, () => {
    let database: TestDatabase;
    let db: Kysely<Database>;
    let emulator: OpenAIEmulator;
    let consoleDir: string;
    const nodes: Node[] = [];
    let tokenKey = '';
    let tokenId = 0;
    const secret = randomBytes(32).toString('hex');
    const redisPrefix = redisTestPrefix();

    beforeAll(async () => {
      database = await target.create();
      consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-two-nodes-'));
      emulator = await startOpenAIEmulator();
      nodes.push(await startNode(database.config, secret, consoleDir, redisPrefix));
      nodes.push(await startNode(database.config, secret, consoleDir, redisPrefix));
      db = (await openDatabase(database.config)).db;

      const admin = await rootConsole(nodes[0].baseUrl, ROOT_PASSWORD);
      await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
      // the load is 200 requests at once: a key's in-flight limit (128 across the cluster by default) would refuse a
      // share of them that depends on how many the killed node held (39 answered of the >40 asked, on Node 24 in CI);
      // what this test holds is the ledger, so only the quota may refuse (the key may have its account's 256)
      const token = await admin('/api/token/', { name: 'two nodes', remain_quota: TOKEN_START, concurrency_limit: 256 });
      tokenKey = token.key;
      tokenId = Number(token.id);
      await db.updateTable('users').set({ quota: USER_START }).where('id', '=', 1).execute();
    }, 120_000);

    afterAll(async () => {
      await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
      await db?.destroy();
      await emulator?.close();
      await database?.drop();
      if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
    });

    const ledger = async () => {
      const user = await db.selectFrom('users').select(['quota', 'held_quota']).where('id', '=', 1).executeTakeFirstOrThrow();
      const token = await db
        .selectFrom('tokens')
        .select(['remain_quota', 'held_quota'])
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      const sum = (column: 'user_id' | 'token_id', id: number) =>
        db
          .selectFrom('logs')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
          .where('type', '=', LogType.consume)
          .where(column, '=', id)
          .executeTakeFirstOrThrow()
          .then((row) => Number(row.sum));
      const held = await db
        .selectFrom('reservations')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('state', '=', 1)
        .executeTakeFirstOrThrow();
      return {
        quota: Number(user.quota),
        userHeld: Number(user.held_quota),
        remain: Number(token.remain_quota),
        tokenHeld: Number(token.held_quota),
        userLogged: await sum('user_id', 1),
        tokenLogged: await sum('token_id', tokenId),
        reservationsHeld: Number(held.count),
      };
    };

    it('keeps the ledger exact: start - consume logs = balance, nothing held, for the user and the key', async () => {
      // two long streams on node 2 first (4 s each), on their own so nothing else competes for their quota: whatever
      // the load does next (on a loaded machine most of it may be refused for quota, and node 2's other leases given
      // back within milliseconds), node 2 holds their quota, in the database, when it is killed
      const anchors = 2;
      const send = (index: number) => {
        const anchor = index < anchors;
        const node = anchor ? nodes[1] : nodes[index % 2];
        const streamed = anchor || index % 4 < 2;
        const unlimited = index % 2 === 0;
        // every answer is longer than max_tokens allows (40 tokens against 20): the provider overruns
        const body = {
          model: 'gpt-3.5-turbo',
          stream: streamed,
          ...(unlimited ? {} : { max_tokens: 20 }),
          emulator: { chunks: 40, delay_ms: anchor ? 100 : streamed ? 15 : 0 },
          messages: [{ role: 'user', content: anchor ? `anchor ${index}` : `request ${index}` }],
        };
        return fetch(`${node.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer sk-${tokenKey}` },
          body: JSON.stringify(body),
        })
          .then(async (response) => ({ status: response.status, text: await response.text() }))
          .catch((error: Error) => ({ status: 0, text: error.message }));
      };
      const anchorsUpstream = () => emulator.requests.filter((request) => JSON.stringify(request.body).includes('"anchor ')).length;
      const requests = Array.from({ length: anchors }, (_, index) => send(index));
      const anchorDeadline = Date.now() + 10_000;
      while (anchorsUpstream() < anchors && Date.now() < anchorDeadline) await new Promise((wake) => setTimeout(wake, 5));
      expect(anchorsUpstream()).toBe(anchors);
      for (let index = anchors; index < 200; index += 1) requests.push(send(index));
      // in the middle of the load (a third of it upstream, or as much as goes up before the rest is refused for quota,
      // streams still running): node 2 dies without a word
      const killedId = (await fetch(`${nodes[1].baseUrl}/api/status`)).headers.get('x-switchboard-node');
      expect(killedId).toBeTruthy();
      const heldBy = async (nodeId: string) =>
        Number(
          (
            await db
              .selectFrom('reservations')
              .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('sum'))
              .where('state', '=', 1)
              .where('node_id', '=', nodeId)
              .executeTakeFirstOrThrow()
          ).sum,
        );
      const loadDeadline = Date.now() + 10_000;
      let upstream = emulator.requests.length;
      let progressed = Date.now();
      while (emulator.requests.length < anchors + 68 && Date.now() - progressed < 300 && Date.now() < loadDeadline) {
        await new Promise((wake) => setTimeout(wake, 5));
        if (emulator.requests.length > upstream) [upstream, progressed] = [emulator.requests.length, Date.now()];
      }
      await nodes[1].stop('SIGKILL');
      // what it held when it died: a COMMIT it sent just before may land a moment after; nobody sweeps it before its lease (3 s) runs out
      await new Promise((wake) => setTimeout(wake, 1500));
      const deadHeld = { sum: await heldBy(killedId!) };
      const byNode = await db
        .selectFrom('reservations')
        .select(['node_id', 'state'])
        .select((eb) => eb.fn.countAll().as('count'))
        .groupBy(['node_id', 'state'])
        .execute();
      expect(
        Number(deadHeld.sum),
        JSON.stringify({
          killedId,
          byNode,
          sent: emulator.requests.length,
          nodes: await db.selectFrom('relay_nodes').selectAll().execute(),
        }),
      ).toBeGreaterThan(0);
      const answers = await Promise.all(requests);
      const statuses = new Map<number, number>();
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const refusal = answers.find((answer) => answer.status === 429)?.text ?? '';
      expect(statuses.get(200) ?? 0, JSON.stringify([...statuses, refusal.slice(0, 300)])).toBeGreaterThan(40);
      for (const status of statuses.keys()) expect([0, 200, 429], JSON.stringify([...statuses])).toContain(status);

      // it comes back as a new node; the old one's lease runs out and a live node sweeps what it held
      nodes[1] = await startNode(database.config, secret, consoleDir, redisPrefix);
      const deadline = Date.now() + 20_000;
      let now = await ledger();
      while ((now.userHeld !== 0 || now.tokenHeld !== 0 || now.reservationsHeld !== 0) && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 200));
        now = await ledger();
      }
      expect(now).toMatchObject({ userHeld: 0, tokenHeld: 0, reservationsHeld: 0 });
      expect(now.quota).toBe(USER_START - now.userLogged);
      expect(now.remain).toBe(TOKEN_START - now.tokenLogged);
      expect(now.userLogged).toBeGreaterThan(0);
      expect(now.quota).toBeGreaterThanOrEqual(0);
      expect(now.remain).toBeGreaterThanOrEqual(0);
      // what the killed node's requests held came back once, and the user's log says so
      const returned = await db
        .selectFrom('logs')
        .select(['user_id', 'quota', 'content'])
        .where('type', '=', LogType.system)
        .where('content', 'like', 'returned % cut off')
        .execute();
      // swept as each reservation's lease ran out, so perhaps in a few rounds, each logged once
      expect(returned.every((log) => Number(log.user_id) === 1 && log.content.includes(`node ${killedId}`))).toBe(true);
      // at least what it held at the snapshot; more if a loaded machine let its lease lapse a moment before the kill
      // (the exactness of the return is the invariant above: returned twice, the balances would be off)
      expect(
        returned.reduce((sum, log) => sum + Number(log.quota), 0),
        JSON.stringify({ killedId, returned }),
      ).toBeGreaterThanOrEqual(Number(deadHeld.sum));

      // both stop cleanly; nothing changes
      await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
      expect(await ledger()).toEqual(now);
    });
  });
}
