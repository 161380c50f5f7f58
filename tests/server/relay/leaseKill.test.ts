// A node killed while it holds leased quota: a gateway process on PostgreSQL
// (and MySQL) answers a run of requests and is killed with SIGKILL the moment
// the last answer is in, so it still holds its lease (given back only after a
// quarter second idle) and perhaps a batch of settlements not yet written. A
// second node, once the dead one's lease has run out, gives the lease back;
// then the ledger read from the database is exact for the user and the key:
// start - consume logs = balance, nothing held, no lease row left.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import type { DatabaseConfig } from '../../../server/config';
import { openDatabase, type Database } from '../../../server/db/database';
import { rootConsole, spawnGatewayProcess, type GatewayProcess } from '../../support/gatewayProcess';
import { ledgerState } from '../../support/ledgerState';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';

const ROOT_PASSWORD = 'lease-kill-root-password';
const USER_START = 500_000;
const TOKEN_START = 400_000;
const LEASE_SECONDS = 2;

const targets = (await databaseTargets('a node killed holding leased quota')).filter((target) => target.name !== 'sqlite');

const startNode = (database: DatabaseConfig, secret: string, consoleDir: string) =>
  spawnGatewayProcess(
    {
      SQL_DSN: database.dialect === 'sqlite' ? '' : database.connectionString,
      SESSION_SECRET: secret,
      CONSOLE_DIR: consoleDir,
      INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
      NODE_LEASE_SECONDS: String(LEASE_SECONDS),
      NODE_LEASE_RENEW_SECONDS: '0.25',
    },
    45_000,
  );

for (const target of targets) {
  describe.runIf(target.available)(`a node killed holding leased quota on ${target.name}`, () => {
    let database: TestDatabase;
    let db: Kysely<Database>;
    let emulator: OpenAIEmulator;
    let consoleDir: string;
    const nodes: GatewayProcess[] = [];
    const secret = randomBytes(32).toString('hex');

    beforeAll(async () => {
      database = await target.create();
      consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-lease-kill-'));
      emulator = await startOpenAIEmulator();
      nodes.push(await startNode(database.config, secret, consoleDir));
      db = (await openDatabase(database.config)).db;
    });

    afterAll(async () => {
      await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
      await db?.destroy();
      await emulator?.close();
      await database?.drop();
      if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
    });

    it('gives the lease back once, and the ledger is exact to the unit', async () => {
      const admin = await rootConsole(nodes[0].baseUrl, ROOT_PASSWORD);
      await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
      const token = await admin('/api/token/', { name: 'lease kill', remain_quota: TOKEN_START });
      const tokenId = Number(token.id);
      await db.updateTable('users').set({ quota: USER_START }).where('id', '=', 1).execute();

      const ask = (index: number) =>
        fetch(`${nodes[0].baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` },
          body: JSON.stringify({ model: 'gpt-3.5-turbo', max_tokens: 20, messages: [{ role: 'user', content: `request ${index}` }] }),
        }).then((response) => response.status);
      const statuses: number[] = [];
      for (let round = 0; round < 5; round += 1)
        statuses.push(...(await Promise.all(Array.from({ length: 8 }, (_, index) => ask(round * 8 + index)))));
      expect(statuses.every((status) => status === 200)).toBe(true);
      // a slow stream keeps the lease in use while the answered requests' settlements are written
      const stream = fetch(`${nodes[0].baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` },
        body: JSON.stringify({
          model: 'gpt-3.5-turbo',
          stream: true,
          max_tokens: 20,
          emulator: { chunks: 40, delay_ms: 100 },
          messages: [{ role: 'user', content: 'slow' }],
        }),
      })
        .then((response) => response.text())
        .catch(() => '');
      const logsDeadline = Date.now() + 10_000;
      while ((await ledgerState(db, 1, tokenId)).logged === 0 && Date.now() < logsDeadline)
        await new Promise((wake) => setTimeout(wake, 50));
      const [{ id: nodeId }] = await db.selectFrom('relay_nodes').select('id').execute();
      await nodes[0].stop('SIGKILL');
      await stream;

      // it died holding a lease of the user's and the key's quota
      const leased = await db
        .selectFrom('reservations')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('sum'))
        .where('node_id', '=', nodeId)
        .where('state', '=', 1)
        .executeTakeFirstOrThrow();
      expect(Number(leased.sum)).toBeGreaterThan(0);
      const held = await db.selectFrom('users').select('held_quota').where('id', '=', 1).executeTakeFirstOrThrow();
      expect(Number(held.held_quota)).toBe(Number(leased.sum));

      // another node sweeps it once the dead one's lease has run out
      nodes.push(await startNode(database.config, secret, consoleDir));
      const ledger = () => ledgerState(db, 1, tokenId);
      const deadline = Date.now() + 20_000;
      let now = await ledger();
      while ((now.userHeld !== 0 || now.tokenHeld !== 0 || now.reservationsHeld !== 0) && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 200));
        now = await ledger();
      }
      expect(now).toMatchObject({ userHeld: 0, tokenHeld: 0, reservationsHeld: 0 });
      expect(now.logged).toBeGreaterThan(0);
      expect(now.quota).toBe(USER_START - now.logged);
      expect(now.remain).toBe(TOKEN_START - now.logged);
      const returned = await db
        .selectFrom('logs')
        .select(['quota', 'content'])
        .where('type', '=', LogType.system)
        .where('content', 'like', 'returned % cut off')
        .execute();
      expect(returned.reduce((sum, log) => sum + Number(log.quota), 0)).toBe(Number(leased.sum));
      expect(returned.every((log) => log.content.includes(`node ${nodeId}`))).toBe(true);

      // the second node stops cleanly: nothing changes
      await nodes[1].stop('SIGTERM');
      expect(await ledger()).toEqual(now);
    });
  });
}
