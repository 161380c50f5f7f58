// A setting changed on one node takes effect on every node without a restart:
// nodes sharing a database re-read the options table every SYNC_FREQUENCY
// seconds, and with Redis a write is announced so the others reload at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Config, DatabaseConfig } from '../../server/config';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, REDIS_URL, redisAvailable, type TestDatabase } from '../support/databases';

const targets = (await databaseTargets('option sync')).filter((target) => target.name !== 'mysql');
const postgres = targets.find((target) => target.name === 'postgres')!;
const redisUp = await redisAvailable('option sync through Redis');

const apps: FastifyInstance[] = [];
const databases: TestDatabase[] = [];
const folders: string[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
  while (databases.length) await databases.pop()!.drop();
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Two gateway nodes on one database (built one after the other, as a rolling start would). */
async function twoNodes(database: DatabaseConfig, overrides: Partial<Config>) {
  const first = await buildTestApp(overrides, database);
  apps.push(first);
  const second = await buildTestApp(overrides, database);
  apps.push(second);
  return { first, second, rootCookie: await login(first, 'root', ROOT_PASSWORD) };
}

async function sharedSqlite(): Promise<DatabaseConfig> {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-sync-'));
  folders.push(folder);
  return { dialect: 'sqlite', path: join(folder, 'shared.db') };
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not converged within ${timeoutMs} ms`);
    await new Promise((wake) => setTimeout(wake, 20));
  }
  return Date.now() - started;
}

const statusOf = async (app: FastifyInstance) => (await app.inject({ method: 'GET', url: '/api/status' })).json().data;
const put = (app: FastifyInstance, cookie: string, key: string, value: string) =>
  asBrowser(app, cookie, { method: 'PUT', url: '/api/option/', payload: { key, value } }).then((response) => response.json());

describe('options across nodes', () => {
  for (const target of [{ name: 'sqlite file', available: true }, postgres]) {
    it.runIf(target.available)(`without Redis, the other node converges at its next poll (${target.name})`, async () => {
      let database: DatabaseConfig;
      if (target.name === 'postgres') {
        const created = await postgres.create();
        databases.push(created);
        database = created.config;
      } else {
        database = await sharedSqlite();
      }
      const { first, second, rootCookie } = await twoNodes(database, { optionSyncSeconds: 0.2 });
      expect(await put(first, rootCookie, 'SystemName', 'Polled AI')).toEqual({ success: true, message: '' });
      expect(await put(first, rootCookie, 'RegisterEnabled', 'false')).toEqual({ success: true, message: '' });
      // two writes: a poll may land between them, so wait for the second one's effect too
      await eventually(async () => {
        const status = await statusOf(second);
        return status.system_name === 'Polled AI' && status.register_enabled === false;
      }, 3000);
      const refused = await second.inject({
        method: 'POST',
        url: '/api/user/register',
        payload: { username: 'latecomer', password: 'password-123', password2: 'password-123' },
      });
      expect(refused.json().success).toBe(false);
      expect((await statusOf(second)).register_enabled).toBe(false);
    });
  }

  it.runIf(postgres.available && redisUp)('with Redis, the other node applies a write at once (polling off)', async () => {
    const created = await postgres.create();
    databases.push(created);
    const { first, second, rootCookie } = await twoNodes(created.config, { optionSyncSeconds: 0, redisUrl: REDIS_URL });
    const ratio = `{"default":1,"vip":${2 + Math.random()}}`;
    expect(await put(first, rootCookie, 'GroupRatio', ratio)).toEqual({ success: true, message: '' });
    const elapsed = await eventually(() => second.ctx.options.get('GroupRatio') === ratio, 2000);
    expect(elapsed).toBeLessThan(1000);
    expect(second.ctx.options.json('GroupRatio')).toEqual(JSON.parse(ratio));
    // and back the other way
    expect(await put(second, await login(second, 'root', ROOT_PASSWORD), 'Footer', '<b>second node</b>')).toEqual({
      success: true,
      message: '',
    });
    await eventually(async () => (await statusOf(first)).footer_html === '<b>second node</b>', 2000);
  });
});
