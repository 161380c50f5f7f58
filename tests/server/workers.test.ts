// WORKERS=2 (two worker processes on one node), as the image runs it: the bundle the
// Dockerfile's build stage makes (scripts/buildServer.mjs), started with the
// exact command line and environment of the Dockerfile's CMD and ENV, on
// PostgreSQL and Redis. Both workers serve relayed calls; the one running the
// reservation sweep, killed with SIGKILL under load, is replaced by a new
// worker, another takes the sweep over, and once the dead one's lease has run
// out the ledger is exact (start - consume logs = balance, nothing held); the
// image's health check answers; SIGTERM to the primary lets every worker
// finish its streams and write its bookkeeping, and all exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerState } from '../support/ledgerState';
import { openDatabase, type Database } from '../../server/db/database';
import { databaseTargets, REDIS_URL, redisAvailable, redisTestPrefix, type TestDatabase } from '../support/databases';
import { freePort, repoRoot } from '../e2e/support/gateway';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { rootConsole } from '../support/gatewayProcess';
import { sqliteAddonEnv } from '../support/gatewayCommand';

const ROOT_PASSWORD = 'workers-root-password';
const USER_START = 400_000;
const TOKEN_START = 300_000;

/** The runtime stage of the Dockerfile: its ENV pairs, its CMD and its HEALTHCHECK command, as JSON arrays. */
function imageRuntime(): { env: Record<string, string>; command: string[]; healthCheck: string[] } {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m);
  const runtime = stages[stages.length - 1];
  const env: Record<string, string> = {};
  for (const line of runtime.split('\n').filter((text) => text.startsWith('ENV '))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const [name, value] = pair.split('=');
      env[name] = value;
    }
  }
  const command = JSON.parse(runtime.match(/^CMD (\[.*\])$/m)![1]) as string[];
  const healthCheck = JSON.parse(runtime.match(/^HEALTHCHECK .*? CMD (\[.*\])$/m)![1]) as string[];
  return { env, command, healthCheck };
}

const targets = (await databaseTargets('workers')).filter((target) => target.name === 'postgres');
const redisUp = await redisAvailable('workers');
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

