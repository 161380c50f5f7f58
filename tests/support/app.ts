// Builds the real gateway for a test: in-memory SQLite (or a given database),
// a fixed root password, and helpers to sign in and call it with cookies.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type BuildOptions } from '../../server/app';
import type { Config, DatabaseConfig } from '../../server/config';
import { fileRedisPrefix } from './databases';

export const ROOT_PASSWORD = 'root-password-for-tests';

export function testConfig(overrides: Partial<Config> = {}, database: DatabaseConfig = { dialect: 'sqlite', path: ':memory:' }): Config {
  return {
    port: 3000,
    host: '127.0.0.1',
    database,
    sessionSecret: randomBytes(32),
    initialRootPassword: ROOT_PASSWORD,
    // bcrypt's cheapest cost: a hash in about 2 ms instead of 0.1 s (the default, 10, is checked in auth.test.ts)
    passwordHashCost: 4,
    // Redis keys apart from other test files' (used only when a test sets redisUrl)
    redisKeyPrefix: fileRedisPrefix(),
    // a folder that is never made: no console to serve (the app then answers 503 for its pages)
    consoleDir: join(tmpdir(), 'switchboard-tests-no-console'),
    trustProxy: false,
    logLevel: 'silent',
    turnstileVerifyUrl: 'http://127.0.0.1:9/unused',
    githubOAuthUrl: 'http://127.0.0.1:9',
    githubApiUrl: 'http://127.0.0.1:9',
    // the update check never leaves loopback in tests
    releaseCheckUrl: 'http://127.0.0.1:9/unused',
    // suites run health passes themselves (runHealthPass), never on a timer
    channelRetestIntervalSeconds: 0,
    // suites poll asynchronous tasks (videos) themselves (app.taskPoller.runOnce), never on a timer
    tasks: { intervalMs: 0 },
    // suites sign in many times from one address; the rate-limit suite sets its own
    rateLimits: { critical: { max: 0, windowSeconds: 60 }, topUp: { max: 0, windowSeconds: 60 } },
    ...overrides,
  };
}

export async function buildTestApp(
  overrides: Partial<Config> = {},
  database?: DatabaseConfig,
  buildOptions?: BuildOptions,
): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(overrides, database), buildOptions);
  await app.ready();
  return app;
}

/** The `session=...` pair from a response's Set-Cookie, ready for a Cookie header. */
export function sessionCookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const cookies = Array.isArray(header) ? header : header ? [header] : [];
  const session = cookies.find((cookie) => cookie.startsWith('session='));
  if (!session) throw new Error(`no session cookie in ${JSON.stringify(header)}`);
  return session.split(';')[0];
}

export async function login(app: FastifyInstance, username: string, password: string): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username, password } });
  const body = response.json();
  if (!body.success) throw new Error(`login of ${username} failed: ${body.message}`);
  return sessionCookieOf(response);
}

export async function register(app: FastifyInstance, username: string, password = 'password-123'): Promise<void> {
  const response = await app.inject({ method: 'POST', url: '/api/user/register', payload: { username, password, password2: password } });
  if (!response.json().success) throw new Error(`register ${username} failed: ${response.json().message}`);
}

/** Calls the app as a same-origin browser would (with the session cookie). */
export function asBrowser(app: FastifyInstance, cookie: string | undefined, options: InjectOptions) {
  return app.inject({
    ...options,
    headers: {
      host: 'localhost:3000',
      'sec-fetch-site': 'same-origin',
      ...(cookie ? { cookie } : {}),
      ...(options.headers ?? {}),
    },
  });
}
