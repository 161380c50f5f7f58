// OpenAI's Videos API relayed as asynchronous tasks, on all three databases
// (the task ledger is dialect SQL): a video holds seconds x price when
// submitted, is billed exactly once with one consume log naming it when the
// vendor finishes, and gives everything back when it fails, times out or is
// refused for quota. The ledger's invariant (start - logged charges - held =
// balance, for the user and the limited key) is checked at every step. Also:
// two nodes polling the same tasks bill once; a restart keeps a task's hold
// (SQLite gives back what dead requests held, never what tasks hold); content
// streams with a Range; another user's video answers 404.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { DatabaseConfig } from '../../server/config';
import type { Database } from '../../server/db/database';
import { settleTask, submitTask } from '../../server/billing/taskLedger';
import { SUBMIT_GRACE_MS } from '../../server/relay/tasks/poller';
import { findTaskById, leaseTask } from '../../server/repositories/tasks';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { ledgerState } from '../support/ledgerState';
import { startVideoEmulator, type VideoEmulator } from '../support/emulators/videoEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

const TOKEN_START = 5_000_000;
/** 8 s of sora-2 at $0.10 a second, 500,000 quota per dollar. */
const EIGHT_SECONDS = 400_000;
/** A JSON answer, read loosely. */
const bodyOf = (response: Response): Promise<any> => response.json();
const POLLING = { intervalMs: 0, pollEveryMs: 0, leaseMs: 60_000 };

const targets = await databaseTargets('videos');

