// Starts the real gateway (the run's bundle of server/main.ts, a fresh SQLite file, the built console)
// on a free loopback port, and collects its log so tests can read what it printed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayCommand, sqliteAddonEnv } from '../../support/gatewayCommand';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface RunningGateway {
  baseUrl: string;
  port: number;
  dataDir: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Waits until the log matches, or fails after the timeout. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Builds the console once when dist/ is missing, so a bare `npm test` works too. */
export function ensureConsoleBuilt(): void {
  if (existsSync(join(repoRoot, 'dist', 'index.html'))) return;
  const result = spawnSync(join(repoRoot, 'node_modules', '.bin', 'vite'), ['build'], {
    cwd: repoRoot,
    stdio: 'inherit',
    // Vitest runs with NODE_ENV=test, which would make this a development build (React's dev runtime, 300 KiB
    // on the login page instead of the production build's 200): the console is built as `npm run build` builds it
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) throw new Error('vite build failed');
}

export async function startGateway(env: Record<string, string> = {}): Promise<RunningGateway> {
  ensureConsoleBuilt();
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-e2e-'));
  let log = '';
  const gateway = gatewayCommand();
  const child: ChildProcess = spawn(gateway.command, gateway.args, {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      ...sqliteAddonEnv(),
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      SQLITE_PATH: join(dataDir, 'switchboard.db'),
      CONSOLE_DIR: join(repoRoot, 'dist'),
      PASSWORD_HASH_COST: '4',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));

  const waitForOutput = async (pattern: RegExp, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = log.match(pattern);
      if (match) return match;
      if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}):\n${log}`);
      await new Promise((wake) => setTimeout(wake, 50));
    }
    throw new Error(`gateway log never matched ${pattern}:\n${log}`);
  };

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${baseUrl}/api/status`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}):\n${log}`);
    if (Date.now() > deadline) throw new Error(`gateway did not start:\n${log}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }

  return {
    baseUrl,
    port,
    dataDir,
    output: () => log,
    waitForOutput,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Signs in through the API (as a script would) and returns the session cookie. */
export async function apiLogin(baseUrl: string, username: string, password: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const body = (await response.json()) as { success: boolean; message: string };
  if (!body.success) throw new Error(`login failed: ${body.message}`);
  return String(response.headers.get('set-cookie')).split(';')[0];
}

/** Sets options as root through PUT /api/option/. */
export async function setOptions(baseUrl: string, cookie: string, values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values)) {
    const response = await fetch(`${baseUrl}/api/option/`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ key, value }),
    });
    const body = (await response.json()) as { success: boolean; message: string };
    if (!body.success) throw new Error(`setting ${key} failed: ${body.message}`);
  }
}

/** The console API as a signed-in script calls it: a method, a path and a JSON body, answered with the envelope. */
export function consoleApi(baseUrl: () => string, cookie: () => string) {
  return async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { cookie: cookie(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return response.json();
  };
}
