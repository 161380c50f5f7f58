// The housekeeping of /v1/files: the periodic sweep removes every user's
// expired files, the uploads their node never finished and files whose owner
// is gone, each exactly once however many nodes sweep at once, freeing the
// bytes (rows and chunks); a deleted user's files go with them (by an admin,
// by the manage action, by themselves); FileUploadRateLimit refuses a user's
// uploads past it with OpenAI's 429. On SQLite and PostgreSQL; the S3 store's objects against
// s3rver on SQLite.
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesS3FromEnv } from '../../server/config';
import { insertFileChunk, insertUploadingFile, setFileBytes, storedBytesOf } from '../../server/repositories/files';
import { databaseFileStore, STALE_UPLOAD_SECONDS, sweepDeadFiles, type FileStore } from '../../server/services/fileStore';
import { appFileStore } from '../../server/services/s3FileStore';
import { asBrowser, login, register } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('files housekeeping', { besideSqlite: 'postgres' });
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Member {
  id: number;
  cookie: string;
  client: OpenAI;
}

/** A new user with an API key of their own, and the SDK's client for it. */
async function member(harness: RelayHarness, name: string): Promise<Member> {
  await register(harness.app, name);
  const cookie = await login(harness.app, name, 'password-123');
  const token = (
    await asBrowser(harness.app, cookie, { method: 'POST', url: '/api/token/', payload: { name: 'files', remain_quota: 1000 } })
  ).json();
  const row = await harness.app.ctx.db.selectFrom('users').select('id').where('username', '=', name).executeTakeFirstOrThrow();
  const client = new OpenAI({ apiKey: `sk-${token.data.key}`, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  return { id: Number(row.id), cookie, client };
}

const upload = async (client: OpenAI, text: string, expiresAfter?: number) =>
  client.files.create({
    file: await toFile(Buffer.from(text), 'data.txt'),
    purpose: 'user_data',
    ...(expiresAfter ? { expires_after: { anchor: 'created_at' as const, seconds: expiresAfter } } : {}),
  });

/** The app's database store, counting the files whose bytes it frees. */
function countingStore(harness: RelayHarness, freed: string[]): FileStore {
  const store = databaseFileStore(harness.app.ctx.db);
  return {
    ...store,
    delete: async (id) => {
      freed.push(id);
      await store.delete(id);
    },
  };
}

for (const target of targets) {
  describe.runIf(target.available)(`files housekeeping on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    const fileIds = async (userId: number) =>
      (await harness.app.ctx.db.selectFrom('files').select('id').where('user_id', '=', userId).orderBy('seq').execute()).map(
        (row) => row.id,
      );
    const chunkCount = async (fileIds: string[]) =>
      fileIds.length === 0
        ? 0
        : (await harness.app.ctx.db.selectFrom('file_chunks').select('seq').where('file_id', 'in', fileIds).execute()).length;

    it('sweeps every expired file and dead upload exactly once while two nodes sweep at once, freeing their bytes', async () => {
      const { db } = harness.app.ctx;
      const ann = await member(harness, 'ann');
      const bob = await member(harness, 'bob');
      const kept = await upload(ann.client, 'kept for good');
      const annExpiring = await upload(ann.client, 'short-lived', 3600);
      const bobExpiring = await upload(bob.client, 'also short-lived', 3600);
      // an upload whose node died a day ago: its row still `uploading`, its bytes still counted
      const deadUpload = 'file-deaduploaddeaduploaddead';
      await insertUploadingFile(db, {
        id: deadUpload,
        userId: bob.id,
        filename: 'cut.bin',
        purpose: '',
        createdAt: nowSeconds() - STALE_UPLOAD_SECONDS - 60,
      });
      await insertFileChunk(db, deadUpload, 0, Buffer.alloc(1000));
      await setFileBytes(db, deadUpload, 1000);
      // a file whose owner is gone (the deletion's own removal cut short)
      const orphan = 'file-orphanorphanorphanorphan';
      await insertUploadingFile(db, { id: orphan, userId: 987_654, filename: 'left.bin', purpose: 'user_data', createdAt: nowSeconds() });
      await insertFileChunk(db, orphan, 0, Buffer.alloc(10));
      expect(await storedBytesOf(db, bob.id)).toBe(1000 + 'also short-lived'.length);
      await db
        .updateTable('files')
        .set({ expires_at: nowSeconds() - 5 })
        .where('id', 'in', [annExpiring.id, bobExpiring.id])
        .execute();

      const freedA: string[] = [];
      const freedB: string[] = [];
      const [sweptA, sweptB] = await Promise.all([
        sweepDeadFiles(db, countingStore(harness, freedA)),
        sweepDeadFiles(db, countingStore(harness, freedB)),
      ]);
      expect(sweptA + sweptB).toBe(4);
      expect([...freedA, ...freedB].sort()).toEqual([annExpiring.id, bobExpiring.id, deadUpload, orphan].sort());
      expect(await fileIds(ann.id)).toEqual([kept.id]);
      expect(await fileIds(bob.id)).toEqual([]);
      expect(await chunkCount([annExpiring.id, bobExpiring.id, deadUpload, orphan])).toBe(0);
      expect(await storedBytesOf(db, bob.id)).toBe(0);
      expect(await storedBytesOf(db, ann.id)).toBe('kept for good'.length);
      // nothing left to sweep: a second pass frees nothing
      expect(await sweepDeadFiles(db, countingStore(harness, freedA))).toBe(0);
      expect((await ann.client.files.retrieve(kept.id)).id).toBe(kept.id);
    });

    it("deletes a user's files with the user, however the user is deleted", async () => {
      const users = {
        byAdmin: await member(harness, 'cleo'),
        byManage: await member(harness, 'dan'),
        bySelf: await member(harness, 'eve'),
      };
      const made: Record<string, string[]> = {};
      for (const [how, user] of Object.entries(users))
        made[how] = [(await upload(user.client, `${how} one`)).id, (await upload(user.client, `${how} two`, 7200)).id];
      const neighbour = await member(harness, 'fay');
      const theirs = await upload(neighbour.client, 'not theirs to lose');

      expect((await harness.admin('DELETE', `/api/user/${users.byAdmin.id}`)).success).toBe(true);
      expect((await harness.admin('POST', '/api/user/manage', { username: 'dan', action: 'delete' })).success).toBe(true);
      const self = await asBrowser(harness.app, users.bySelf.cookie, { method: 'DELETE', url: '/api/user/self' });
      expect(self.json()).toMatchObject({ success: true });

      for (const [how, user] of Object.entries(users)) {
        expect(await fileIds(user.id)).toEqual([]);
        expect(await chunkCount(made[how])).toBe(0);
        expect(await storedBytesOf(harness.app.ctx.db, user.id)).toBe(0);
      }
      expect(await fileIds(neighbour.id)).toEqual([theirs.id]);
      expect((await neighbour.client.files.content(theirs.id)).ok).toBe(true);
    });
  });
}

describe('the file upload rate limit', () => {
  let harness: RelayHarness;
  beforeAll(async () => {
    harness = await startRelayHarness();
  });
  afterAll(() => harness?.close());

  it("refuses a user's uploads past FileUploadRateLimit a minute with OpenAI's 429, others' still taken", async () => {
    expect(harness.app.ctx.options.number('FileUploadRateLimit')).toBe(60);
    await harness.app.ctx.options.set('FileUploadRateLimit', '2');
    const gus = await member(harness, 'gus');
    const hal = await member(harness, 'hal');
    await upload(gus.client, 'one');
    await upload(gus.client, 'two');
    const refused = await upload(gus.client, 'three').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const answer = refused as InstanceType<typeof OpenAI.APIError>;
    expect(answer.status).toBe(429);
    expect(answer.error).toEqual({
      message: 'Rate limit reached for file uploads: at most 2 a minute per user.',
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    });
    expect(Number(answer.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect((await gus.client.files.list()).data).toHaveLength(2);
    expect((await upload(hal.client, 'hal one')).object).toBe('file');
    await harness.app.ctx.options.set('FileUploadRateLimit', '0');
    expect((await upload(gus.client, 'unlimited now')).object).toBe('file');
  });
});

describe('files housekeeping in S3-compatible storage', () => {
  const BUCKET = 'housekeeping';
  const directory = mkdtempSync(join(tmpdir(), 'switchboard-s3-housekeeping-'));
  let server: S3rver;
  let s3: S3Client;
  let harness: RelayHarness;
  beforeAll(async () => {
    server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: BUCKET }] });
    const { port } = await server.run();
    const settings = filesS3FromEnv({
      FILES_S3_BUCKET: BUCKET,
      FILES_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      FILES_S3_ACCESS_KEY_ID: 'S3RVER',
      FILES_S3_SECRET_ACCESS_KEY: 'S3RVER',
    })!;
    s3 = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    harness = await startRelayHarness(undefined, { filesS3: settings });
  });
  afterAll(async () => {
    await harness?.close();
    s3?.destroy();
    await server?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const objectKeys = async () =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((object) => object.Key).sort();

  it("deletes the objects of expired files and of a deleted user's files", async () => {
    const { config, db } = harness.app.ctx;
    const ivy = await member(harness, 'ivy');
    const jon = await member(harness, 'jon');
    const expiring = await upload(ivy.client, 'expiring', 3600);
    const kept = await upload(ivy.client, 'kept');
    const jonsFiles = [(await upload(jon.client, 'jon one')).id, (await upload(jon.client, 'jon two')).id];
    expect(await objectKeys()).toEqual([expiring.id, kept.id, ...jonsFiles].map((id) => `files/${id}`).sort());

    await db
      .updateTable('files')
      .set({ expires_at: nowSeconds() - 5 })
      .where('id', '=', expiring.id)
      .execute();
    expect(await sweepDeadFiles(db, appFileStore(config, db))).toBe(1);
    expect(await objectKeys()).toEqual([kept.id, ...jonsFiles].map((id) => `files/${id}`).sort());

    expect((await harness.admin('DELETE', `/api/user/${jon.id}`)).success).toBe(true);
    expect(await objectKeys()).toEqual([`files/${kept.id}`]);
    expect(await storedBytesOf(db, jon.id)).toBe(0);
    expect(Buffer.from(await (await ivy.client.files.content(kept.id)).arrayBuffer()).toString()).toBe('kept');
  });
});