for (const target of targets) {
  describe.runIf(target.available)(`videos on ${target.name}`, () => {
    let database: { config: DatabaseConfig; drop(): Promise<void> };
    let app: FastifyInstance;
    let db: Kysely<Database>;
    let emulator: VideoEmulator;
    let baseUrl = '';
    let root = '';
    let apiKey = '';
    let tokenId = 0;
    let userStart = 0;

    const admin = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
    const call = (method: string, path: string, body?: unknown, key = apiKey, headers: Record<string, string> = {}) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
    const create = (body: Record<string, unknown> = {}, key = apiKey) =>
      call('POST', '/v1/videos', { model: 'sora-2', prompt: 'a cat on a skateboard', seconds: '8', size: '720x1280', ...body }, key);
    const consumeLogs = () =>
      db.selectFrom('logs').selectAll().where('type', '=', LogType.consume).where('token_id', '=', tokenId).execute();
    const taskHeld = async () => {
      const rows = await db.selectFrom('tasks').select('held_quota').execute();
      return rows.reduce((sum, row) => sum + Number(row.held_quota), 0);
    };
    /** start - logged charges - held = balance, for the user and the key; and what is held is what tasks hold. */
    const expectInvariant = async () => {
      const state = await ledgerState(db, 1, tokenId);
      expect(state.quota + state.userHeld + state.logged).toBe(userStart);
      expect(state.remain + state.tokenHeld + state.logged).toBe(TOKEN_START);
      expect(state.userHeld).toBe(await taskHeld());
      expect(state.tokenHeld).toBe(state.userHeld);
      return state;
    };
    const pollUntilSettled = async (id: string, poller = app) => {
      for (let pass = 0; pass < 10; pass += 1) {
        await poller.taskPoller.runOnce();
        const task = await findTaskById(db, id);
        if (task && !['submitting', 'queued', 'in_progress'].includes(task.status)) return task;
      }
      throw new Error(`task ${id} never settled`);
    };

    beforeAll(async () => {
      emulator = await startVideoEmulator();
      database = await sharedDatabase(target);
      app = await buildTestApp({ tasks: POLLING }, database.config);
      db = app.ctx.db;
      baseUrl = await listenOnFreePort(app);
      root = await login(app, 'root', ROOT_PASSWORD);
      const channel = await admin('POST', '/api/channel/', {
        type: 1,
        name: 'sora',
        key: 'sk-video-channel',
        base_url: emulator.baseUrl,
        models: 'sora-2,sora-2-pro',
        group: 'default',
      });
      expect(channel.success).toBe(true);
      const token = await admin('POST', '/api/token/', { name: 'videos', remain_quota: TOKEN_START });
      apiKey = `sk-${token.data.key}`;
      tokenId = token.data.id as number;
      const state = await ledgerState(db, 1, tokenId);
      userStart = state.quota + state.userHeld + state.logged;
    });

    afterAll(async () => {
      await app?.close();
      await emulator?.close();
      await database?.drop();
    });

    it('holds seconds x price at submit, bills it once with one log naming the task, and streams the content', async () => {
      emulator.plan = { outcome: 'completed', polls: 1 };
      const response = await create();
      expect(response.status).toBe(200);
      const video = await bodyOf(response);
      expect(video).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', seconds: '8', size: '720x1280', error: null });
      expect(video.id).toMatch(/^video_/);
      expect((await expectInvariant()).userHeld).toBe(EIGHT_SECONDS);

      await app.taskPoller.runOnce();
      expect((await bodyOf(await call('GET', `/v1/videos/${video.id}`))).status).toBe('in_progress');
      await expectInvariant();
      const task = await pollUntilSettled(video.id);
      expect(task).toMatchObject({ status: 'completed', charged_quota: EIGHT_SECONDS, held_quota: 0 });
      const after = await expectInvariant();
      expect(after.userHeld).toBe(0);
      const logs = await consumeLogs();
      expect(logs).toHaveLength(1);
      expect(Number(logs[0].quota)).toBe(EIGHT_SECONDS);
      expect(JSON.parse(logs[0].other!)).toMatchObject({ operation: 'videos', taskId: video.id });

      // a second poller pass, and a late settlement from a stale copy of the row, change nothing
      await app.taskPoller.runOnce();
      expect(
        await settleTask(db, { ...task, status: 'in_progress', held_quota: EIGHT_SECONDS }, { status: 'completed', charge: EIGHT_SECONDS }),
      ).toBe(false);
      expect(await consumeLogs()).toHaveLength(1);
      await expectInvariant();

      const got = await bodyOf(await call('GET', `/v1/videos/${video.id}`));
      expect(got).toMatchObject({ id: video.id, status: 'completed', progress: 100 });
      const ranged = await call('GET', `/v1/videos/${video.id}/content`, undefined, apiKey, { range: 'bytes=100-1123' });
      expect(ranged.status).toBe(206);
      expect(ranged.headers.get('content-range')).toBe(`bytes 100-1123/${emulator.content.length}`);
      expect(Buffer.from(await ranged.arrayBuffer())).toEqual(emulator.content.subarray(100, 1124));
      const whole = await call('GET', `/v1/videos/${video.id}/content`);
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer())).toEqual(emulator.content);
    });

    it('gives everything back when the vendor fails the video or never finishes it', async () => {
      emulator.plan = { outcome: 'failed', polls: 0 };
      const failed = await bodyOf(await create({ model: 'sora-2-pro', size: '1792x1024', seconds: '4' }));
      // $0.50 a second at 1792x1024
      expect((await expectInvariant()).userHeld).toBe(1_000_000);
      const task = await pollUntilSettled(failed.id);
      expect(task).toMatchObject({ status: 'failed', charged_quota: 0, held_quota: 0 });
      const got = await bodyOf(await call('GET', `/v1/videos/${failed.id}`));
      expect(got).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked' } });

      emulator.plan = { outcome: 'stuck', polls: 0 };
      const stuck = await bodyOf(await create());
      await app.taskPoller.runOnce();
      expect((await findTaskById(db, stuck.id))?.status).toBe('in_progress');
      expect((await admin('PUT', '/api/option/', { key: 'TaskTimeoutMinutes', value: '0.00001' })).success).toBe(true);
      const timedOut = await pollUntilSettled(stuck.id);
      expect(timedOut.status).toBe('failed');
      expect(JSON.parse(timedOut.error!)).toMatchObject({ code: 'timeout' });
      expect((await admin('PUT', '/api/option/', { key: 'TaskTimeoutMinutes', value: '180' })).success).toBe(true);

      // a task whose node died before the vendor took it: waited for, then given back after the grace
      const lost = (id: string, age: number) =>
        submitTask(
          db,
          { userId: 1, tokenId, limitedToken: true },
          {
            id,
            kind: 'test',
            user_id: 1,
            token_id: tokenId,
            model: 'sora-2',
            status: 'submitting',
            held_quota: 1234,
            request: '{}',
            request_id: '',
            next_poll_at: 0,
            created_at: Math.floor((Date.now() - age) / 1000),
            updated_at: 0,
          },
        );
      expect(await lost('test_young', 0)).toEqual({ ok: true });
      expect(await lost('test_old', SUBMIT_GRACE_MS + 60_000)).toEqual({ ok: true });
      await expectInvariant();
      await app.taskPoller.runOnce();
      expect(await findTaskById(db, 'test_young')).toMatchObject({ status: 'submitting', held_quota: 1234, lease_owner: null });
      expect(await findTaskById(db, 'test_old')).toMatchObject({ status: 'failed', held_quota: 0 });
      await settleTask(db, (await findTaskById(db, 'test_young'))!, { status: 'deleted', charge: 0 });
      const state = await expectInvariant();
      expect(state.userHeld).toBe(0);
      expect(await consumeLogs()).toHaveLength(1);
    });

    it('refuses a video the key cannot pay for, holding nothing and calling no vendor', async () => {
      const small = await admin('POST', '/api/token/', { name: 'small', remain_quota: 1000 });
      const creates = emulator.creates.length;
      const refused = await create({}, `sk-${small.data.key}`);
      expect(refused.status).toBe(429);
      expect((await bodyOf(refused)).error.code).toBe('insufficient_quota');
      expect(emulator.creates.length).toBe(creates);
      expect(await db.selectFrom('tasks').select('id').where('token_id', '=', small.data.id).execute()).toHaveLength(0);
      const unpriced = await create({ model: 'veo-3' });
      expect(unpriced.status).toBe(403);
      // the vendor refuses it: the hold goes back at once, and no video is left behind
      const moderated = await create({ prompt: 'refuse me' });
      expect(moderated.status).toBe(400);
      expect((await bodyOf(moderated)).error.code).toBe('moderation_blocked');
      await expectInvariant();
    });

    it("answers 404 for another user's video, lists and deletes the caller's own", async () => {
      const mine = (await (await call('GET', '/v1/videos?order=asc')).json()) as { data: Array<{ id: string; status: string }> };
      expect(mine.data.map((video) => video.status)).toEqual(['completed', 'failed', 'failed']);
      const completed = mine.data[0].id;

      await register(app, 'video-other');
      const other = await login(app, 'video-other', 'password-123');
      const token = await asBrowser(app, other, { method: 'POST', url: '/api/token/', payload: { name: 'other', unlimited_quota: true } });
      const otherKey = `sk-${token.json().data.key}`;
      for (const [method, path] of [
        ['GET', `/v1/videos/${completed}`],
        ['GET', `/v1/videos/${completed}/content`],
        ['DELETE', `/v1/videos/${completed}`],
      ])
        expect((await call(method, path, undefined, otherKey)).status).toBe(404);
      expect((await bodyOf(await call('GET', '/v1/videos', undefined, otherKey))).data).toEqual([]);

      const deleted = await bodyOf(await call('DELETE', `/v1/videos/${completed}`));
      expect(deleted).toEqual({ id: completed, object: 'video.deleted', deleted: true });
      expect((await call('GET', `/v1/videos/${completed}`)).status).toBe(404);
      // its charge and log stay
      expect(await consumeLogs()).toHaveLength(1);
      await expectInvariant();
    });

    it('reads a multipart create with its reference image, and takes over a poll whose node died once its lease runs out', async () => {
      emulator.plan = { outcome: 'completed', polls: 0 };
      const form = new FormData();
      form.set('model', 'sora-2-pro');
      form.set('prompt', 'the same cat, at dusk');
      form.set('seconds', '4');
      form.set('input_reference', new Blob([Buffer.from('not really a png')], { type: 'image/png' }), 'cat.png');
      const response = await fetch(`${baseUrl}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
      expect(response.status).toBe(200);
      const video = await bodyOf(response);
      expect(video).toMatchObject({ model: 'sora-2-pro', seconds: '4', size: '720x1280' });
      expect(emulator.creates.at(-1)).toContain('name="input_reference"; filename="cat.png"');
      // $0.30 a second at 720x1280
      expect((await expectInvariant()).userHeld).toBe(600_000);

      // a node took the poll's lease and died: nobody polls the task until the lease runs out, then one node does
      const now = Date.now();
      expect(await leaseTask(db, video.id, 'dead-node', now, now + 300)).toBeDefined();
      const polls = emulator.requests.length;
      expect(await app.taskPoller.runOnce()).toBe(0);
      expect(emulator.requests.length).toBe(polls);
      await new Promise((resolve) => setTimeout(resolve, 350));
      const task = await pollUntilSettled(video.id);
      expect(task).toMatchObject({ status: 'completed', charged_quota: 600_000 });
      expect((await consumeLogs()).filter((log) => JSON.parse(log.other!).taskId === video.id)).toHaveLength(1);
      await expectInvariant();
    });

    it('keeps a task in flight through a restart and bills it once when two nodes poll it', async () => {
      emulator.plan = { outcome: 'completed', polls: 2 };
      const logged = (await consumeLogs()).length;
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) ids.push((await bodyOf(await create())).id);
      expect((await expectInvariant()).userHeld).toBe(3 * EIGHT_SECONDS);

      // a restart: SQLite gives back what dead requests held at start, but never what tasks hold
      await app.close();
      app = await buildTestApp({ tasks: POLLING }, database.config);
      db = app.ctx.db;
      baseUrl = await listenOnFreePort(app);
      expect((await expectInvariant()).userHeld).toBe(3 * EIGHT_SECONDS);

      // a second node beside it (one process per SQLite file: there, the restarted node alone)
      const second = target.name === 'sqlite' ? undefined : await buildTestApp({ tasks: POLLING }, database.config);
      try {
        for (let pass = 0; pass < 6; pass += 1) {
          await Promise.all([app.taskPoller.runOnce(), second?.taskPoller.runOnce()]);
          await expectInvariant();
        }
      } finally {
        await second?.close();
      }
      for (const id of ids) expect(await findTaskById(db, id)).toMatchObject({ status: 'completed', charged_quota: EIGHT_SECONDS });
      const logs = await consumeLogs();
      expect(logs).toHaveLength(logged + 3);
      for (const id of ids) expect(logs.filter((log) => JSON.parse(log.other!).taskId === id)).toHaveLength(1);
      expect((await expectInvariant()).userHeld).toBe(0);
    });

    it("serves the openai SDK's own Videos methods: create, retrieve, list, downloadContent and delete", async () => {
      emulator.plan = { outcome: 'completed', polls: 1 };
      const client = new OpenAI({ apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
      const logged = (await consumeLogs()).length;
      const video = await client.videos.create({ model: 'sora-2', prompt: 'a heron at dawn', seconds: '8', size: '720x1280' });
      expect(video).toMatchObject({ object: 'video', status: 'queued', seconds: '8' });
      expect((await expectInvariant()).userHeld).toBe(EIGHT_SECONDS);
      await pollUntilSettled(video.id);
      expect(await client.videos.retrieve(video.id)).toMatchObject({ id: video.id, status: 'completed', progress: 100 });
      const listed = await client.videos.list({ limit: 100 });
      expect(listed.data.map((item) => item.id)).toContain(video.id);
      const content = await client.videos.downloadContent(video.id);
      expect(Buffer.from(await content.arrayBuffer())).toEqual(emulator.content);
      // billed once, at 8 s x $0.10 x 500,000, with one log naming the task
      const logs = (await consumeLogs()).slice(logged);
      expect(logs.map((log) => [Number(log.quota), JSON.parse(log.other!).taskId])).toEqual([[EIGHT_SECONDS, video.id]]);
      expect(await client.videos.delete(video.id)).toMatchObject({ id: video.id, deleted: true });
      await expect(client.videos.retrieve(video.id)).rejects.toMatchObject({ status: 404 });
      expect((await expectInvariant()).userHeld).toBe(0);
    });
  });
}
