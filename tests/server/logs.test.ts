// Log listing, filters, scope and stats on SQLite, PostgreSQL and MySQL.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneLogs } from '../../server/billing/logRetention';
import { insertLog } from '../../server/repositories/logs';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';

const targets = await databaseTargets('logs', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`logs on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;
    let user: string;
    let userId: number;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
      await register(app, 'lena');
      user = await login(app, 'lena', 'password-123');
      userId = Number((await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'lena').executeTakeFirstOrThrow()).id);
      const consume = { type: 2, content: 'model ratio 15.00, group ratio 1.00', tokenName: 'laptop', modelName: 'gpt-4' };
      await insertLog(app.ctx.db, { ...consume, userId, username: 'lena', quota: 3000, promptTokens: 100, completionTokens: 50 });
      await insertLog(app.ctx.db, {
        ...consume,
        userId,
        username: 'lena',
        quota: 4_000_000_000,
        promptTokens: 1,
        completionTokens: 1,
        modelName: 'gpt-3.5-turbo',
      });
      await insertLog(app.ctx.db, { userId, username: 'lena', type: 1, content: 'top-up', quota: 999 });
      await insertLog(app.ctx.db, { ...consume, userId: 1, username: 'root', quota: 10, promptTokens: 5, completionTokens: 5 });
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    const get = (cookie: string, url: string) => asBrowser(app, cookie, { method: 'GET', url }).then((response) => response.json());

    it('lets admins read every log with filters, newest first', async () => {
      const all = await get(root, '/api/log/?p=0');
      expect(all.data.map((row: { username: string }) => row.username)).toEqual(['root', 'lena', 'lena', 'lena']);
      expect((await get(root, '/api/log/?p=0&username=lena&type=2')).data).toHaveLength(2);
      expect((await get(root, '/api/log/?p=0&model_name=gpt-3.5-turbo')).data[0].quota).toBe(4_000_000_000);
      expect((await get(root, '/api/log/?p=0&start_timestamp=9999999999')).data).toEqual([]);
    });

    it('scopes users to their own logs, ignoring a username filter, and refuses the admin endpoint', async () => {
      const own = await get(user, '/api/log/self/?p=0&username=root');
      expect(own.data).toHaveLength(3);
      expect(own.data.every((row: { user_id: number }) => row.user_id === userId)).toBe(true);
      expect((await asBrowser(app, user, { method: 'GET', url: '/api/log/?p=0' })).json()).toEqual({
        success: false,
        message: 'insufficient permission',
        code: 'permission_denied',
      });
    });

    it('sums consumption only, in 64 bits', async () => {
      expect((await get(user, '/api/log/self/stat?type=1')).data).toEqual({ quota: 4_000_003_000, token: 152 });
      expect((await get(root, '/api/log/stat?username=root')).data).toEqual({ quota: 10, token: 10 });
      expect((await get(root, '/api/log/stat?model_name=nothing')).data).toEqual({ quota: 0, token: 0 });
    });

    it('exports the filtered logs as CSV, newest first, users only their own', async () => {
      const all = await asBrowser(app, root, { method: 'GET', url: '/api/log/export?type=2' });
      expect(all.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(all.headers['content-disposition']).toMatch(/^attachment; filename="logs-\d+\.csv"$/);
      const lines = all.body.trimEnd().split('\r\n');
      expect(lines[0]).toBe(
        'id,created_at,type,username,token_name,model_name,channel_id,quota,prompt_tokens,completion_tokens,elapsed_ms,is_stream,estimated,request_id,content,details',
      );
      expect(lines.slice(1).map((line) => line.split(',')[3])).toEqual(['root', 'lena', 'lena']);
      expect(lines[1]).toMatch(/,root,laptop,gpt-4,0,10,5,5,0,0,0,,"model ratio 15\.00, group ratio 1\.00",$/);
      const own = await asBrowser(app, user, { method: 'GET', url: '/api/log/self/export?username=root&model_name=gpt-3.5-turbo' });
      const ownLines = own.body.trimEnd().split('\r\n');
      expect(ownLines).toHaveLength(2);
      expect(ownLines[1]).toContain(',lena,laptop,gpt-3.5-turbo,0,4000000000,');
      expect((await asBrowser(app, user, { method: 'GET', url: '/api/log/export' })).json()).toEqual({
        success: false,
        message: 'insufficient permission',
        code: 'permission_denied',
      });
      expect((await asBrowser(app, undefined, { method: 'GET', url: '/api/log/self/export' })).statusCode).toBe(401);
    });

    it('prunes logs past LogRetentionDays in small batches, and the rollups keep their figures', async () => {
      const now = Math.floor(Date.now() / 1000);
      const old = {
        userId,
        username: 'lena',
        type: 2,
        content: 'old',
        modelName: 'gpt-4',
        quota: 7,
        promptTokens: 1,
        completionTokens: 1,
        createdAt: now - 40 * 86_400,
      };
      for (let index = 0; index < 5; index += 1) await insertLog(app.ctx.db, old);
      const statBefore = (await get(user, '/api/log/self/stat')).data;
      const logsBefore = Number(
        (
          await app.ctx.db
            .selectFrom('logs')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .executeTakeFirstOrThrow()
        ).count,
      );
      expect(await pruneLogs(app.ctx.db, now - 30 * 86_400, { rowsPerDelete: 2, pauseMs: 1 })).toBe(5);
      const logsAfter = Number(
        (
          await app.ctx.db
            .selectFrom('logs')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .executeTakeFirstOrThrow()
        ).count,
      );
      expect(logsAfter).toBe(logsBefore - 5);
      expect((await app.ctx.db.selectFrom('logs').select('id').where('content', '=', 'old').execute()).length).toBe(0);
      // the stat reads the rollups: what the pruned logs recorded still counts
      expect((await get(user, '/api/log/self/stat')).data).toEqual(statBefore);
      expect(await pruneLogs(app.ctx.db, now - 30 * 86_400)).toBe(0);
    });

    it('searches by type or content prefix', async () => {
      expect((await get(user, '/api/log/self/search?keyword=1')).data.map((row: { content: string }) => row.content)).toEqual(['top-up']);
      expect((await get(root, '/api/log/search?keyword=model%20ratio')).data).toHaveLength(3);
    });
  });
}
