// The console's import (root only, in Other settings): POST /api/import/
// starts the importer in the background, GET /api/import/ reports its progress
// and, once over, the report `npm run import` prints. A DSN's password never
// comes back; a cross-site POST is refused like every state-changing call.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../../support/app';
import { fixturePath } from './__fixtures__/build';
import { FIXTURE_PASSWORDS } from './__fixtures__/values';

let app: FastifyInstance;
let root: string;
let folder: string;
let source: string;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'switchboard-import-route-'));
  source = join(folder, 'one-api.db');
  copyFileSync(fixturePath('one-api-latest'), source);
  app = await buildTestApp({}, { dialect: 'sqlite', path: join(folder, 'switchboard.db') });
  root = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app.close();
  rmSync(folder, { recursive: true, force: true });
});

const call = (method: 'GET' | 'POST', payload?: unknown, headers: Record<string, string> = {}) =>
  asBrowser(app, root, { method, url: '/api/import/', payload: payload as never, headers });

/** Polls until the run is over (a loaded machine may take a while). */
async function finished() {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const state = (await call('GET')).json().data;
    if (!state.running) return state;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the import did not finish');
}

describe('the console import', () => {
  it('runs a dry run, then the import, and reports both', async () => {
    const started = (await call('POST', { source })).json();
    expect(started).toMatchObject({ success: true, data: { running: true, apply: false } });
    const dryRun = await finished();
    expect(dryRun.report).toContain('DRY RUN');
    expect(dryRun.report).toMatch(/users\s+4\s+4\s+0/);
    expect(await app.ctx.db.selectFrom('users').select('username').execute()).toEqual([{ username: 'root' }]);

    expect((await call('POST', { source, apply: true, with_logs: true })).json().success).toBe(true);
    // the fresh install's root gives way to the source's root (same id), so the session that started it ends
    for (let attempt = 0; attempt < 600 && (await call('GET')).json().success; attempt += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call('GET')).json()).toMatchObject({ success: false, code: 'session_expired' });
    root = await login(app, 'root', FIXTURE_PASSWORDS.root);
    const applied = await finished();
    expect(applied.error).toBeUndefined();
    expect(applied.report).toContain('Switchboard import: IMPORT');
    expect(applied.progress).toEqual({ step: 'done', done: 1, total: 1 });
    for (const secret of ['AliceChatApp', 'sk-good', '0123456789abcdef']) expect(JSON.stringify(applied)).not.toContain(secret);
    // the imported settings are live, and the old password signs in
    expect(app.ctx.options.get('SystemName')).toBe('Our One API');
    await login(app, 'alice', FIXTURE_PASSWORDS.alice);

    // once the target holds users, another import is refused (nothing written) unless merge is asked for
    expect((await call('POST', { source, apply: true })).json().success).toBe(true);
    expect((await finished()).refused).toMatch(/--merge/);
  });

  it('never sends back the password of a DSN, even in an error', async () => {
    const dsn = 'postgres://importer:hunter2-secret@127.0.0.1:9/one_api';
    const started = (await call('POST', { source: dsn })).json();
    expect(started.data.source).toBe('postgres://importer:***@127.0.0.1:9/one_api');
    const state = await finished();
    expect(state.error).toBeTruthy();
    expect(JSON.stringify(state)).not.toContain('hunter2');
  });

  it('refuses a cross-site POST and a body without a source', async () => {
    const crossSite = await call('POST', { source }, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' });
    expect(crossSite.json().success).toBe(false);
    expect((await call('POST', {})).statusCode).toBe(400);
  });
});
