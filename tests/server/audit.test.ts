// The audit log on SQLite, PostgreSQL and MariaDB: one row per state-changing
// call with who, what, the outcome and the change (secrets masked); a failed
// sign-in and a token's creation; no row for a call the CSRF check refused or
// for the relay; the list, search, filters and CSV export, admins only; two
// nodes appending to one chain; pruning that keeps the chain valid; and the
// chain walk, in the API and as `npm run audit:verify`, catching a row
// edited in the database and a row deleted.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditChainStatus, AuditRecord } from '../../common/audit';
import { AUDIT_EXPORT_COLUMNS } from '../../common/audit';
import { pruneAudit } from '../../server/audit/retention';
import { repoRoot, type DatabaseConfig } from '../../server/config';
import { RETENTION_KINDS } from '../../server/plugins/retention';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('audit');
const USER_AGENT = 'audit-test/1.0';

/** `npm run audit:verify` as the operator runs it, on the database `config` names. */
function runVerify(config: DatabaseConfig): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, SQL_DSN: '', SQLITE_PATH: '' };
  if (config.dialect === 'sqlite') env.SQLITE_PATH = config.path;
  else env.SQL_DSN = config.connectionString;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'server/audit/verify.ts')],
      { cwd: repoRoot, env, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

for (const target of targets) {
  describe.runIf(target.available)(`audit log on ${target.name}`, () => {
    let database: TestDatabase | undefined;
    let folder: string | undefined;
    let config: DatabaseConfig;
    let app: FastifyInstance;
    let root: string;

    beforeAll(async () => {
      if (target.name === 'sqlite') {
        // a file, so the verify command (another process) reads the same database
        folder = mkdtempSync(join(tmpdir(), 'switchboard-audit-'));
        config = { dialect: 'sqlite', path: join(folder, 'switchboard.db') };
      } else {
        database = await target.create();
        config = database.config;
      }
      app = await buildTestApp({}, config);
      root = await login(app, 'root', ROOT_PASSWORD);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
      if (folder) rmSync(folder, { recursive: true, force: true });
    });

    type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
    /** A call as a same-site browser makes it: signed in as root unless `cookie` says otherwise (null: nobody). */
    const api = (method: Method, url: string, payload?: unknown, cookie: string | null = root, on: FastifyInstance = app) =>
      asBrowser(on, cookie ?? undefined, {
        method,
        url,
        headers: { 'user-agent': USER_AGENT },
        ...(payload === undefined ? {} : { payload: payload as never }),
      });
    const records = async (url: string): Promise<AuditRecord[]> => {
      const response = await api('GET', url);
      expect(response.json().success).toBe(true);
      return response.json().data as AuditRecord[];
    };
    /** The row of one call, found by the call's X-Request-Id. */
    const rowOf = async (response: LightMyRequestResponse): Promise<AuditRecord> => {
      const requestId = String(response.headers['x-request-id']);
      const found = (await records(`/api/audit/search?keyword=${encodeURIComponent(requestId)}`)).filter(
        (record) => record.request_id === requestId,
      );
      expect(found).toHaveLength(1);
      return found[0];
    };
    const rowCount = async () =>
      Number(
        (
          await app.ctx.db
            .selectFrom('audit_log')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const chainStatus = async () => (await api('GET', '/api/audit/verify')).json().data as AuditChainStatus;
    const rootId = async () =>
      Number((await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow()).id);

    it('writes one row for a setting change, with who, what, the outcome and the change; a secret is masked', async () => {
      const notice = await api('PUT', '/api/option/', { key: 'Notice', value: 'audited notice' });
      expect(notice.json().success).toBe(true);
      const row = await rowOf(notice);
      expect(row).toMatchObject({
        user_id: await rootId(),
        username: 'root',
        role: 100,
        ip: '127.0.0.1',
        user_agent: USER_AGENT,
        method: 'PUT',
        route: '/api/option/',
        action: 'option.update',
        target_type: 'option',
        target_id: 'Notice',
        status: 200,
        success: true,
        organization_id: null,
        changes: { before: { Notice: '' }, after: { Notice: 'audited notice' } },
      });
      expect(row.hash).toMatch(/^[0-9a-f]{64}$/);

      const secret = 'gh-secret-value-0123456789abcdef';
      const long = await api('PUT', '/api/option/', { key: 'GitHubClientSecret', value: secret });
      expect((await rowOf(long)).changes).toEqual({ before: { GitHubClientSecret: '' }, after: { GitHubClientSecret: '***cdef' } });
      const short = await api('PUT', '/api/option/', { key: 'SMTPToken', value: 'short-1' });
      expect((await rowOf(short)).changes).toEqual({ before: { SMTPToken: '' }, after: { SMTPToken: '***' } });
      const stored = await app.ctx.db.selectFrom('audit_log').select('changes').execute();
      expect(stored.some((entry) => (entry.changes ?? '').includes('gh-secret-value') || (entry.changes ?? '').includes('short-1'))).toBe(
        false,
      );

      // refused by the handler: still a row, not a success, and nothing changed to show
      const refused = await api('PUT', '/api/option/', { key: 'QuotaPerUnit', value: 'lots' });
      expect(refused.json().success).toBe(false);
      expect(await rowOf(refused)).toMatchObject({
        action: 'option.update',
        target_id: 'QuotaPerUnit',
        status: 200,
        success: false,
        changes: null,
      });
    });

    it('writes a row for a failed sign-in: no actor, the name given, the account tried as the target', async () => {
      const wrong = await api('POST', '/api/user/login', { username: 'root', password: 'not-the-password' }, null);
      expect(wrong.json().success).toBe(false);
      expect(await rowOf(wrong)).toMatchObject({
        action: 'user.login',
        user_id: null,
        username: 'root',
        target_type: 'user',
        target_id: String(await rootId()),
        success: false,
      });
      const unknown = await api('POST', '/api/user/login', { username: 'nobody-here', password: 'whatever-123' }, null);
      expect(await rowOf(unknown)).toMatchObject({
        action: 'user.login',
        user_id: null,
        username: 'nobody-here',
        target_id: '',
        success: false,
      });
      const signedIn = await api('POST', '/api/user/login', { username: 'root', password: ROOT_PASSWORD }, null);
      expect(await rowOf(signedIn)).toMatchObject({ action: 'user.login', user_id: await rootId(), username: 'root', success: true });
    });

    it("writes a row for a token's creation with the new token, its key masked; revealing the key is a row too", async () => {
      await register(app, 'audituser');
      const user = await login(app, 'audituser', 'password-123');
      const created = await api('POST', '/api/token/', { name: 'audited', remain_quota: 1000 }, user);
      expect(created.json().success).toBe(true);
      const token = created.json().data as { id: number; key: string };
      const row = await rowOf(created);
      expect(row).toMatchObject({
        action: 'token.create',
        username: 'audituser',
        target_type: 'token',
        target_id: String(token.id),
        success: true,
      });
      expect(row.changes?.after).toMatchObject({ name: 'audited', key: `***${token.key.slice(-4)}` });
      expect(JSON.stringify(row.changes)).not.toContain(token.key.replace(/^sk-/, ''));

      const revealed = await api('GET', `/api/token/${token.id}/key`, undefined, user);
      expect(revealed.json().success).toBe(true);
      expect(await rowOf(revealed)).toMatchObject({ action: 'token.key_reveal', target_type: 'token', target_id: String(token.id) });

      const renamed = await api('PUT', '/api/token/', { id: token.id, name: 'renamed' }, user);
      const renaming = await rowOf(renamed);
      expect(renaming).toMatchObject({ action: 'token.update', changes: { before: { name: 'audited' }, after: { name: 'renamed' } } });
      const deleted = await api('DELETE', `/api/token/${token.id}`, undefined, user);
      expect((await rowOf(deleted)).changes?.before).toMatchObject({ name: 'renamed', key: `***${token.key.slice(-4)}` });
    });

    it('writes no row for a call the CSRF check refused, for a route that does not exist, or for the relay', async () => {
      const before = await rowCount();
      const sameSite = await api('PUT', '/api/option/', { key: 'Notice', value: 'from here' }, root);
      expect(sameSite.json().success).toBe(true);
      const afterOne = await rowCount();
      expect(afterOne).toBe(before + 1);
      const refused = await asBrowser(app, root, {
        method: 'PUT',
        url: '/api/option/',
        headers: { 'sec-fetch-site': 'cross-site' },
        payload: { key: 'Notice', value: 'forged' },
      });
      expect(refused.statusCode).toBe(403);
      expect((await api('POST', '/api/no-such-route', {})).statusCode).toBe(404);
      // a relayed call without a key: refused by the relay, and no business of the audit log either way
      expect((await app.inject({ method: 'POST', url: '/v1/chat/completions', payload: {} })).statusCode).toBe(401);
      expect(await rowCount()).toBe(afterOne);
    });

    it('lists, searches and filters rows for admins, and exports the filtered rows as CSV', async () => {
      const updates = await records('/api/audit/?action=option.update&page_size=100');
      expect(updates.length).toBeGreaterThanOrEqual(4);
      expect(updates.every((record) => record.action === 'option.update')).toBe(true);
      expect(updates.map((record) => record.seq)).toEqual([...updates.map((record) => record.seq)].sort((a, b) => b - a));
      const byRoute = await records('/api/audit/?action=%2Fapi%2Foption%2F&success=false');
      expect(byRoute.length).toBeGreaterThanOrEqual(1);
      expect(byRoute.every((record) => record.route === '/api/option/' && !record.success)).toBe(true);
      expect((await records('/api/audit/?target_type=token')).every((record) => record.target_type === 'token')).toBe(true);
      const firstPage = await records('/api/audit/?p=0');
      expect(firstPage).toHaveLength(10);
      expect((await records('/api/audit/?p=1'))[0].seq).toBe(firstPage[9].seq - 1);
      const searched = await records('/api/audit/search?keyword=audituser');
      expect(searched.length).toBeGreaterThanOrEqual(3);
      expect(searched.every((record) => record.username === 'audituser')).toBe(true);
      const future = Math.floor(Date.now() / 1000) + 3600;
      expect(await records(`/api/audit/?start_timestamp=${future}`)).toEqual([]);

      const exported = await api('GET', '/api/audit/export?action=option.update');
      expect(exported.statusCode).toBe(200);
      expect(exported.headers['content-type']).toContain('text/csv');
      const lines = exported.body.trim().split('\r\n');
      expect(lines[0]).toBe(AUDIT_EXPORT_COLUMNS.join(','));
      expect(lines).toHaveLength(updates.length + 1);
      expect(exported.body).toContain('***cdef');
      expect(exported.body).not.toContain('gh-secret-value');

      const user = await login(app, 'audituser', 'password-123');
      for (const url of ['/api/audit/export', '/api/audit/?p=0', '/api/audit/verify']) {
        const refused = await api('GET', url, undefined, user);
        expect(refused.json()).toMatchObject({ success: false, code: 'permission_denied' });
        expect((await api('GET', url, undefined, null)).statusCode).toBe(401);
      }
    });

    it('keeps one chain when two nodes sharing the database append at once', async () => {
      // a second gateway on the same database: its appends race this one's for the chain's head
      const second = target.name === 'sqlite' ? app : await buildTestApp({}, config);
      try {
        const otherRoot = second === app ? root : await login(second, 'root', ROOT_PASSWORD);
        const headBefore = (await chainStatus()).head_seq;
        const calls = Array.from({ length: 12 }, (_, index) =>
          api('PUT', '/api/option/', { key: 'Footer', value: `footer ${index}` }, index % 2 ? root : otherRoot, index % 2 ? app : second),
        );
        for (const response of await Promise.all(calls)) expect(response.json().success).toBe(true);
        const status = await chainStatus();
        expect(status).toMatchObject({ intact: true });
        expect(status.head_seq).toBeGreaterThanOrEqual(headBefore + 12);
        const seqs = (await app.ctx.db.selectFrom('audit_log').select('seq').orderBy('seq').execute()).map((row) => Number(row.seq));
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => seqs[0] + index));
      } finally {
        if (second !== app) await second.close();
      }
    });

    it('prunes the oldest rows and the chain still verifies from its new anchor; the pruning is a row of its own', async () => {
      expect(RETENTION_KINDS.map((kind) => kind.name)).toContain('audit');
      const now = Date.now();
      // the next calls happen two days from now (only Date is faked): everything before them is older than a day
      vi.useFakeTimers({ toFake: ['Date'], now: now + 2 * 86_400_000 });
      try {
        for (const value of ['later 1', 'later 2', 'later 3'])
          expect((await api('PUT', '/api/option/', { key: 'About', value })).json().success).toBe(true);
      } finally {
        vi.useRealTimers();
      }
      const before = await chainStatus();
      let reported = 0;
      const deleted = await pruneAudit(app.ctx.db, Math.floor(now / 1000) + 86_400, {
        rowsPerDelete: 7,
        pauseMs: 0,
        onDeleted: (count) => (reported += count),
      });
      expect(deleted).toBe(before.head_seq - before.anchor_seq - 3);
      expect(reported).toBe(deleted);
      const after = await chainStatus();
      expect(after).toMatchObject({ intact: true, anchor_seq: before.head_seq - 3, head_seq: before.head_seq + 1, rows: 4 });
      const [pruning] = await records('/api/audit/?action=audit.prune');
      expect(pruning).toMatchObject({ user_id: null, method: 'JOB', changes: { after: { deleted, through_seq: before.head_seq - 3 } } });
    });

    it('finds a row edited in the database and a row deleted, in the API and with npm run audit:verify', async () => {
      for (const value of ['one', 'two', 'three', 'four']) await api('PUT', '/api/option/', { key: 'HomePageContent', value });
      expect(await chainStatus()).toMatchObject({ intact: true });
      const intact = await runVerify(config);
      expect(intact.stderr).not.toContain('broken');
      expect(intact.code).toBe(0);
      expect(intact.stdout).toMatch(/^audit chain intact: \d+ rows, head #\d+, rows up to #\d+ pruned/);

      const { db } = app.ctx;
      const head = (await chainStatus()).head_seq;
      const victim = await db
        .selectFrom('audit_log')
        .selectAll()
        .where('seq', '=', head - 2)
        .executeTakeFirstOrThrow();
      await db.updateTable('audit_log').set({ username: 'mallory' }).where('id', '=', victim.id).execute();
      expect((await chainStatus()).broken_at).toEqual({
        seq: head - 2,
        id: Number(victim.id),
        kind: 'changed',
        reason: expect.stringContaining('changed'),
      });
      const edited = await runVerify(config);
      expect(edited.code).toBe(1);
      expect(edited.stderr).toContain(`audit chain broken at row #${head - 2} (id ${Number(victim.id)})`);

      await db.updateTable('audit_log').set({ username: victim.username }).where('id', '=', victim.id).execute();
      expect(await chainStatus()).toMatchObject({ intact: true });
      await db.deleteFrom('audit_log').where('id', '=', victim.id).execute();
      expect((await chainStatus()).broken_at).toEqual({
        seq: head - 2,
        id: null,
        kind: 'missing',
        reason: expect.stringContaining('missing'),
      });
      const removed = await runVerify(config);
      expect(removed.code).toBe(1);
      expect(removed.stderr).toContain(`audit chain broken at row #${head - 2}: the row is missing`);
    });
  });
}

describe('an audit row that cannot be written', () => {
  it('never fails the call: it is logged and counted', async () => {
    const app = await buildTestApp();
    try {
      const root = await login(app, 'root', ROOT_PASSWORD);
      await app.ctx.db.schema.dropTable('audit_chain').execute();
      const response = await asBrowser(app, root, { method: 'PUT', url: '/api/option/', payload: { key: 'Notice', value: 'still saved' } });
      expect(response.json().success).toBe(true);
      expect(app.ctx.options.get('Notice')).toBe('still saved');
      const metrics = await app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/^switchboard_audit_write_failures_total 1$/m);
    } finally {
      await app.close();
    }
  });
});
