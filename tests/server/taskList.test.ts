// The console's task list (GET /api/task/ for admins, /api/task/self for
// everyone signed in): a user sees their own tasks only, whatever user_id
// says; admins see everyone's with the owner's name and the channel, and
// narrow by kind, status and user; pages of ?p= newest first; a task's error
// comes parsed. Kinds the list does not know of (batches) show as they are.
// On SQLite and PostgreSQL (the same SQL everywhere).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { insertTask } from '../../server/repositories/tasks';

const targets = await databaseTargets('task list', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`the task list on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    const cookies: Record<'root' | 'ann' | 'bob', string> = { root: '', ann: '', bob: '' };
    const ids: Record<'ann' | 'bob', number> = { ann: 0, bob: 0 };

    const addTask = (id: string, userId: number, fields: { kind?: string; status?: string; error?: string; createdAt: number }) =>
      insertTask(app.ctx.db, {
        id,
        kind: fields.kind ?? 'video',
        user_id: userId,
        token_id: 1,
        channel_id: 7,
        key_id: null,
        model: fields.kind === 'batch' ? 'gpt-4o-mini' : 'sora-2',
        upstream_id: `up-${id}`,
        status: fields.status ?? 'in_progress',
        progress: fields.status === 'completed' ? 100 : 40,
        held_quota: fields.status === 'completed' || fields.status === 'failed' ? 0 : 5000,
        charged_quota: fields.status === 'completed' ? 4000 : 0,
        request: '{}',
        error: fields.error ?? null,
        request_id: `request-${id}`,
        // never due: no poller (the videos', the batches') takes these up while the suite reads them
        next_poll_at: Date.now() + 86_400_000,
        created_at: fields.createdAt,
        updated_at: fields.createdAt,
        completed_at: fields.status === 'completed' || fields.status === 'failed' ? fields.createdAt + 60 : null,
        expires_at: null,
      });

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      for (const name of ['ann', 'bob'] as const) {
        await register(app, name);
        cookies[name] = await login(app, name, 'password-123');
        const row = await app.ctx.db.selectFrom('users').select('id').where('username', '=', name).executeTakeFirstOrThrow();
        ids[name] = Number(row.id);
      }
      cookies.root = await login(app, 'root', ROOT_PASSWORD);
      const error = JSON.stringify({ code: 'moderation_blocked', message: 'the prompt was refused' });
      await addTask('video_a1', ids.ann, { status: 'completed', createdAt: 1_700_000_000 });
      await addTask('video_a2', ids.ann, { status: 'failed', error, createdAt: 1_700_000_100 });
      // settled, so nothing polls it
      await addTask('batch_b1', ids.bob, { kind: 'batch', status: 'completed', createdAt: 1_700_000_200 });
      // one past a page of ten: the second page holds the oldest
      for (let index = 0; index < 9; index++) await addTask(`video_b${index + 2}`, ids.bob, { createdAt: 1_700_000_300 + index });
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    const list = async (who: keyof typeof cookies, url: string) => {
      const response = await asBrowser(app, cookies[who], { method: 'GET', url });
      expect(response.statusCode).toBe(200);
      const body = response.json<{ success: boolean; message: string; data: Array<Record<string, unknown>> }>();
      expect(body.success).toBe(true);
      return body.data;
    };

    it("shows a user their own tasks only, whatever user_id asks, without channels or others' names", async () => {
      const own = await list('ann', `/api/task/self?p=0&user_id=${ids.bob}`);
      expect(own.map((task) => task.id)).toEqual(['video_a2', 'video_a1']);
      expect(own[0]).toEqual({
        id: 'video_a2',
        kind: 'video',
        model: 'sora-2',
        status: 'failed',
        progress: 40,
        held_quota: 0,
        charged_quota: 0,
        created_at: 1_700_000_100,
        updated_at: 1_700_000_100,
        completed_at: 1_700_000_160,
        user_id: ids.ann,
        error: { code: 'moderation_blocked', message: 'the prompt was refused' },
        request_id: 'request-video_a2',
      });
      expect(own[1]).toMatchObject({ status: 'completed', progress: 100, charged_quota: 4000, error: null });
    });

    it('shows admins every task, newest first in pages of ten, with owner and channel', async () => {
      const first = await list('root', '/api/task/?p=0');
      expect(first).toHaveLength(10);
      expect(first[0]).toMatchObject({ id: 'video_b10', username: 'bob', channel_id: 7 });
      const second = await list('root', '/api/task/?p=1');
      expect(second.map((task) => task.id)).toEqual(['video_a2', 'video_a1']);
      expect(second[0]).toMatchObject({ username: 'ann', user_id: ids.ann });
      expect(await list('root', '/api/task/?p=0&page_size=25')).toHaveLength(12);
    });

    it('narrows by kind, status and user for admins; a batch shows as a video does', async () => {
      const batches = await list('root', '/api/task/?p=0&kind=batch');
      expect(batches).toEqual([
        expect.objectContaining({ id: 'batch_b1', kind: 'batch', model: 'gpt-4o-mini', status: 'completed', charged_quota: 4000 }),
      ]);
      expect((await list('root', '/api/task/?p=0&status=failed')).map((task) => task.id)).toEqual(['video_a2']);
      expect((await list('root', `/api/task/?p=0&user_id=${ids.ann}`)).map((task) => task.id)).toEqual(['video_a2', 'video_a1']);
      expect(await list('root', `/api/task/?p=0&user_id=${ids.ann}&kind=batch`)).toEqual([]);
      expect((await list('bob', '/api/task/self?p=0&kind=batch')).map((task) => task.id)).toEqual(['batch_b1']);
    });

    it('refuses malformed filters before any query', async () => {
      const response = await asBrowser(app, cookies.root, { method: 'GET', url: '/api/task/?p=0&user_id=abc' });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false });
    });
  });
}
