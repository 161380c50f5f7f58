// OpenAI's Files API on a listening gateway, called with the official SDK:
// upload, retrieve, content, list (cursor pages, purpose filter) and delete;
// the per-file limit and the stored-bytes quota refusing as the upload
// streams; another user's file answering 404. The chunked storage (each
// dialect's binary column) round-trips 5 MB byte for byte on SQLite,
// PostgreSQL and MariaDB, and a delete frees its rows.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, login, register } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startRelayHarness, type RelayHarness } from './relay/harness';
import { multipartEvents, MultipartError } from '../../server/relay/multipartStream';

const MIB = 1024 * 1024;
const targets = await databaseTargets('files');

const clientOf = (harness: RelayHarness, apiKey = harness.apiKey) =>
  new OpenAI({ apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });

const chunkRows = (harness: RelayHarness, fileId: string) =>
  harness.app.ctx.db.selectFrom('file_chunks').select('seq').where('file_id', '=', fileId).execute();

async function upload(client: OpenAI, bytes: Buffer, purpose: OpenAI.FilePurpose = 'user_data', name = 'data.jsonl') {
  return client.files.create({ file: await toFile(bytes, name), purpose });
}

async function contentOf(client: OpenAI, id: string): Promise<Buffer> {
  return Buffer.from(await (await client.files.content(id)).arrayBuffer());
}

