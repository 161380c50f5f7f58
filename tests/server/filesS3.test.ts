// /v1/files kept in S3-compatible storage (FILES_S3_*), against s3rver, a
// local S3-compatible server, on loopback: 5 MB round-trips byte for byte
// through a multipart upload, the object is named under the prefix, and a
// delete removes it; a refused upload and one whose client went away abort
// their multipart upload, leaving no object, no parts and no row; another
// user's file answers 404. SQLite only: nothing here is the database's.
import { HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesS3FromEnv } from '../../server/config';
import type { S3FileStoreSettings } from '../../server/config';
import { s3KeyOf } from '../../server/services/s3FileStore';
import { asBrowser, login, register } from '../support/app';
import { startRelayHarness, type RelayHarness } from './relay/harness';

const MIB = 1024 * 1024;
const BUCKET = 'gateway-files';

async function until(what: string, done: () => Promise<boolean> | boolean): Promise<void> {
  for (let wait = 0; !(await done()); wait++) {
    if (wait > 500) throw new Error(`${what}: never happened`);
    await new Promise((wake) => setTimeout(wake, 10));
  }
}

describe('files in S3-compatible storage', () => {
  const directory = mkdtempSync(join(tmpdir(), 'switchboard-s3-'));
  /** The multipart uploads s3rver holds (bucket/._S3rver_uploads/<upload id>): parts not yet an object. */
  const pendingUploads = () => {
    const uploads = join(directory, BUCKET, '._S3rver_uploads');
    return existsSync(uploads) ? readdirSync(uploads) : [];
  };
  const aborted: string[] = [];
  let server: S3rver;
  let settings: S3FileStoreSettings;
  let s3: S3Client;
  let harness: RelayHarness;
  let client: OpenAI;
  let otherClient: OpenAI;

  beforeAll(async () => {
    server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: BUCKET }] });
    // s3rver answers AbortMultipartUpload with 405; here it does what S3 does, dropping the upload's parts
    server.middleware.unshift(async (context, next) => {
      const uploadId = context.query.uploadId;
      if (context.method !== 'DELETE' || typeof uploadId !== 'string') return next();
      aborted.push(uploadId);
      rmSync(join(directory, BUCKET, '._S3rver_uploads', uploadId), { recursive: true, force: true });
      context.status = 204;
    });
    const { port } = await server.run();
    settings = filesS3FromEnv({
      FILES_S3_BUCKET: BUCKET,
      FILES_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      FILES_S3_ACCESS_KEY_ID: 'S3RVER',
      FILES_S3_SECRET_ACCESS_KEY: 'S3RVER',
      FILES_S3_PREFIX: 'tenant-a/',
    })!;
    s3 = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    harness = await startRelayHarness(undefined, { filesS3: settings });
    client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
    await register(harness.app, 'neighbour');
    const cookie = await login(harness.app, 'neighbour', 'password-123');
    const token = (
      await asBrowser(harness.app, cookie, { method: 'POST', url: '/api/token/', payload: { name: 'k', remain_quota: 1000 } })
    ).json();
    otherClient = new OpenAI({ apiKey: `sk-${token.data.key}`, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await harness?.close();
    s3?.destroy();
    await server?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** The object's size, or undefined when S3 answers 404. */
  const objectBytes = async (fileId: string) => {
    try {
      return (await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: s3KeyOf(settings, fileId) }))).ContentLength;
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
      throw error;
    }
  };
  const objectKeys = async () =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((object) => object.Key).sort();
  const rowIds = async () => (await harness.app.ctx.db.selectFrom('files').select('id').execute()).map((row) => row.id).sort();
  const chunkCount = async () => (await harness.app.ctx.db.selectFrom('file_chunks').select('seq').execute()).length;
  const upload = async (bytes: Buffer, as = client) => as.files.create({ file: await toFile(bytes, 'data.bin'), purpose: 'user_data' });
  const contentOf = async (id: string) => Buffer.from(await (await client.files.content(id)).arrayBuffer());

  it('reads its settings from FILES_S3_*, addressing an endpoint by path', () => {
    expect(settings).toEqual({
      bucket: BUCKET,
      endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: 'tenant-a/',
    });
    expect(filesS3FromEnv({ FILES_S3_ENDPOINT: 'http://x' })).toBeUndefined();
    expect(() => filesS3FromEnv({ FILES_S3_BUCKET: 'b', FILES_S3_ACCESS_KEY_ID: 'only-the-id' })).toThrow(/set together/);
  });

  it('round-trips 5 MB byte for byte through a multipart upload, lists it, and a delete removes its object', async () => {
    const bytes = randomBytes(5 * MIB + 12_345);
    const small = await upload(Buffer.from('small file'));
    const file = await upload(bytes);
    expect(file).toMatchObject({ object: 'file', bytes: bytes.length, filename: 'data.bin', purpose: 'user_data', status: 'processed' });
    expect(await objectBytes(file.id)).toBe(bytes.length);
    expect(await objectKeys()).toEqual([`tenant-a/files/${file.id}`, `tenant-a/files/${small.id}`].sort());
    expect(await chunkCount()).toBe(0);
    expect(pendingUploads()).toEqual([]);
    expect((await client.files.list()).data.map((listed) => listed.id)).toEqual([file.id, small.id]);
    expect((await contentOf(file.id)).equals(bytes)).toBe(true);
    expect((await contentOf(small.id)).toString()).toBe('small file');
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    expect(await objectBytes(file.id)).toBeUndefined();
    await client.files.delete(small.id);
    expect(await objectKeys()).toEqual([]);
  });

  it("answers 404 for another user's file, whose object stays", async () => {
    const mine = await upload(Buffer.from('private'));
    for (const call of [otherClient.files.retrieve(mine.id), otherClient.files.content(mine.id), otherClient.files.delete(mine.id)])
      await expect(call).rejects.toMatchObject({ status: 404 });
    expect(await objectBytes(mine.id)).toBe('private'.length);
    expect((await contentOf(mine.id)).toString()).toBe('private');
    await client.files.delete(mine.id);
  });

  it('aborts the multipart upload of a file refused midway: no object, no parts, no row', async () => {
    const abortsBefore = aborted.length;
    await harness.app.ctx.options.set('FileSizeLimitMB', '6');
    try {
      await expect(upload(randomBytes(7 * MIB))).rejects.toMatchObject({ status: 400, error: { code: 'file_too_large' } });
    } finally {
      await harness.app.ctx.options.set('FileSizeLimitMB', '0');
    }
    expect(aborted.length).toBe(abortsBefore + 1);
    expect(await objectKeys()).toEqual([]);
    expect(pendingUploads()).toEqual([]);
    expect(await rowIds()).toEqual([]);
  });

  it('aborts the multipart upload of a client gone midway', async () => {
    const abortsBefore = aborted.length;
    const boundary = 'cutoff';
    const cut = httpRequest(`${harness.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    cut.on('error', () => undefined);
    cut.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`);
    cut.write(randomBytes(6 * MIB));
    // the first part is on its way to the bucket, then the client is gone
    await until('a multipart upload begins', () => pendingUploads().length > 0);
    cut.destroy();
    await until('the cut upload is removed', async () => (await rowIds()).length === 0 && aborted.length > abortsBefore);
    expect(aborted.length).toBe(abortsBefore + 1);
    expect(pendingUploads()).toEqual([]);
    expect(await objectKeys()).toEqual([]);
  });
});
