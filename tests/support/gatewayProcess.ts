// The real gateway as its own process (the run's bundle of server/main.ts) on a free
// loopback port, for the tests that kill, stop or restart it: what only a
// separate process shows (signals, SIGKILL mid-request, several nodes).
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, repoRoot } from '../e2e/support/gateway';
import { fileRedisPrefix } from './databases';
import { gatewayCommand, sqliteAddonEnv } from './gatewayCommand';

export interface GatewayProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** True while the process runs. */
  alive(): boolean;
  /** Sends `signal` unless it has exited already, and waits for the exit. */
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts a gateway with `env` over a quiet base (loopback, warnings only, no
 * health checks on a timer) and resolves once it listens; throws with its
 * output when it exits or does not come up within `startTimeoutMs`.
 */
export async function spawnGatewayProcess(env: Record<string, string>, startTimeoutMs = 60_000): Promise<GatewayProcess> {
  const port = await freePort();
  let log = '';
  const gateway = gatewayCommand();
  const child = spawn(gateway.command, gateway.args, {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      ...sqliteAddonEnv(),
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      CHANNEL_RETEST_INTERVAL: '0',
      // one process, whose pid is the gateway's; a suite of workers asks for them
      WORKERS: '1',
      // bcrypt's cheapest cost: each sign-in and start costs about 2 ms instead of 0.1 s
      PASSWORD_HASH_COST: '4',
      // Redis keys apart from other test files' (used only when the test sets REDIS_CONN_STRING)
      REDIS_KEY_PREFIX: fileRedisPrefix(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const deadline = Date.now() + startTimeoutMs;
  while (!log.includes('[switchboard] gateway and console on')) {
    if (!alive()) throw new Error(`the gateway exited (${child.exitCode ?? child.signalCode}):\n${log}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`the gateway did not start:\n${log}`);
    }
    await new Promise((wake) => setTimeout(wake, 50));
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    output: () => log,
    exited,
    alive,
    async stop(signal) {
      if (alive()) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Signs in as root on a running gateway and returns a caller of its console
 * API: POSTs `body` to `path` with root's session and resolves to the
 * envelope's data, throwing with the server's message when it says no.
 */
export async function rootConsole(
  baseUrl: string,
  password: string,
): Promise<(path: string, body: unknown, method?: 'POST' | 'PUT') => Promise<any>> {
  const login = await fetch(`${baseUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password }),
  });
  const cookie = String(login.headers.get('set-cookie')).split(';')[0];
  return async (path, body, method = 'POST') => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { success: boolean; message: string; data: any };
    if (!json.success) throw new Error(`${path}: ${json.message}`);
    return json.data;
  };
}