for (const target of targets) {
  describe.runIf(target.available && redisUp)(`WORKERS=2 with the image's start command, on ${target.name} and Redis`, () => {
    const image = imageRuntime();
    let database: TestDatabase;
    let db: Kysely<Database>;
    let emulator: OpenAIEmulator;
    let dataDir: string;
    let primary: ChildProcess;
    let output = '';
    let baseUrl = '';
    let port = 0;
    let tokenKey = '';
    let tokenId = 0;

    /** The workers the primary has started so far, pid → node id, from their own lines. */
    const workers = () => new Map([...output.matchAll(/worker (\d+) is node ([0-9a-f]+)/g)].map((match) => [Number(match[1]), match[2]]));
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const waitFor = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 45_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`${what} did not happen in time:\n${output}`);
        await sleep(100);
      }
    };
    const relay = (body: Record<string, unknown>) =>
      fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${tokenKey}` },
        body: JSON.stringify({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }], ...body }),
      })
        .then(async (response) => ({
          status: response.status,
          node: response.headers.get('x-switchboard-node') ?? '',
          text: await response.text(),
        }))
        .catch((error: Error) => ({ status: 0, node: '', text: error.message }));
    const ledger = () => ledgerState(db, 1, tokenId);
    const settledLedger = async () => {
      let now = await ledger();
      await waitFor('the ledger settling', async () => {
        now = await ledger();
        return now.userHeld === 0 && now.tokenHeld === 0 && now.reservationsHeld === 0;
      });
      return now;
    };

    beforeAll(async () => {
      // the build stage's `npm run build`, its gateway half: build/gateway.mjs
      const built = spawnSync(process.execPath, ['scripts/buildServer.mjs'], { cwd: repoRoot, encoding: 'utf8' });
      expect(built.status, built.stderr).toBe(0);
      database = await target.create();
      emulator = await startOpenAIEmulator();
      dataDir = mkdtempSync(join(tmpdir(), 'switchboard-workers-'));
      port = await freePort();
      expect(image.command[0]).toBe('node');
      primary = spawn(process.execPath, image.command.slice(1), {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? '',
          ...sqliteAddonEnv(),
          ...image.env,
          // loopback only, a free port, a data folder of the test's own
          HOST: '127.0.0.1',
          PORT: String(port),
          DATA_DIR: dataDir,
          CONSOLE_DIR: dataDir,
          SQL_DSN: database.config.dialect === 'postgres' ? database.config.connectionString : '',
          REDIS_CONN_STRING: REDIS_URL,
          REDIS_KEY_PREFIX: redisTestPrefix(),
          WORKERS: '2',
          NODE_ID_HEADER: '1',
          SESSION_SECRET: randomBytes(32).toString('hex'),
          INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
          LOG_LEVEL: 'warn',
          CHANNEL_RETEST_INTERVAL: '0',
          NODE_LEASE_SECONDS: '3',
          NODE_LEASE_RENEW_SECONDS: '0.25',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      primary.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      primary.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await waitFor('the gateway start', () => output.includes('gateway and console on') || primary.exitCode !== null, 90_000);
      expect(output).toContain('(postgres, 2 workers)');
      baseUrl = `http://127.0.0.1:${port}`;
      db = (await openDatabase(database.config)).db;

      const admin = await rootConsole(baseUrl, ROOT_PASSWORD);
      await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-3.5-turbo' });
      const token = await admin('/api/token/', { name: 'workers', remain_quota: TOKEN_START });
      tokenKey = token.key;
      tokenId = Number(token.id);
      // two workers started on an empty database at once: one created root, as user 1 (server/bootstrap.ts)
      expect(await db.selectFrom('users').select(['id', 'username']).execute()).toEqual([{ id: 1, username: 'root' }]);
      await db.updateTable('users').set({ quota: USER_START }).where('id', '=', 1).execute();
    }, 150_000);

    afterAll(async () => {
      if (primary && primary.exitCode === null && primary.signalCode === null) {
        primary.kill('SIGKILL');
        await new Promise((exited) => primary.once('exit', exited));
      }
      for (const pid of workers().keys()) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await db?.destroy();
      await emulator?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('serves from both workers, each a relay node of its own, and answers /api/status and the health check', async () => {
      await waitFor('both workers reporting', () => workers().size === 2);
      const nodeIds = [...workers().values()];
      // each worker holds a lease of its own in relay_nodes
      const leased = (await db.selectFrom('relay_nodes').select('id').execute()).map((row) => row.id);
      expect(leased.sort()).toEqual([...nodeIds].sort());

      // concurrent calls open connections of their own, which the primary hands out in turn
      const answers = await Promise.all(Array.from({ length: 32 }, () => relay({})));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((answer) => answer.node))).toEqual(new Set(nodeIds));

      // /metrics on either worker answers for both: the 32 relayed calls, whichever worker took each
      const totalOf = (text: string, series: string) =>
        text
          .split('\n')
          .filter((line) => line.startsWith(`${series}{`) || line.startsWith(`${series} `))
          .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
      const scrapes = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const response = await fetch(`${baseUrl}/metrics`);
          return {
            node: response.headers.get('x-switchboard-node') ?? '',
            workers: response.headers.get('x-switchboard-metrics-workers'),
            text: await response.text(),
          };
        }),
      );
      expect(new Set(scrapes.map((scrape) => scrape.node))).toEqual(new Set(nodeIds));
      for (const scrape of scrapes) {
        expect(scrape.workers).toBe('2');
        expect(totalOf(scrape.text, 'switchboard_relay_requests_total')).toBe(32);
      }

      const status = (await (await fetch(`${baseUrl}/api/status`)).json()) as { success: boolean };
      expect(status.success).toBe(true);
      // the image's HEALTHCHECK, run as Docker runs it: healthy exactly when /healthz answers 2xx
      const healthz = await fetch(`${baseUrl}/healthz`);
      const check = spawnSync(process.execPath, image.healthCheck.slice(1), {
        env: { PATH: process.env.PATH ?? '', ...sqliteAddonEnv(), PORT: String(port) },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(check.status, `/healthz answered ${healthz.status}`).toBe(healthz.ok ? 0 : 1);
    });

    it('replaces a worker killed under load, and its lease running out leaves the ledger exact', async () => {
      const before = workers();
      // fewer than the key's 64 requests in flight allowed
      const load = Array.from({ length: 48 }, (_, index) =>
        relay(index % 2 === 0 ? { stream: true, emulator: { chunks: 30, delay_ms: 10 } } : { max_tokens: 20, emulator: { chunks: 40 } }),
      );
      const sent = emulator.requests.length;
      await waitFor('the load reaching the upstream', () => emulator.requests.length >= sent + 20);
      // the victim is the worker sweeping for both now (the holder of the job lease of the reservation sweep)
      const sweepHolder = async () =>
        (await db.selectFrom('job_leases').select('holder').where('name', '=', 'reservation-sweep').executeTakeFirst())?.holder;
      const holder = await sweepHolder();
      const victim = [...before.entries()].find(([, nodeId]) => nodeId === holder)?.[0];
      expect(victim, `the sweep's lease is held by ${holder}, not one of ${JSON.stringify([...before])}`).toBeDefined();
      process.kill(victim!, 'SIGKILL');
      const answers = await Promise.all(load);
      // cut connections are what a killed worker leaves; a 429 is a refusal of the key's limits (the dead worker's requests count until its lease runs out)
      const statuses = new Map<number, number>();
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const refusals = answers.filter((answer) => answer.status === 429).map((answer) => answer.text);
      for (const status of statuses.keys()) expect([0, 200, 429], JSON.stringify([...statuses])).toContain(status);
      for (const text of refusals) expect(text).toMatch(/quota|in flight/i);
      expect(statuses.get(200) ?? 0).toBeGreaterThan(15);

      await waitFor('a new worker', () => workers().size === 3);
      expect(output).toMatch(new RegExp(`worker ${victim} exited \\(SIGKILL\\): starting another in 0.5 s`));
      const replacement = [...workers().entries()].find(([pid]) => !before.has(pid))!;
      expect(alive(replacement[0])).toBe(true);
      // the new worker serves
      await waitFor('the new worker serving', async () =>
        (await Promise.all(Array.from({ length: 8 }, () => relay({})))).some((answer) => answer.node === replacement[1]),
      );

      // what the dead worker held comes back once its lease (3 s) has run out, swept by a live worker
      const now = await settledLedger();
      expect(now.logged).toBeGreaterThan(0);
      expect(now.quota).toBe(USER_START - now.logged);
      expect(now.remain).toBe(TOKEN_START - now.logged);
      // a live worker took the sweep over once the dead one's claim ran out
      expect([...workers().values()].filter((nodeId) => nodeId !== before.get(victim!))).toContain(await sweepHolder());
      // and its lease row is gone with it
      await waitFor(
        "the dead worker's lease row going",
        async () => !(await db.selectFrom('relay_nodes').select('id').execute()).some((row) => row.id === before.get(victim!)),
      );
    }, 120_000);

    it('stops every worker on SIGTERM to the primary, after their streams finish and their bookkeeping is written', async () => {
      const pids = [...workers().keys()].filter(alive);
      expect(pids).toHaveLength(2);
      const streams = Array.from({ length: 8 }, () => relay({ stream: true, emulator: { chunks: 20, delay_ms: 100 } }));
      const sent = emulator.requests.length;
      await waitFor('the streams reaching the upstream', () => emulator.requests.length >= sent + 8);
      primary.kill('SIGTERM');
      const code = await new Promise<number | null>((exited) =>
        primary.exitCode !== null ? exited(primary.exitCode) : primary.once('exit', (exitCode) => exited(exitCode)),
      );
      expect(code, output).toBe(0);
      expect(output).toContain('SIGTERM received: stopping 2 worker(s)');
      const answers = await Promise.all(streams);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.text).toContain('data: [DONE]');
      }
      for (const pid of pids) expect(alive(pid)).toBe(false);
      // each worker left with its lease row and nothing held: every settlement written
      expect(await db.selectFrom('relay_nodes').select('id').execute()).toEqual([]);
      const now = await ledger();
      expect(now).toMatchObject({ userHeld: 0, tokenHeld: 0, reservationsHeld: 0 });
      expect(now.quota).toBe(USER_START - now.logged);
      expect(now.remain).toBe(TOKEN_START - now.logged);
    }, 120_000);
  });
}
