// What the fault suites share: a real gateway process, private database and
// Redis servers the suites may stop and start (the shared ones on 5432, 3306
// and 6379 serve other suites in parallel and are never touched), a relay load
// that records every answer, and the ledger invariant read straight from the
// database.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { LogType } from '../../../common/roles';
import { freePort } from '../../e2e/support/gateway';
import { spawnGatewayProcess, type GatewayProcess as SpawnedGateway } from '../../support/gatewayProcess';

export const ROOT_PASSWORD = 'faults-root-password';
const required = process.env.SWITCHBOARD_REQUIRE_SERVICES === '1';

/** Polls `check` every 50 ms until it holds; throws with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return Date.now() - started;
    } catch (error) {
      lastError = error; // not yet
    }
    if (Date.now() - started > timeoutMs)
      throw new Error(`${what}: not within ${timeoutMs} ms${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    await new Promise((wake) => setTimeout(wake, 50));
  }
}

/**
 * The first of `paths` that exists. When none does, CI (SWITCHBOARD_REQUIRE_SERVICES=1)
 * fails loudly; a local run skips the suite with the reason printed.
 */
export function findTool(suite: string, what: string, paths: string[]): string | undefined {
  const found = paths.find((path) => existsSync(path));
  if (found) return found;
  const message = `${what} not found (looked for ${paths.join(', ')})`;
  if (required) throw new Error(`${message} and SWITCHBOARD_REQUIRE_SERVICES=1`);
  console.warn(`[switchboard] ${message}: suite "${suite}" left out`);
  return undefined;
}

function postgresBin(name: string): string[] {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort().reverse() : [];
  return versions.map((version) => join(base, version, 'bin', name));
}

export const postgresTools = (suite: string) => {
  const initdb = findTool(suite, 'PostgreSQL initdb', postgresBin('initdb'));
  const pgCtl = initdb && findTool(suite, 'PostgreSQL pg_ctl', postgresBin('pg_ctl'));
  return initdb && pgCtl ? { initdb, pgCtl } : undefined;
};

