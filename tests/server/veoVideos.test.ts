// Google's Veo through OpenAI's Videos API, on a Gemini API channel and a
// Vertex AI channel (SQLite: this adds no SQL; the task ledger's dialects are
// videos.test.ts's). A video holds seconds x price x group ratio, is asked of
// Veo as a long-running operation (predictLongRunning), polled until done,
// billed once with one consume log naming the task, and served: the Gemini
// API's file downloaded with the key, Vertex AI's bytes from the copy the
// gateway keeps, each with a Range. A failed, safety-filtered or Cloud Storage
// result, and an unfinished video deleted, give everything back.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType } from '../../common/roles';
import type { Database } from '../../server/db/database';
import { findTaskById } from '../../server/repositories/tasks';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';
import { ledgerState } from '../support/ledgerState';
import { startVeoEmulator, VEO_KEY, type VeoEmulator } from '../support/emulators/veoEmulator';
import { startVertexEmulator, VERTEX_PROJECT, vertexServiceAccountKey, type VertexEmulator } from '../support/emulators/vertex';
import { listenOnFreePort } from './relay/harness';

const TOKEN_START = 50_000_000;
const GROUP_RATIO = 1.5;
const POLLING = { intervalMs: 0, pollEveryMs: 0, leaseMs: 60_000 };
/** seconds x USD per second x group ratio x 500,000 quota per dollar. */
const quotaOf = (seconds: number, perSecond: number) => Math.round(seconds * perSecond * GROUP_RATIO * 500_000);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('a first frame')]);

interface Video {
  id: string;
  status: string;
  model: string;
  seconds: string;
  size: string;
  error: { code: string; message: string } | null;
}