/** The refusal of a call expected to fail: its status and OpenAI error body. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; error: any }> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
  return { status: error.status!, error: error.error };
}

describe('the streaming multipart reader', () => {
  const boundary = 'b0undary';
  // file bytes that look like a delimiter's start, and a CRLF right before the real one
  const fileBytes = Buffer.concat([randomBytes(3000), Buffer.from(`\r\n--b0und\r\n-`), randomBytes(500), Buffer.from('\r\n')]);
  const body = Buffer.concat([
    Buffer.from(`preamble\r\n--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a \\"b\\".jsonl"\r\ncontent-type: x/y\r\n\r\n`),
    fileBytes,
    Buffer.from(`\r\n--${boundary}--\r\nepilogue`),
  ]);

  async function* piecesOf(bytes: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
    for (let at = 0, index = 0; at < bytes.length; at += sizes[index++ % sizes.length])
      yield bytes.subarray(at, at + sizes[index % sizes.length]);
  }

  it('reads the same parts and bytes whatever pieces the body arrives in', async () => {
    for (const sizes of [[1], [7, 1, 13], [4096], [body.length]]) {
      const parts: { name?: string; filename?: string; bytes: Buffer[] }[] = [];
      for await (const event of multipartEvents(piecesOf(body, sizes), boundary)) {
        if (event.kind === 'part') parts.push({ name: event.name, filename: event.filename, bytes: [] });
        else parts.at(-1)!.bytes.push(event.bytes);
      }
      expect(parts.map((part) => [part.name, part.filename])).toEqual([
        ['purpose', undefined],
        ['file', 'a "b".jsonl'],
      ]);
      expect(Buffer.concat(parts[0].bytes).toString()).toBe('batch');
      expect(Buffer.concat(parts[1].bytes).equals(fileBytes)).toBe(true);
    }
  });

  it('refuses a body cut before its closing delimiter', async () => {
    const events = multipartEvents(piecesOf(body.subarray(0, body.length - 30), [64]), boundary);
    await expect(
      (async () => {
        for await (const event of events) void event;
      })(),
    ).rejects.toBeInstanceOf(MultipartError);
  });
});

for (const target of targets) {
  describe.runIf(target.available)(`file storage on ${target.name}`, () => {
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

    it('round-trips 5 MB byte for byte in 256 KiB chunks, and a delete frees them', async () => {
      const client = clientOf(harness);
      const bytes = randomBytes(5 * MIB + 12_345);
      const file = await upload(client, bytes, 'batch', 'big.bin');
      expect(file).toMatchObject({ object: 'file', bytes: bytes.length, filename: 'big.bin', purpose: 'batch', status: 'processed' });
      expect((await chunkRows(harness, file.id)).length).toBe(Math.ceil(bytes.length / (256 * 1024)));
      expect((await contentOf(client, file.id)).equals(bytes)).toBe(true);
      expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
      expect(await chunkRows(harness, file.id)).toEqual([]);
    });
  });
}

describe('the Files API', () => {
  let harness: RelayHarness;
  let client: OpenAI;
  let otherClient: OpenAI;
  beforeAll(async () => {
    harness = await startRelayHarness();
    client = clientOf(harness);
    await register(harness.app, 'neighbour');
    const cookie = await login(harness.app, 'neighbour', 'password-123');
    const token = (
      await asBrowser(harness.app, cookie, { method: 'POST', url: '/api/token/', payload: { name: 'k', remain_quota: 1000 } })
    ).json();
    otherClient = clientOf(harness, `sk-${token.data.key}`);
  });
  afterAll(() => harness?.close());

  const setOption = (key: 'FileSizeLimitMB' | 'FileStorageQuotaMB', value: string) => harness.app.ctx.options.set(key, value);
  const deleteAll = async () => {
    for await (const file of client.files.list()) await client.files.delete(file.id);
  };

  it('uploads, retrieves, reads and deletes a file as OpenAI does', async () => {
    const text = Buffer.from('{"custom_id":"1","method":"POST","url":"/v1/chat/completions","body":{}}\n');
    const before = Math.floor(Date.now() / 1000);
    const file = await upload(client, text, 'batch', 'requests.jsonl');
    expect(file.id).toMatch(/^file-[A-Za-z0-9]{24}$/);
    expect(file).toEqual({
      id: file.id,
      object: 'file',
      bytes: text.length,
      created_at: expect.any(Number),
      expires_at: null,
      filename: 'requests.jsonl',
      purpose: 'batch',
      status: 'processed',
      status_details: null,
    });
    expect(file.created_at).toBeGreaterThanOrEqual(before);
    expect(await client.files.retrieve(file.id)).toEqual(file);
    expect((await contentOf(client, file.id)).equals(text)).toBe(true);
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    const gone = await refusal(client.files.retrieve(file.id));
    expect(gone.status).toBe(404);
    expect(gone.error).toMatchObject({ message: `No such File object: ${file.id}`, type: 'invalid_request_error', param: 'id' });
    expect((await refusal(client.files.delete(file.id))).status).toBe(404);
  });

  it('lists newest first in cursor pages, filtered by purpose', async () => {
    await deleteAll();
    const made: string[] = [];
    for (const purpose of ['user_data', 'assistants', 'user_data', 'user_data'] as const)
      made.push((await upload(client, Buffer.from(`file ${made.length}`), purpose)).id);
    const page = await client.files.list({ limit: 2 });
    expect(page.data.map((file) => file.id)).toEqual([made[3], made[2]]);
    expect(page.has_more).toBe(true);
    const raw = await fetch(`${harness.baseUrl}/v1/files?limit=2`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
    expect(await raw.json()).toMatchObject({ object: 'list', first_id: made[3], last_id: made[2], has_more: true });
    const every: string[] = [];
    for await (const file of client.files.list({ limit: 1, order: 'asc' })) every.push(file.id);
    expect(every).toEqual(made);
    const userData = await client.files.list({ purpose: 'user_data' });
    expect(userData.data.map((file) => file.id)).toEqual([made[3], made[2], made[0]]);
    expect(userData.has_more).toBe(false);
    expect((await refusal(client.files.list({ limit: 0 }))).status).toBe(400);
  });

  it("answers 404 for another user's file and lists none of them", async () => {
    const mine = await upload(client, Buffer.from('private'));
    for (const call of [otherClient.files.retrieve(mine.id), otherClient.files.content(mine.id), otherClient.files.delete(mine.id)])
      expect((await refusal(call)).status).toBe(404);
    expect((await otherClient.files.list()).data).toEqual([]);
    expect((await contentOf(client, mine.id)).toString()).toBe('private');
  });

  it('sets an expiry on request; an expired file is gone, its bytes freed by the next upload', async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('short-lived'), 'tmp.txt'),
      purpose: 'user_data',
      expires_after: { anchor: 'created_at', seconds: 3600 },
    });
    expect(file.expires_at).toBe(file.created_at + 3600);
    const tooShort = client.files.create({
      file: await toFile(Buffer.from('x'), 'x.txt'),
      purpose: 'user_data',
      expires_after: { anchor: 'created_at', seconds: 10 },
    });
    expect((await refusal(tooShort)).error).toMatchObject({ param: 'expires_after' });
    const { db } = harness.app.ctx;
    await db
      .updateTable('files')
      .set({ expires_at: file.created_at - 1 })
      .where('id', '=', file.id)
      .execute();
    expect((await refusal(client.files.retrieve(file.id))).status).toBe(404);
    await client.files.delete((await upload(client, Buffer.from('next'))).id);
    expect(await db.selectFrom('files').select('id').where('id', '=', file.id).execute()).toEqual([]);
    expect(await chunkRows(harness, file.id)).toEqual([]);
  });

  it('refuses a purpose it does not know, a missing one, and a call without a key', async () => {
    const invalid = await refusal(client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'nonsense' as never }));
    expect(invalid.status).toBe(400);
    expect(invalid.error).toMatchObject({ type: 'invalid_request_error', param: 'purpose' });
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.txt');
    const response = await fetch(`${harness.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.apiKey}` },
      body: form,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ message: "Missing required parameter: 'purpose'.", param: 'purpose' });
    expect((await fetch(`${harness.baseUrl}/v1/files`)).status).toBe(401);
  });

  it("refuses a file over the operator's limit with OpenAI's 400, keeping nothing of it", async () => {
    await deleteAll();
    await setOption('FileSizeLimitMB', '1');
    try {
      const refused = await refusal(upload(client, randomBytes(MIB + 1)));
      expect(refused.status).toBe(400);
      expect(refused.error).toMatchObject({ type: 'invalid_request_error', code: 'file_too_large' });
      expect(await upload(client, randomBytes(MIB))).toMatchObject({ bytes: MIB });
    } finally {
      await setOption('FileSizeLimitMB', '0');
    }
    expect(await harness.app.ctx.db.selectFrom('files').select('id').where('status', '!=', 'processed').execute()).toEqual([]);
    expect(
      Number(
        (
          await harness.app.ctx.db
            .selectFrom('file_chunks')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      ),
    ).toBe(4);
  });

  it('removes what an upload stored when its client goes away midway', async () => {
    const { db } = harness.app.ctx;
    const stored = async () =>
      Number(
        (
          await db
            .selectFrom('file_chunks')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      );
    const before = await stored();
    const boundary = 'cutoff';
    const upload = httpRequest(`${harness.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    upload.on('error', () => undefined);
    upload.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`);
    upload.write(randomBytes(MIB));
    // the upload has begun storing, then the client is gone
    for (let wait = 0; (await db.selectFrom('files').select('id').where('status', '=', 'uploading').execute()).length === 0; wait++) {
      if (wait > 200) throw new Error('the upload never began');
      await new Promise((wake) => setTimeout(wake, 10));
    }
    upload.destroy();
    for (let wait = 0; (await db.selectFrom('files').select('id').where('status', '=', 'uploading').execute()).length > 0; wait++) {
      if (wait > 200) throw new Error('the cut upload was never removed');
      await new Promise((wake) => setTimeout(wake, 10));
    }
    expect(await stored()).toBe(before);
  });

  it('keeps each user under the stored-bytes quota; a delete frees space', async () => {
    await deleteAll();
    await setOption('FileStorageQuotaMB', '3');
    try {
      const first = await upload(client, randomBytes(2 * MIB));
      const refused = await refusal(upload(client, randomBytes(1.5 * MIB)));
      expect(refused.status).toBe(400);
      expect(refused.error).toMatchObject({ code: 'file_storage_quota_exceeded' });
      // the quota is the user's: the neighbour stores its own
      expect(await upload(otherClient, randomBytes(2 * MIB))).toMatchObject({ bytes: 2 * MIB });
      await client.files.delete(first.id);
      expect(await upload(client, randomBytes(1.5 * MIB))).toMatchObject({ bytes: 1.5 * MIB });
    } finally {
      await setOption('FileStorageQuotaMB', '0');
    }
  });
});
