// SIGTERM on a real gateway process with streams in flight, on a SQLite file
// and on PostgreSQL. The node stops taking requests at once; streams that end
// within SHUTDOWN_GRACE_SECONDS end normally and are billed from the
// upstream's usage; the ones still running at the end of the grace are cut,
// their clients keep what was delivered, and each is billed for it (a consume
// log marked estimated). The process then exits 0 with nothing held and the
// ledger balanced. (The old stop force-exited after 10 s with code 1 and left
// the long streams unbilled.)
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { rootConsole, spawnGatewayProcess, type GatewayProcess as Gateway } from '../../support/gatewayProcess';
import { databaseTargets, type TestDatabase } from '../../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';

const ROOT_PASSWORD = 'graceful-shutdown-root-password';
const GRACE_SECONDS = 3;
const SHORT_CHUNKS = 8;

const startGateway = (env: Record<string, string>, consoleDir: string) =>
  spawnGatewayProcess({
    DATA_DIR: consoleDir,
    CONSOLE_DIR: consoleDir,
    INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
    SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
    ...env,
  });

/** Reads the database the gateway wrote, through a connection of the test's own. */
interface Reader {
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

function sqliteReader(path: string): Reader {
  const db = new Database(path, { readonly: true });
  return { rows: async (sql) => db.prepare(sql).all() as Array<Record<string, unknown>>, close: async () => void db.close() };
}

async function postgresReader(connectionString: string): Promise<Reader> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  return { rows: async (sql) => (await client.query(sql)).rows, close: () => client.end() };
}

