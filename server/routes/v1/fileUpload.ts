// POST /v1/files: the multipart form read as it streams in. Text fields are
// kept (purpose, expires_after); the one `file` part goes straight into the
// file store, refused as soon as it passes the per-file limit or the user's
// stored-bytes quota. Its purpose may come after it in the form (the official
// SDKs send the file first), so the purpose's own checks run at the end.
import { randomInt } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Readable } from 'node:stream';
import type { Database } from '../../db/database';
import { isRelayError, relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { MultipartError, multipartEvents, type MultipartEvent } from '../../relay/multipartStream';
import { multipartBoundary } from '../../relay/multipart';
import {
  deleteFileRow,
  findFile,
  insertUploadingFile,
  markFileProcessed,
  setFileBytes,
  storedBytesOf,
  type FileRow,
} from '../../repositories/files';
import type { FileStore } from '../../services/fileStore';

const MIB = 1024 * 1024;
/** OpenAI's limits: 512 MB a file, 200 MB for a batch's input. */
export const VENDOR_FILE_LIMIT_BYTES = 512 * MIB;
export const BATCH_FILE_LIMIT_BYTES = 200 * MIB;
export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
/** A text field of the form longer than this is refused. */
const MAX_FIELD_BYTES = 1024;
/** expires_after.seconds: one hour to 30 days, as OpenAI allows. */
const EXPIRY_RANGE = [3600, 2_592_000] as const;
/** Bytes of a refused upload read and dropped before answering, so the client reads the answer; past it, the connection closes. */
const DRAIN_LIMIT_BYTES = 16 * MIB;

export interface UploadLimits {
  /** Bytes a file may hold: the vendor's, or the operator's lower one. */
  fileBytes: number;
  /** Bytes the user may store in all; Infinity when unlimited. */
  quotaBytes: number;
}

class Refusal extends Error {
  constructor(readonly error: RelayError) {
    super(error.message);
  }
}

const tooLarge = (limit: number) => relayError(400, `File is too large: the limit is ${limit} bytes.`, 'file_too_large');
const overQuota = (quota: number) =>
  relayError(
    400,
    `File storage quota exceeded: a user may store ${quota} bytes in all; delete files to free space.`,
    'file_storage_quota_exceeded',
  );
const missing = (param: string) => ({ ...relayError(400, `Missing required parameter: '${param}'.`, null), param });

/** "file-" and 24 letters and digits, as OpenAI's ids look. */
export function newFileId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let id = 'file-';
  for (let index = 0; index < 24; index++) id += alphabet[randomInt(alphabet.length)];
  return id;
}

interface Form {
  fields: Map<string, string>;
  file?: { id: string; bytes: number; createdAt: number };
}

/** Reads the form's events; the file part is stored as it comes, under a new `uploading` row. */
class FormReader {
  readonly form: Form = { fields: new Map() };
  private pendingPart?: Extract<MultipartEvent, { kind: 'part' }>;

  constructor(
    private readonly events: AsyncIterator<MultipartEvent>,
    private readonly store: FileStore,
    private readonly db: Kysely<Database>,
    private readonly owner: { userId: number; limits: UploadLimits; storedBefore: number },
  ) {}

  /** Lets go of the body (its iterator's listeners), so what is left of it can be drained. */
  async close(): Promise<void> {
    await this.events.return?.(undefined);
  }

  async read(): Promise<Form> {
    for (let part = await this.nextPart(); part; part = await this.nextPart()) {
      if (part.name === 'file' && part.filename !== undefined) await this.storeFile(part.filename);
      else if (part.name !== undefined) this.form.fields.set(part.name, await this.text(part.name));
    }
    return this.form;
  }

  private async nextPart(): Promise<Extract<MultipartEvent, { kind: 'part' }> | undefined> {
    if (this.pendingPart) {
      const part = this.pendingPart;
      this.pendingPart = undefined;
      return part;
    }
    for (;;) {
      const next = await this.events.next();
      if (next.done) return undefined;
      if (next.value.kind === 'part') return next.value;
    }
  }

  /** The part's bytes, until the next part starts (kept for nextPart). */
  private async *partBytes(): AsyncGenerator<Buffer> {
    for (;;) {
      const next = await this.events.next();
      if (next.done) return;
      if (next.value.kind === 'part') {
        this.pendingPart = next.value;
        return;
      }
      yield next.value.bytes;
    }
  }

  private async text(name: string): Promise<string> {
    const pieces: Buffer[] = [];
    let length = 0;
    for await (const bytes of this.partBytes()) {
      length += bytes.length;
      if (length > MAX_FIELD_BYTES) throw new Refusal(relayError(400, `The form field '${name}' is too long.`, null));
      pieces.push(bytes);
    }
    return Buffer.concat(pieces).toString('utf8');
  }

  private async storeFile(filename: string): Promise<void> {
    if (this.form.file) throw new Refusal(relayError(400, 'Only one file may be uploaded at a time.', null));
    const { limits, storedBefore, userId } = this.owner;
    const purpose = this.form.fields.get('purpose');
    const fileLimit = purpose === 'batch' ? Math.min(limits.fileBytes, BATCH_FILE_LIMIT_BYTES) : limits.fileBytes;
    const id = newFileId();
    const createdAt = Math.floor(Date.now() / 1000);
    this.form.file = { id, bytes: 0, createdAt };
    // control characters (a NUL, which PostgreSQL refuses) are dropped; the purpose is checked at the end
    const name = filename.replace(/\p{Cc}/gu, '').slice(0, 255);
    const known = (FILE_PURPOSES as readonly (string | undefined)[]).includes(purpose) ? purpose! : '';
    await insertUploadingFile(this.db, { id, userId, filename: name, purpose: known, createdAt });
    const file = this.form.file;
    async function* limited(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
      for await (const bytes of source) {
        file.bytes += bytes.length;
        if (file.bytes > fileLimit) throw new Refusal(tooLarge(fileLimit));
        if (storedBefore + file.bytes > limits.quotaBytes) throw new Refusal(overQuota(limits.quotaBytes));
        yield bytes;
      }
    }
    await this.store.put(id, limited(this.partBytes()), (stored) => setFileBytes(this.db, id, stored));
  }
}