describe('Veo videos through the Gemini API and Vertex AI', () => {
  let app: FastifyInstance;
  let db: Kysely<Database>;
  let veo: VeoEmulator;
  let vertex: VertexEmulator;
  let client: OpenAI;
  let baseUrl = '';
  let apiKey = '';
  let tokenId = 0;
  let userStart = 0;

  // the SDK's own Videos methods (its types know Sora's lengths and sizes, not Veo's: the bodies are plain records)
  const create = (body: Record<string, unknown>) =>
    client.videos.create({ prompt: 'a heron at dawn', ...body }) as unknown as Promise<Video>;
  const retrieve = (id: string) => client.videos.retrieve(id) as unknown as Promise<Video>;
  const consumeLogs = () => db.selectFrom('logs').selectAll().where('type', '=', LogType.consume).where('token_id', '=', tokenId).execute();
  const content = (id: string, range?: string) =>
    fetch(`${baseUrl}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${apiKey}`, ...(range ? { range } : {}) } });
  /** start - logged charges - held = balance, for the user and the key; and what is held is what tasks hold. */
  const expectInvariant = async () => {
    const state = await ledgerState(db, 1, tokenId);
    expect(state.quota + state.userHeld + state.logged).toBe(userStart);
    expect(state.remain + state.tokenHeld + state.logged).toBe(TOKEN_START);
    const tasks = await db.selectFrom('tasks').select('held_quota').execute();
    expect(state.userHeld).toBe(tasks.reduce((sum, row) => sum + Number(row.held_quota), 0));
    return state;
  };
  const pollUntilSettled = async (id: string) => {
    for (let pass = 0; pass < 10; pass += 1) {
      await app.taskPoller.runOnce();
      const task = await findTaskById(db, id);
      if (task && !['submitting', 'queued', 'in_progress'].includes(task.status)) return task;
    }
    throw new Error(`task ${id} never settled`);
  };

  beforeAll(async () => {
    veo = await startVeoEmulator();
    vertex = await startVertexEmulator();
    app = await buildTestApp({ tasks: POLLING });
    db = app.ctx.db;
    baseUrl = await listenOnFreePort(app);
    const root = await login(app, 'root', ROOT_PASSWORD);
    const admin = (method: 'POST' | 'PUT', url: string, payload: unknown) =>
      asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
    const ratios = { default: GROUP_RATIO, vip: 1, svip: 1 };
    expect((await admin('PUT', '/api/option/', { key: 'GroupRatio', value: JSON.stringify(ratios) })).success).toBe(true);
    const gemini = { type: 24, name: 'veo-gemini', key: VEO_KEY, base_url: veo.baseUrl, group: 'default' };
    expect((await admin('POST', '/api/channel/', { ...gemini, models: 'veo-3.0-generate-001' })).success).toBe(true);
    const cloud = { type: 42, name: 'veo-vertex', key: vertexServiceAccountKey(vertex), base_url: veo.baseUrl, other: 'us-east1' };
    expect((await admin('POST', '/api/channel/', { ...cloud, group: 'default', models: 'veo-3.1-fast-generate-preview' })).success).toBe(
      true,
    );
    const token = await admin('POST', '/api/token/', { name: 'veo', remain_quota: TOKEN_START });
    apiKey = `sk-${token.data.key}`;
    tokenId = token.data.id as number;
    client = new OpenAI({ apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    const state = await ledgerState(db, 1, tokenId);
    userStart = state.quota + state.userHeld + state.logged;
  });

  afterAll(async () => {
    await app?.close();
    await veo?.close();
    await vertex?.close();
  });

  it('asks the Gemini API, polls the operation to done, bills once, and streams the file with a Range', async () => {
    veo.plan = { outcome: 'completed', polls: 1 };
    const held = quotaOf(8, 0.4);
    const video = await create({ model: 'veo-3.0-generate-001', seconds: '8', size: '1920x1080' });
    expect(video).toMatchObject({ object: 'video', model: 'veo-3.0-generate-001', status: 'queued', seconds: '8', size: '1920x1080' });
    expect(video.id).toMatch(/^video_/);
    const submit = veo.requests.at(-1)!;
    expect(submit.url).toBe('/v1beta/models/veo-3.0-generate-001:predictLongRunning');
    expect(submit.headers['x-goog-api-key']).toBe(VEO_KEY);
    expect(veo.submits.at(-1)).toEqual({
      instances: [{ prompt: 'a heron at dawn' }],
      parameters: { durationSeconds: 8, aspectRatio: '16:9', resolution: '1080p' },
    });
    const task = await findTaskById(db, video.id);
    expect(task?.upstream_id).toMatch(/^models\/veo-3\.0-generate-001\/operations\/[0-9a-f]+$/);
    expect((await expectInvariant()).userHeld).toBe(held);

    await app.taskPoller.runOnce();
    expect((await retrieve(video.id)).status).toBe('in_progress');
    expect(veo.requests.at(-1)!.url).toBe(`/v1beta/${task!.upstream_id}`);
    const settled = await pollUntilSettled(video.id);
    expect(settled).toMatchObject({ status: 'completed', charged_quota: held, held_quota: 0 });
    const logs = await consumeLogs();
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].quota)).toBe(held);
    expect(JSON.parse(logs[0].other!)).toMatchObject({ operation: 'videos', taskId: video.id });
    await expectInvariant();

    const whole = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(veo.content);
    const ranged = await content(video.id, 'bytes=1000-2999');
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 1000-2999/${veo.content.length}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(veo.content.subarray(1000, 3000));
    const download = veo.requests.at(-1)!;
    expect(download.url).toMatch(/^\/v1beta\/files\/[0-9a-f]+:download\?alt=media$/);
    expect(download.headers['x-goog-api-key']).toBe(VEO_KEY);

    // Google deletes no operation: the finished video is forgotten here, its charge and log stay
    const asked = veo.requests.length;
    expect(await client.videos.delete(video.id)).toEqual({ id: video.id, object: 'video.deleted', deleted: true });
    expect(veo.requests.length).toBe(asked);
    expect(await consumeLogs()).toHaveLength(1);
    await expectInvariant();
  });

  it('asks Vertex AI with the first frame, keeps the bytes it hands over, and serves them with a Range', async () => {
    veo.plan = { outcome: 'completed', polls: 0 };
    const minted = vertex.tokenRequests;
    // a first frame: the SDK sends the request as multipart/form-data
    const video = await create({
      model: 'veo-3.1-fast-generate-preview',
      prompt: 'the heron takes off',
      seconds: '4',
      input_reference: await toFile(PNG, 'frame.png', { type: 'image/png' }),
    });
    expect(video).toMatchObject({ model: 'veo-3.1-fast-generate-preview', seconds: '4', size: '720x1280', status: 'queued' });
    const prefix = `/v1/projects/${VERTEX_PROJECT}/locations/us-east1/publishers/google/models/veo-3.1-fast-generate-preview`;
    expect(veo.requests.at(-1)!.url).toBe(`${prefix}:predictLongRunning`);
    expect(vertex.tokenRequests).toBe(minted + 1);
    expect(veo.submits.at(-1)).toEqual({
      instances: [{ prompt: 'the heron takes off', image: { bytesBase64Encoded: PNG.toString('base64'), mimeType: 'image/png' } }],
      parameters: { durationSeconds: 4, aspectRatio: '9:16', resolution: '720p' },
    });
    const held = quotaOf(4, 0.15);
    expect((await expectInvariant()).userHeld).toBe(held);

    const settled = await pollUntilSettled(video.id);
    expect(settled).toMatchObject({ status: 'completed', charged_quota: held, held_quota: 0 });
    const poll = veo.requests.at(-1)!;
    expect(poll.url).toBe(`${prefix}:fetchPredictOperation`);
    expect(poll.body).toEqual({ operationName: settled.upstream_id });
    expect((await consumeLogs()).filter((log) => JSON.parse(log.other!).taskId === video.id)).toHaveLength(1);
    await expectInvariant();

    const asked = veo.requests.length;
    const whole = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(veo.content);
    const ranged = await content(video.id, 'bytes=262000-263999');
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 262000-263999/${veo.content.length}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(veo.content.subarray(262000, 264000));
    expect((await content(video.id, `bytes=${veo.content.length}-`)).status).toBe(416);
    // served from the gateway's copy: Vertex AI is not asked again
    expect(veo.requests.length).toBe(asked);

    await client.videos.delete(video.id);
    const left = await db.selectFrom('file_chunks').select('file_id').where('file_id', 'like', `${video.id}%`).execute();
    expect(left).toHaveLength(0);
  });

  it('gives everything back for a failed, a safety-filtered or a Cloud Storage video, and for one deleted unfinished', async () => {
    const logged = (await consumeLogs()).length;
    const cases = [
      { plan: { outcome: 'failed', polls: 0 }, model: 'veo-3.0-generate-001', code: 'video_failed' },
      { plan: { outcome: 'filtered', polls: 0 }, model: 'veo-3.1-fast-generate-preview', code: 'moderation_blocked' },
      { plan: { outcome: 'filtered', polls: 0 }, model: 'veo-3.0-generate-001', code: 'moderation_blocked' },
      { plan: { outcome: 'gcs', polls: 0 }, model: 'veo-3.1-fast-generate-preview', code: 'video_in_cloud_storage' },
    ] as const;
    for (const { plan, model, code } of cases) {
      veo.plan = { ...plan };
      const video = await create({ model, seconds: '6', size: '1280x720' });
      expect((await expectInvariant()).userHeld).toBeGreaterThan(0);
      expect(await pollUntilSettled(video.id)).toMatchObject({ status: 'failed', charged_quota: 0, held_quota: 0 });
      const got = await retrieve(video.id);
      expect(got).toMatchObject({ status: 'failed', error: { code } });
      expect((await content(video.id)).status).toBe(400);
    }

    // deleted while Veo still works on it: all of it back, and the operation is never polled again
    veo.plan = { outcome: 'completed', polls: 100 };
    const unfinished = await create({ model: 'veo-3.0-generate-001', seconds: '4', size: '720x1280' });
    await app.taskPoller.runOnce();
    const operation = veo.operations.get((await findTaskById(db, unfinished.id))!.upstream_id!)!;
    expect(operation.polled).toBe(1);
    await client.videos.delete(unfinished.id);
    expect(await findTaskById(db, unfinished.id)).toMatchObject({ status: 'deleted', charged_quota: 0, held_quota: 0 });
    await app.taskPoller.runOnce();
    expect(operation.polled).toBe(1);

    // a square Veo cannot make is refused before it is asked; a length it cannot make, by Veo: nothing kept either way
    await expect(create({ model: 'veo-3.0-generate-001', size: '1024x1024' })).rejects.toMatchObject({ status: 400 });
    const submits = veo.submits.length;
    await expect(create({ model: 'veo-3.0-generate-001', seconds: '12' })).rejects.toMatchObject({
      status: 400,
      error: { message: expect.stringContaining('Unsupported output video duration') },
    });
    expect(veo.submits.length).toBe(submits);
    expect(await consumeLogs()).toHaveLength(logged);
    expect((await expectInvariant()).userHeld).toBe(0);
  });
});