/** One streamed request, read to its end (or its cut) in the background. */
function openStream(baseUrl: string, key: string, chunks: number, delayMs: number) {
  let markFirst: () => void = () => undefined;
  const state = { text: '', firstChunk: new Promise<void>((resolve) => (markFirst = resolve)), done: Promise.resolve() };
  state.done = (async () => {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer sk-${key}` },
      body: JSON.stringify({
        model: 'gpt-3.5-turbo',
        stream: true,
        max_tokens: 1000,
        emulator: { chunks, delay_ms: delayMs },
        messages: [{ role: 'user', content: 'tell me a story' }],
      }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        state.text += decoder.decode(value, { stream: true });
        if (state.text.includes('word0')) markFirst();
      }
    } catch {
      // a cut connection: what arrived before it is what counts
    }
    markFirst();
  })();
  return state;
}

const deliveredWords = (text: string) => (text.match(/word\d+/g) ?? []).length;

const targets = await databaseTargets('graceful shutdown');

for (const target of targets.filter((candidate) => candidate.name !== 'mysql')) {
  describe.runIf(target.available)(`SIGTERM with streams in flight (${target.name})`, () => {
    let dataDir: string;
    let database: TestDatabase | undefined;
    let emulator: OpenAIEmulator;
    let gateway: Gateway | undefined;
    let reader: Reader;
    let env: Record<string, string>;

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'switchboard-shutdown-'));
      emulator = await startOpenAIEmulator({ record: false });
      if (target.name === 'sqlite') {
        env = { SQLITE_PATH: join(dataDir, 'switchboard.db') };
      } else {
        database = await target.create();
        env = { SQL_DSN: (database.config as { connectionString: string }).connectionString };
      }
    });

    afterAll(async () => {
      if (gateway && gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
      await gateway?.exited;
      await reader?.close();
      await emulator?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('finishes the short streams, cuts and bills the long ones at the grace, and exits 0 with nothing held', async () => {
      gateway = await startGateway(env, dataDir);
      const { baseUrl } = gateway;
      const admin = await rootConsole(baseUrl, ROOT_PASSWORD);
      await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
      // an upstream that never answers: a plain request to it is still waiting when the grace ends
      await admin('/api/channel/', { name: 'hung', type: 8, key: 'sk-hang', base_url: emulator.baseUrl, models: 'gpt-4' });
      const token = await admin('/api/token/', { name: 'shutdown', remain_quota: 10_000_000 });
      const tokenId = Number(token.id);
      reader = target.name === 'sqlite' ? sqliteReader(env.SQLITE_PATH) : await postgresReader(env.SQL_DSN);
      const balances = async () => {
        const [user] = await reader.rows('select quota, held_quota from users where id = 1');
        const [tokenRow] = await reader.rows(`select remain_quota, held_quota from tokens where id = ${tokenId}`);
        return {
          quota: Number(user.quota),
          userHeld: Number(user.held_quota),
          remain: Number(tokenRow.remain_quota),
          tokenHeld: Number(tokenRow.held_quota),
        };
      };
      const before = await balances();

      // short: 8 chunks 50 ms apart (about 0.4 s); long: 400 chunks 50 ms apart (20 s)
      const short = Array.from({ length: 3 }, () => openStream(baseUrl, token.key, SHORT_CHUNKS, 50));
      const long = Array.from({ length: 3 }, () => openStream(baseUrl, token.key, 400, 50));
      await Promise.all([...short, ...long].map((stream) => stream.firstChunk));
      const waiting = fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` },
        body: JSON.stringify({ model: 'gpt-4', max_tokens: 100, messages: [{ role: 'user', content: 'are you there?' }] }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as { error?: { code?: string } } }));
      // its reservation is taken within a moment
      await new Promise((wake) => setTimeout(wake, 300));

      const signalledAt = Date.now();
      gateway.child.kill('SIGTERM');
      await new Promise((wake) => setTimeout(wake, 300));
      // no new work once closing: a quick 503, or the connection is refused
      const refusedStartedAt = Date.now();
      const refused = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` },
        body: JSON.stringify({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'too late' }] }),
      }).then(
        (response) => response.status,
        () => 'refused',
      );
      expect([503, 'refused']).toContain(refused);
      expect(Date.now() - refusedStartedAt).toBeLessThan(1_000);

      const code = await gateway.exited;
      const stoppedAfter = Date.now() - signalledAt;
      await Promise.all([...short, ...long].map((stream) => stream.done));
      // the call still waiting on its upstream at the end of the grace: aborted, told why, charged nothing
      const cutWhileWaiting = await waiting;
      expect(cutWhileWaiting.status).toBe(503);
      expect(cutWhileWaiting.body.error?.code).toBe('shutting_down');
      expect(code, gateway.output()).toBe(0);
      expect(stoppedAfter).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000 - 100);
      expect(stoppedAfter).toBeLessThan(GRACE_SECONDS * 1000 + 5_000);

      for (const stream of short) {
        expect(stream.text).toContain('data: [DONE]');
        expect(deliveredWords(stream.text)).toBe(SHORT_CHUNKS);
      }
      for (const stream of long) {
        expect(stream.text).not.toContain('data: [DONE]');
        // cut at the grace: about GRACE_SECONDS / 50 ms events arrived, far from all 400
        expect(deliveredWords(stream.text)).toBeGreaterThan(10);
        expect(deliveredWords(stream.text)).toBeLessThan(400);
      }

      const logs = (
        await reader.rows(
          `select quota, completion_tokens, estimated from logs where type = ${LogType.consume} and token_id = ${tokenId} order by id`,
        )
      ).map((row) => ({
        quota: Number(row.quota),
        completionTokens: Number(row.completion_tokens),
        estimated: Boolean(Number(row.estimated)),
      }));
      expect(logs).toHaveLength(6);
      const exact = logs.filter((log) => !log.estimated);
      const cut = logs.filter((log) => log.estimated);
      expect(exact.map((log) => log.completionTokens)).toEqual([SHORT_CHUNKS, SHORT_CHUNKS, SHORT_CHUNKS]);
      expect(cut).toHaveLength(3);
      // each cut stream is charged for the words it delivered (counted locally, so at least one token a word)
      const longWords = long.map((stream) => deliveredWords(stream.text)).sort((a, b) => a - b);
      const cutTokens = cut.map((log) => log.completionTokens).sort((a, b) => a - b);
      for (let index = 0; index < 3; index += 1) expect(cutTokens[index]).toBeGreaterThanOrEqual(longWords[index]);
      for (const log of logs) expect(log.quota).toBeGreaterThan(0);

      // the ledger: nothing held, and the balances moved by exactly what the logs say
      const after = await balances();
      const charged = logs.reduce((sum, log) => sum + log.quota, 0);
      expect(after).toEqual({ quota: before.quota - charged, userHeld: 0, remain: before.remain - charged, tokenHeld: 0 });
    }, 120_000);
  });
}