/** The form's purpose and expiry, or the refusal. */
function checkedFields(form: Form, limits: UploadLimits): RelayError | { purpose: string; expiresAfter?: number } {
  if (!form.file) return missing('file');
  const purpose = form.fields.get('purpose');
  if (purpose === undefined) return missing('purpose');
  if (!(FILE_PURPOSES as readonly string[]).includes(purpose))
    return { ...relayError(400, `'${purpose}' is not one of ${JSON.stringify(FILE_PURPOSES)} - 'purpose'`, null), param: 'purpose' };
  if (purpose === 'batch' && form.file.bytes > Math.min(limits.fileBytes, BATCH_FILE_LIMIT_BYTES))
    return tooLarge(Math.min(limits.fileBytes, BATCH_FILE_LIMIT_BYTES));
  const anchor = form.fields.get('expires_after[anchor]');
  const seconds = form.fields.get('expires_after[seconds]');
  if (anchor === undefined && seconds === undefined) return { purpose };
  const count = Number(seconds);
  if (anchor !== 'created_at' || !Number.isInteger(count) || count < EXPIRY_RANGE[0] || count > EXPIRY_RANGE[1])
    return {
      ...relayError(400, `expires_after must be {anchor: 'created_at', seconds: ${EXPIRY_RANGE[0]} to ${EXPIRY_RANGE[1]}}.`, null),
      param: 'expires_after',
    };
  return { purpose, expiresAfter: count };
}

/** Reads and drops what is left of a refused upload (up to DRAIN_LIMIT_BYTES), so the client is done sending. */
export function drained(raw: Readable): Promise<void> {
  if (raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let dropped = 0;
    const done = () => {
      raw.off('data', count);
      resolve();
    };
    const count = (bytes: Buffer) => {
      dropped += bytes.length;
      if (dropped > DRAIN_LIMIT_BYTES) done();
    };
    raw.on('data', count);
    raw.once('end', done);
    raw.once('close', done);
    raw.resume();
  });
}

export interface UploadContext {
  db: Kysely<Database>;
  store: FileStore;
  userId: number;
  limits: UploadLimits;
}

/** Runs one upload to its end: the stored file's row, or the refusal (its bytes removed). */
async function receive(context: UploadContext, body: Readable, boundary: string): Promise<FileRow | RelayError> {
  const { db, store, userId, limits } = context;
  const storedBefore = await storedBytesOf(db, userId);
  const source = body.iterator({ destroyOnReturn: false });
  const reader = new FormReader(multipartEvents(source, boundary), store, db, { userId, limits, storedBefore });
  try {
    const form = await reader.read();
    const fields = checkedFields(form, limits);
    if (isRelayError(fields)) throw new Refusal(fields);
    const file = form.file!;
    // the quota again, now that every upload running at once has counted its bytes
    await setFileBytes(db, file.id, file.bytes);
    if (Number.isFinite(limits.quotaBytes) && (await storedBytesOf(db, userId)) > limits.quotaBytes)
      throw new Refusal(overQuota(limits.quotaBytes));
    const expiresAt = fields.expiresAfter === undefined ? null : file.createdAt + fields.expiresAfter;
    await markFileProcessed(db, file.id, { purpose: fields.purpose, bytes: file.bytes, expiresAt });
    const row = await findFile(db, userId, file.id);
    if (!row) throw new Error(`file ${file.id} vanished after its upload`);
    return row;
  } catch (error) {
    await reader.close();
    const file = reader.form.file;
    if (file) await discard(context, file.id);
    if (error instanceof Refusal) return error.error;
    if (error instanceof MultipartError) return relayError(400, error.message, 'invalid_multipart');
    // the client went away mid-upload: nobody reads the answer, and it is no server fault
    if (body.errored) return relayError(400, 'The upload broke off before its end.', 'upload_incomplete');
    throw error;
  }
}

async function discard({ db, store, userId }: UploadContext, id: string): Promise<void> {
  await deleteFileRow(db, userId, id);
  await store.delete(id);
}

/** POST /v1/files after the key is checked: the file object, or OpenAI's error. */
export async function handleUpload(context: UploadContext, request: FastifyRequest, reply: FastifyReply): Promise<FileRow | undefined> {
  const boundary = request.headers['content-type']?.toLowerCase().startsWith('multipart/form-data')
    ? multipartBoundary(request.headers['content-type'])
    : undefined;
  if (!boundary || !request.body) {
    await sendRelayError(reply, relayError(400, 'The request must be multipart/form-data with a file and a purpose.', null));
    return undefined;
  }
  const body = request.body as Readable;
  const result = await receive(context, body, boundary);
  if (isRelayError(result)) {
    await drained(body);
    if (!body.readableEnded) reply.header('connection', 'close');
    await sendRelayError(reply, result);
    return undefined;
  }
  return result;
}