export const mariadbTools = (suite: string) => {
  const install = findTool(suite, 'mariadb-install-db', ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db']);
  const server = install && findTool(suite, 'mariadbd', ['/usr/sbin/mariadbd', '/usr/bin/mariadbd', '/usr/sbin/mysqld']);
  return install && server ? { install, server } : undefined;
};

export const redisTool = (suite: string) => findTool(suite, 'redis-server', ['/usr/bin/redis-server', '/usr/local/bin/redis-server']);

function run(command: string, args: string[], options: { asPostgres?: boolean } = {}): void {
  const [file, argv] =
    options.asPostgres && process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const result = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
}

/** A server of our own in a temp dir, on a free port: stop() and start() at will, destroy() removes all. */
export interface PrivateServer {
  port: number;
  /** The admin URL (a database name goes in its path). */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** initdb + pg_ctl in a temp dir owned by postgres (PostgreSQL refuses to run as root); trust auth, no fsync. */
export async function startPrivatePostgres(tools: { initdb: string; pgCtl: string }): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-pg-'));
  const port = await freePort();
  const asPostgres = process.getuid?.() === 0;
  if (asPostgres) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  let running = false;
  const server: PrivateServer = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      run(
        tools.pgCtl,
        [
          '-D',
          data,
          '-l',
          join(dir, 'log'),
          '-w',
          '-t',
          '30',
          '-o',
          `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
          'start',
        ],
        {
          asPostgres,
        },
      );
      running = true;
    },
    async stop() {
      run(tools.pgCtl, ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'], { asPostgres });
      running = false;
    },
    async destroy() {
      if (running) await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    run(tools.initdb, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], { asPostgres });
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error('no postgres user to run PostgreSQL as');
  return { uid, gid };
}

/** mariadb-install-db + mariadbd in a temp dir; grant tables skipped, so root connects without a password. */
export async function startPrivateMariadb(tools: { install: string; server: string }): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-mariadb-'));
  const port = await freePort();
  const data = join(dir, 'data');
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const server: PrivateServer = {
    port,
    url: `mysql://root@127.0.0.1:${port}/`,
    async start() {
      let log = '';
      child = spawn(
        tools.server,
        [
          '--no-defaults',
          `--datadir=${data}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          `--socket=${join(dir, 'sock')}`,
          `--pid-file=${join(dir, 'pid')}`,
          '--user=root',
          '--skip-grant-tables',
          '--skip-name-resolve',
          '--skip-log-bin',
          '--innodb-buffer-pool-size=32M',
          '--innodb-flush-log-at-trx-commit=2',
          '--max-connections=200',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const current = child;
      exited = new Promise((resolve) => current.once('exit', () => resolve()));
      await waitUntil(
        `private MariaDB on ${port} accepting connections\n${log}`,
        async () => {
          if (current.exitCode !== null) throw new Error(log);
          const connection = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1000 });
          await connection.end();
          return true;
        },
        30_000,
      );
    },
    async stop() {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      child = undefined;
    },
    async destroy() {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    run(tools.install, [
      '--no-defaults',
      `--datadir=${data}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--skip-name-resolve',
    ]);
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}

/** redis-server as a child process on a free port, nothing saved to disk; pause() freezes it with its connections open. */
export async function startPrivateRedis(binary: string): Promise<PrivateServer & { pause(): void; resume(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const server: PrivateServer & { pause(): void; resume(): void } = {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async start() {
      let log = '';
      child = spawn(
        binary,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const current = child;
      exited = new Promise((resolve) => current.once('exit', () => resolve()));
      await waitUntil(
        `private Redis on ${port}\n${log}`,
        () => {
          if (current.exitCode !== null) throw new Error(log);
          return log.includes('Ready to accept connections');
        },
        15_000,
      );
    },
    async stop() {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      child = undefined;
    },
    async destroy() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

export interface GatewayProcess extends Omit<SpawnedGateway, 'stop'> {
  /** Kills it (SIGKILL: the faults under test never get a clean stop) and removes its data folder. */
  stop(): Promise<void>;
}

/** The real gateway in a data folder of its own, sessions signed by a fresh secret, request limits off. */
export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-faults-'));
  let spawned: SpawnedGateway;
  try {
    spawned = await spawnGatewayProcess({
      DATA_DIR: dataDir,
      CONSOLE_DIR: dataDir,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
      CRITICAL_RATE_LIMIT: '0',
      TOPUP_RATE_LIMIT: '0',
      ...env,
    });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...spawned,
    async stop() {
      await spawned.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function apiCall(baseUrl: string, method: string, path: string, body?: unknown, cookie?: string) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(cookie ? { cookie } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, headers: response.headers };
}

export async function loginRoot(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
  });
  if (response.status !== 200) throw new Error(`root login answered ${response.status}: ${await response.text()}`);
  return String(response.headers.get('set-cookie')).split(';')[0];
}

/**
 * Signs in as root, adds a channel to the emulator, and gives root a limited key of an organisation it owns (topped
 * up for the load): what a relay load needs. The key spends the organisation's account and adds to root's spend as
 * a member, so every fault suite checks the ledger per organisation and per member (Balances).
 */
export async function prepareRelay(baseUrl: string, emulatorUrl: string): Promise<{ cookie: string; tokenKey: string; tokenId: number }> {
  const cookie = await loginRoot(baseUrl);
  const admin = async (path: string, body: unknown) => {
    const { json, text } = await apiCall(baseUrl, 'POST', path, body, cookie);
    if (!json?.success) throw new Error(`${path}: ${text}`);
    return json.data;
  };
  await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: emulatorUrl, models: 'gpt-3.5-turbo' });
  const organization = await admin('/api/organization/', { name: 'faults', owner: 'root' });
  await admin(`/api/organization/${organization.id}/topup`, { quota: 100_000_000 });
  const token = await admin(`/api/organization/${organization.id}/token`, { name: 'faults', remain_quota: 50_000_000 });
  return { cookie, tokenKey: token.key, tokenId: Number(token.id) };
}

export interface Answer {
  status: number | 'network';
  /** The error code of an answer that is not a 200. */
  code?: string;
  ms: number;
  at: number;
}

export interface Load {
  answers: Answer[];
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<Answer[]>;
}

/** One relayed chat request, half of them streamed; the status (or 'network') and how long the whole answer took. */
export async function relayOnce(baseUrl: string, tokenKey: string, stream: boolean): Promise<Answer> {
  const started = Date.now();
  try {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer sk-${tokenKey}` },
      body: JSON.stringify({
        model: 'gpt-3.5-turbo',
        stream,
        max_tokens: 30,
        emulator: { chunks: 4, delay_ms: 5 },
        messages: [{ role: 'user', content: 'say something short' }],
      }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let code: string | undefined;
    if (response.status !== 200) {
      code = String((JSON.parse(text) as { error?: { code?: string } }).error?.code);
      if (response.status === 503 && code !== 'database_unavailable') throw new Error(`a 503 without code database_unavailable: ${text}`);
    }
    return { status: response.status, code, ms: Date.now() - started, at: started };
  } catch (error) {
    if ((error as Error).message.startsWith('a 503')) throw error;
    return { status: 'network', ms: Date.now() - started, at: started };
  }
}

/** `concurrency` clients relaying back to back until stopped. */
export function startLoad(baseUrl: string, tokenKey: string, concurrency: number): Load {
  const answers: Answer[] = [];
  let stopped = false;
  const workers = Array.from({ length: concurrency }, async (_, index) => {
    let round = 0;
    while (!stopped) {
      answers.push(await relayOnce(baseUrl, tokenKey, (index + round) % 2 === 0));
      round += 1;
    }
  });
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(workers);
      return answers;
    },
  };
}

/** Answers per status (with the error code, for the unexpected ones). */
export const countBy = (answers: Answer[]) =>
  answers.reduce<Record<string, number>>((counts, answer) => {
    const key = answer.status === 200 || answer.status === 503 ? String(answer.status) : `${answer.status} ${answer.code ?? ''}`.trim();
    return { ...counts, [key]: (counts[key] ?? 0) + 1 };
  }, {});

/** Reads a value through a connection of the test's own. */
export type Query = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/**
 * Queries through a connection of the test's own, opened for each query: the
 * suites kill every connection to the database, this one's included.
 */
export async function openReader(dialect: 'postgres' | 'mysql', url: string): Promise<{ query: Query; close(): Promise<void> }> {
  if (dialect === 'postgres') {
    return {
      async query(text, params) {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
        client.on('error', () => undefined);
        try {
          await client.connect();
          return (
            await client.query(
              text.replace(/\?/g, (_, offset: number) => `$${text.slice(0, offset).split('?').length}`),
              params,
            )
          ).rows;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      close: async () => undefined,
    };
  }
  return {
    async query(text, params) {
      const connection = await createConnection({ uri: url, connectTimeout: 3000 });
      connection.on('error', () => undefined);
      try {
        return (await connection.query(text, params))[0] as Array<Record<string, unknown>>;
      } finally {
        await connection.end().catch(() => undefined);
      }
    },
    close: async () => undefined,
  };
}

export interface Balances {
  /** The key's account (an organisation's, for prepareRelay's key). */
  quota: number;
  userHeld: number;
  remain: number;
  tokenHeld: number;
  /** Sum of consume-log quota of the account and of the key. */
  userLogged: number;
  tokenLogged: number;
  logs: number;
  /** What the key's member has spent in the organisation, by their membership's row (0 for a key of no member). */
  memberSpent: number;
}

export async function balances(query: Query, tokenId: number): Promise<Balances> {
  const [token] = await query('select user_id, member_user_id, remain_quota, held_quota from tokens where id = ?', [tokenId]);
  const [user] = await query('select quota, held_quota, organization_id from users where id = ?', [token.user_id]);
  const [userLogs] = await query('select coalesce(sum(quota), 0) as total, count(*) as n from logs where user_id = ? and type = ?', [
    token.user_id,
    LogType.consume,
  ]);
  const [tokenLogs] = await query('select coalesce(sum(quota), 0) as total from logs where token_id = ? and type = ?', [
    tokenId,
    LogType.consume,
  ]);
  const [member] =
    token.member_user_id === null || user.organization_id === null
      ? [{ spent_quota: 0 }]
      : await query('select spent_quota from organization_members where organization_id = ? and user_id = ?', [
          user.organization_id,
          token.member_user_id,
        ]);
  return {
    quota: Number(user.quota),
    userHeld: Number(user.held_quota),
    remain: Number(token.remain_quota),
    tokenHeld: Number(token.held_quota),
    userLogged: Number(userLogs.total),
    tokenLogged: Number(tokenLogs.total),
    logs: Number(userLogs.n),
    memberSpent: Number(member?.spent_quota ?? 0),
  };
}

/** Waits until the figures stop moving (the queued settlements and logs are written), and gives them. */
export async function settledBalances(query: Query, tokenId: number, timeoutMs = 30_000): Promise<Balances> {
  let last = JSON.stringify(await balances(query, tokenId));
  let stableSince = Date.now();
  await waitUntil(
    'the ledger quiet',
    async () => {
      const now = JSON.stringify(await balances(query, tokenId));
      if (now !== last) {
        last = now;
        stableSince = Date.now();
      }
      const held = JSON.parse(now) as Balances;
      return Date.now() - stableSince > (held.userHeld === 0 && held.tokenHeld === 0 ? 1000 : 6000);
    },
    timeoutMs,
  );
  return JSON.parse(last) as Balances;
}

/**
 * Waits (up to `timeoutMs`: settlements kept through an outage are retried
 * with a backoff of up to a few seconds) until the ledger balances against
 * `start` with nothing held, then checks it stays so for a second; gives the
 * last figures either way, for the assertions to judge.
 */
export async function ledgerAfter(query: Query, tokenId: number, start: Balances, timeoutMs = 25_000): Promise<Balances> {
  let last = await balances(query, tokenId);
  const balanced = (figures: Balances) => {
    const discrepancy = ledgerDiscrepancy(start, figures);
    return (
      discrepancy.user === 0 &&
      discrepancy.token === 0 &&
      discrepancy.userHeld === 0 &&
      discrepancy.tokenHeld === 0 &&
      discrepancy.member === 0
    );
  };
  await waitUntil('the ledger balanced', async () => balanced((last = await balances(query, tokenId))), timeoutMs).catch(() => undefined);
  if (!balanced(last)) return settledBalances(query, tokenId);
  await new Promise((wake) => setTimeout(wake, 1000));
  return balances(query, tokenId);
}

/**
 * The ledger invariant. `user` and `token`: what left the balance but is
 * neither logged nor held (0 when nothing was lost, invented or charged twice);
 * `userHeld` and `tokenHeld`: what is still held once everything is quiet (0
 * when every reservation ended); `member`: the member's spend against the
 * key's logged charges (0 when every charge reached both).
 */
export function ledgerDiscrepancy(start: Balances, end: Balances) {
  return {
    user: start.quota + start.userHeld + start.userLogged - (end.quota + end.userHeld + end.userLogged),
    token: start.remain + start.tokenHeld + start.tokenLogged - (end.remain + end.tokenHeld + end.tokenLogged),
    userHeld: end.userHeld,
    tokenHeld: end.tokenHeld,
    // the member's spend grows by exactly the key's logged charges (the key is the member's only one)
    member: end.memberSpent - start.memberSpent - (end.tokenLogged - start.tokenLogged),
  };
}

/**
 * Answers that are neither a success nor the database's 503. An upstream
 * whose idle keep-alive socket closed just as the relay reused it (the
 * emulator idles while the database is away) may give a 502
 * upstream_unreachable: that is the upstream's, not a database fault, and
 * the request released what it held; it is allowed, once in a while.
 */
export function unexpectedAnswers(answers: Answer[]): Answer[] {
  const upstream = answers.filter((answer) => answer.status === 502 && answer.code === 'upstream_unreachable');
  const others = answers.filter((answer) => answer.status !== 200 && answer.status !== 503 && !upstream.includes(answer));
  return upstream.length > 3 ? [...others, ...upstream] : others;
}
