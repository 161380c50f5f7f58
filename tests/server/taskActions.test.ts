// What the console does to one task with its session cookie (routes/api/
// taskActions.ts), against the video emulator and the OpenAI emulator: a
// finished video streams with the browser's Range and downloads; a batch's
// output and error files download; a running video and a batch cancel, all
// they hold going back (the ledger's invariant for the owner after each).
// The owner and admins only: another user gets 404 as for an unknown task,
// a guest 401, and a cross-site cancel is refused (403) with no effect.
// On SQLite and PostgreSQL.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../server/config';
import type { Database } from '../../server/db/database';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets } from '../support/databases';
import { runBatchUntilClosed } from '../support/batchRuns';
import { findTaskById } from '../../server/repositories/tasks';
import { ledgerState } from '../support/ledgerState';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { startVideoEmulator, type VideoEmulator } from '../support/emulators/videoEmulator';
import { listenOnFreePort, sharedDatabase } from './relay/harness';

const START = 50_000_000;
const CONFIG = { tasks: { intervalMs: 0, pollEveryMs: 0, leaseMs: 60_000 }, batches: { intervalMs: 0 }, quotaLeases: false };
const chatLine = (customId: string) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hello batch' }], max_tokens: 20 },
});

const targets = await databaseTargets('task actions', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`the console's task actions on ${target.name}`, () => {
    let database: { config: DatabaseConfig; drop(): Promise<void> };
    let app: FastifyInstance;
    let db: Kysely<Database>;
    let videos: VideoEmulator;
    let openai: OpenAIEmulator;
    let baseUrl = '';
    let apiKey = '';
    let annId = 0;
    let tokenId = 0;
    const cookies = { root: '', ann: '', bob: '' };

    const as = (who: keyof typeof cookies | 'guest', method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}) =>
      asBrowser(app, who === 'guest' ? undefined : cookies[who], { method, url, headers });
    const relay = (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      }).then((response) => response.json() as Promise<Record<string, any>>);
    /** Nothing held once idle, and start - logged charges - held = balance for ann and her key. */
    const expectSettled = async () => {
      const state = await ledgerState(db, annId, tokenId);
      expect(state.userHeld).toBe(0);
      expect(state.quota + state.logged).toBe(START);
      expect(state.remain + state.logged).toBe(START);
    };
    const video = async (outcome: 'completed' | 'stuck') => {
      videos.plan = { outcome, polls: 1 };
      const created = await relay('POST', '/v1/videos', { model: 'sora-2', prompt: 'a cat', seconds: '4', size: '720x1280' });
      expect(created.id).toMatch(/^video_/);
      for (let pass = 0; pass < 3; pass += 1) await app.taskPoller.runOnce();
      return String(created.id);
    };
    const batch = async (count: number) => {
      const form = new FormData();
      form.append('purpose', 'batch');
      const text = Array.from({ length: count }, (_, index) => JSON.stringify(chatLine(`line-${index}`))).join('\n');
      form.append('file', new Blob([`${text}\n`]), 'input.jsonl');
      const uploaded = await fetch(`${baseUrl}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
      const file = (await uploaded.json()) as { id: string };
      const created = await relay('POST', '/v1/batches', {
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect(created.id).toMatch(/^batch_/);
      return String(created.id);
    };
    const runUntilClosed = (id: string) => runBatchUntilClosed(db, id, [app], { passes: 50 });

    beforeAll(async () => {
      [videos, openai] = await Promise.all([startVideoEmulator(), startOpenAIEmulator({ record: false })]);
      database = await sharedDatabase(target);
      app = await buildTestApp(CONFIG, database.config);
      db = app.ctx.db;
      baseUrl = await listenOnFreePort(app);
      cookies.root = await login(app, 'root', ROOT_PASSWORD);
      const admin = (method: 'POST' | 'PUT', url: string, payload: unknown) =>
        asBrowser(app, cookies.root, { method, url, payload: payload as never }).then((response) => response.json());
      expect((await admin('PUT', '/api/option/', { key: 'BatchUpstreamEnabled', value: 'false' })).success).toBe(true);
      for (const [name, base, models] of [
        ['sora', videos.baseUrl, 'sora-2'],
        ['chat', openai.baseUrl, 'gpt-3.5-turbo'],
      ]) {
        const channel = await admin('POST', '/api/channel/', {
          type: 1,
          name,
          key: 'sk-channel',
          base_url: base,
          models,
          group: 'default',
        });
        expect(channel.success, channel.message).toBe(true);
      }
      for (const name of ['ann', 'bob'] as const) {
        await register(app, name);
        cookies[name] = await login(app, name, 'password-123');
      }
      annId = Number((await db.selectFrom('users').select('id').where('username', '=', 'ann').executeTakeFirstOrThrow()).id);
      await db.updateTable('users').set({ quota: START }).where('id', '=', annId).execute();
      const token = await asBrowser(app, cookies.ann, {
        method: 'POST',
        url: '/api/token/',
        payload: { name: 'ann', remain_quota: START },
      });
      apiKey = `sk-${token.json().data.key}`;
      tokenId = Number(token.json().data.id);
    });

    afterAll(async () => {
      await app?.close();
      await videos?.close();
      await openai?.close();
      await database?.drop();
    });

    it("streams a finished video to its owner and admins, with the browser's Range and as a download; 404 to anyone else", async () => {
      const id = await video('completed');
      expect((await findTaskById(db, id))?.status).toBe('completed');
      const ranged = await as('ann', 'GET', `/api/task/${id}/content`, { range: 'bytes=100-1123' });
      expect(ranged.statusCode).toBe(206);
      expect(ranged.headers['content-range']).toBe(`bytes 100-1123/${videos.content.length}`);
      expect(ranged.rawPayload.equals(videos.content.subarray(100, 1124))).toBe(true);
      const download = await as('root', 'GET', `/api/task/${id}/content?download=1`);
      expect(download.statusCode).toBe(200);
      expect(download.headers['content-type']).toBe('video/mp4');
      expect(download.headers['content-disposition']).toBe(`attachment; filename*=UTF-8''${id}.mp4`);
      expect(download.rawPayload.equals(videos.content)).toBe(true);
      const other = await as('bob', 'GET', `/api/task/${id}/content`);
      expect(other.statusCode).toBe(404);
      expect(other.json()).toMatchObject({ success: false, code: 'not_found' });
      expect((await as('guest', 'GET', `/api/task/${id}/content`)).statusCode).toBe(401);
      // a video is no batch: it has no files, and a finished one is not cancelled
      expect((await as('ann', 'GET', `/api/task/${id}/files/output`)).statusCode).toBe(404);
      expect((await as('ann', 'POST', `/api/task/${id}/cancel`)).statusCode).toBe(409);
      await expectSettled();
    });

    it('cancels a running video for its owner: the vendor deletes it and all it held goes back; others and other sites cannot', async () => {
      const id = await video('stuck');
      expect((await findTaskById(db, id))?.status).toBe('in_progress');
      expect((await as('ann', 'GET', `/api/task/${id}/content`)).statusCode).toBe(409);
      expect((await as('bob', 'POST', `/api/task/${id}/cancel`)).statusCode).toBe(404);
      const crossSite = await as('ann', 'POST', `/api/task/${id}/cancel`, {
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
      });
      expect(crossSite.statusCode).toBe(403);
      expect(crossSite.json().code).toBe('cross_site_refused');
      expect((await findTaskById(db, id))?.status).toBe('in_progress');
      const deletes = videos.requests.filter((line) => line.startsWith('DELETE')).length;
      const cancelled = await as('ann', 'POST', `/api/task/${id}/cancel`);
      expect(cancelled.statusCode).toBe(200);
      expect(cancelled.json().data).toMatchObject({ id, status: 'deleted', held_quota: 0, charged_quota: 0 });
      expect(videos.requests.filter((line) => line.startsWith('DELETE')).length).toBe(deletes + 1);
      await expectSettled();
      expect((await as('ann', 'POST', `/api/task/${id}/cancel`)).statusCode).toBe(404);
    });

    it("cancels a batch for an admin, its unrun lines refunded and in its error file; a finished batch's output file downloads", async () => {
      const cancelledId = await batch(3);
      expect((await as('bob', 'POST', `/api/task/${cancelledId}/cancel`)).statusCode).toBe(404);
      const cancelling = await as('root', 'POST', `/api/task/${cancelledId}/cancel`);
      expect(cancelling.statusCode).toBe(200);
      expect(cancelling.json().data).toMatchObject({ id: cancelledId, status: 'cancelling', held_quota: 0, username: 'ann' });
      await expectSettled();
      const closed = await runUntilClosed(cancelledId);
      expect(closed.status).toBe('cancelled');
      const errors = await as('ann', 'GET', `/api/task/${cancelledId}/files/error`);
      expect(errors.statusCode).toBe(200);
      expect(errors.headers['content-disposition']).toMatch(/^attachment; filename\*=UTF-8''/);
      expect(
        errors.payload
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).custom_id),
      ).toEqual(['line-0', 'line-1', 'line-2']);
      expect((await as('ann', 'GET', `/api/task/${cancelledId}/files/output`)).statusCode).toBe(404);
      expect((await as('ann', 'GET', `/api/task/${cancelledId}/files/input`)).statusCode).toBe(404);

      const doneId = await batch(1);
      expect((await runUntilClosed(doneId)).status).toBe('completed');
      const listed = await as('ann', 'GET', '/api/task/self?p=0&kind=batch');
      const record = listed.json().data.find((task: { id: string }) => task.id === doneId);
      expect(record).toMatchObject({ output_file_id: expect.stringMatching(/^file-/), error_file_id: null });
      for (const who of ['ann', 'root'] as const) {
        const output = await as(who, 'GET', `/api/task/${doneId}/files/output`);
        expect(output.statusCode).toBe(200);
        expect(JSON.parse(output.payload.trim())).toMatchObject({ custom_id: 'line-0', response: { status_code: 200 } });
      }
      expect((await as('bob', 'GET', `/api/task/${doneId}/files/output`)).statusCode).toBe(404);
      expect((await as('ann', 'POST', `/api/task/${doneId}/cancel`)).statusCode).toBe(409);
      const state = await ledgerState(db, annId, tokenId);
      expect(state.userHeld).toBe(0);
      expect(state.quota + state.logged).toBe(START);
    });
  });
}
