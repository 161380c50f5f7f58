// A gateway killed outright (kill -9) in the middle of a streamed request: the
// reservation was committed, the settlement never came. The next start on the
// same SQLite file gives the user and the token back what that request held,
// and says so in the user's log. A second process started next to a live one
// gives nothing back: the live one's requests still hold their quota.
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../../common/roles';
import { sqliteAddon } from '../../../server/db/sqliteAddon';
import { rootConsole, spawnGatewayProcess, type GatewayProcess as Gateway } from '../../support/gatewayProcess';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';

const ROOT_PASSWORD = 'crash-recovery-root-password';

/** The gateway on `databasePath`, its console folder empty (no console to serve). */
const startGateway = (databasePath: string, consoleDir: string) =>
  spawnGatewayProcess({ SQLITE_PATH: databasePath, CONSOLE_DIR: consoleDir, INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });

describe('a gateway killed mid-request', () => {
  let dataDir: string;
  let databasePath: string;
  let emulator: OpenAIEmulator;
  let reader: Database.Database;
  const running: Gateway[] = [];
  let tokenKey = '';
  let tokenId = 0;

  /** Balances as the database has them, read through a connection of the test's own. */
  const balances = () => {
    const user = reader.prepare('select quota, held_quota from users where id = 1').get() as { quota: number; held_quota: number };
    const token = reader.prepare('select remain_quota, held_quota from tokens where id = ?').get(tokenId) as {
      remain_quota: number;
      held_quota: number;
    };
    return { quota: user.quota, userHeld: user.held_quota, remain: token.remain_quota, tokenHeld: token.held_quota };
  };
  const systemLogs = () =>
    reader.prepare('select user_id, quota, content from logs where type = ? order by id').all(LogType.system) as Array<{
      user_id: number;
      quota: number;
      content: string;
    }>;

  /** Starts a long streamed request and resolves once its first chunk arrived (so its reservation is committed). */
  const startLongStream = async (gateway: Gateway) => {
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer sk-${tokenKey}` },
      body: JSON.stringify({
        model: 'gpt-3.5-turbo',
        stream: true,
        max_tokens: 400,
        emulator: { chunks: 200, delay_ms: 50 },
        messages: [{ role: 'user', content: 'a long story, please' }],
      }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const stream = response.body!.getReader();
    await stream.read();
    return () => {
      controller.abort();
      return stream.closed.catch(() => undefined);
    };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-crash-'));
    databasePath = join(dataDir, 'switchboard.db');
    emulator = await startOpenAIEmulator({ record: false });
    const first = await startGateway(databasePath, dataDir);
    running.push(first);
    const admin = await rootConsole(first.baseUrl, ROOT_PASSWORD);
    await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
    const token = await admin('/api/token/', { name: 'crash', remain_quota: 1_000_000 });
    tokenKey = token.key;
    tokenId = Number(token.id);
    reader = new Database(databasePath, { readonly: true, ...sqliteAddon() });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.stop('SIGKILL')));
    reader?.close();
    await emulator?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('gives back what the cut-off request held on the next start, and logs it', async () => {
    const before = balances();
    expect(before).toMatchObject({ userHeld: 0, tokenHeld: 0 });
    const stopStream = await startLongStream(running[0]);
    const during = balances();
    expect(during.userHeld).toBeGreaterThan(0);
    expect(during.tokenHeld).toBe(during.userHeld);
    expect(during.quota).toBe(before.quota - during.userHeld);
    expect(during.remain).toBe(before.remain - during.tokenHeld);

    await running.shift()!.stop('SIGKILL');
    await stopStream();
    // the killed process settled nothing: the reservation is still taken
    expect(balances()).toEqual(during);

    const restarted = await startGateway(databasePath, dataDir);
    running.push(restarted);
    expect(restarted.output()).toContain(`returned ${during.userHeld} quota to 1 user(s)`);
    expect(balances()).toEqual(before);
    expect(systemLogs().at(-1)).toEqual({
      user_id: 1,
      quota: during.userHeld,
      content: `returned ${during.userHeld} quota held by requests that a restart cut off`,
    });
    // the instance lock is one small file beside the database, with no journal of its own
    expect(readdirSync(dataDir).filter((name) => name.includes('.lock'))).toEqual(['switchboard.db.lock']);
  }, 120_000);

  it('gives nothing back when another process on the same file is live', async () => {
    const live = running[0];
    const before = balances();
    const logsBefore = systemLogs().length;
    const stopStream = await startLongStream(live);
    const during = balances();
    expect(during.userHeld).toBeGreaterThan(0);

    const second = await startGateway(databasePath, dataDir);
    running.push(second);
    expect(second.output()).toContain('another gateway process is using this SQLite file');
    expect(balances()).toEqual(during);
    expect(systemLogs()).toHaveLength(logsBefore);
    await running.pop()!.stop('SIGTERM');

    // the live process still settles its own request: the client leaves, it bills what was streamed
    await stopStream();
    const deadline = Date.now() + 10_000;
    while (balances().userHeld !== 0 && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 50));
    const after = balances();
    expect(after).toMatchObject({ userHeld: 0, tokenHeld: 0 });
    expect(after.quota).toBeLessThan(before.quota);
    expect(after.quota).toBeGreaterThan(during.quota);
  }, 120_000);
});
