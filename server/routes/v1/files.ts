// OpenAI's Files API, served by the gateway itself (no channel is called):
// upload (multipart, streamed into the file store), list, retrieve, content
// and delete, each file its uploader's alone. Another user's file answers 404
// as an unknown one does. Limits: OpenAI's per-file sizes, the operator's
// lower FileSizeLimitMB, and FileStorageQuotaMB per user; FileUploadRateLimit
// uploads a minute per user (429 past it). Expired files are swept
// periodically (services/fileStore.ts).
// Reference: https://platform.openai.com/docs/api-reference/files
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Stream, type Readable } from 'node:stream';
import { isRelayError, relayError, sendRelayError, type RelayError } from '../../relay/errors';
import { authenticateRelay } from '../../relay/tokenAuth';
import { deleteFileRow, findFile, listFiles, takeDeadFiles, type FileRow } from '../../repositories/files';
import { fileSweepSchedule, STALE_UPLOAD_SECONDS, type FileStore } from '../../services/fileStore';
import { appFileStore } from '../../services/s3FileStore';
import { drained, handleUpload, VENDOR_FILE_LIMIT_BYTES, type UploadLimits } from './fileUpload';

const MIB = 1024 * 1024;
const MAX_LIST_LIMIT = 10_000;

/** OpenAI's answer to too many requests, with when the minute's window ends. */
function tooManyUploads(limit: number): RelayError {
  const error = relayError(
    429,
    `Rate limit reached for file uploads: at most ${limit} a minute per user.`,
    'rate_limit_exceeded',
    'requests',
  );
  error.retryAfter = 60 - (Math.floor(Date.now() / 1000) % 60);
  return error;
}

/** The File object, as OpenAI writes it. */
function fileObject(row: FileRow) {
  return {
    id: row.id,
    object: 'file',
    bytes: row.bytes,
    created_at: row.created_at,
    expires_at: row.expires_at,
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed',
    status_details: null,
  };
}

const noSuchFile = (id: string): RelayError => ({ ...relayError(404, `No such File object: ${id}`, null), param: 'id' });

/** Ids and purposes are short words: anything else (a NUL byte PostgreSQL refuses, a repeated query key) is never queried. */
const isWord = (value: unknown): value is string => typeof value === 'string' && /^[\w-]{1,64}$/.test(value);

interface ListQuery {
  purpose?: string;
  limit?: string;
  order?: string;
  after?: string;
}

/** The list's query, checked as OpenAI checks it. */
function listParameters(query: ListQuery): RelayError | { purpose?: string; limit: number; order: 'asc' | 'desc'; after?: string } {
  const limit = query.limit === undefined ? MAX_LIST_LIMIT : Number(query.limit);
  if (!/^\d+$/.test(String(query.limit ?? '1')) || limit < 1 || limit > MAX_LIST_LIMIT)
    return { ...relayError(400, `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, null), param: 'limit' };
  if (query.purpose !== undefined && !isWord(query.purpose))
    return { ...relayError(400, 'purpose must be a file purpose such as batch.', null), param: 'purpose' };
  if (query.after !== undefined && !isWord(query.after)) return { ...noSuchFile(String(query.after)), param: 'after' };
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return { ...relayError(400, "order must be 'asc' or 'desc'.", null), param: 'order' };
  return { purpose: query.purpose, limit, order, after: query.after };
}

/** The sweep of dead files (services/fileStore.ts), from the app's start to its close. */
function sweepPeriodically(app: FastifyInstance, store: FileStore): void {
  const sweep = fileSweepSchedule({ db: app.ctx.db, store, jobs: app.ctx.jobs, log: app.log });
  app.addHook('onReady', () => {
    sweep.start();
    return Promise.resolve();
  });
  app.addHook('preClose', () => sweep.stop());
}

/** Whether the user is past FileUploadRateLimit uploads this minute: then the form is dropped and the 429 sent. */
async function refusedOverRate(app: FastifyInstance, userId: number, body: unknown, reply: FastifyReply): Promise<boolean> {
  const perMinute = app.ctx.options.number('FileUploadRateLimit');
  if (await app.ctx.rateLimiter.allow('file-upload', String(userId), { max: perMinute, windowSeconds: 60 })) return false;
  // read and dropped, so the client reads the answer (a form too large to drain loses its connection)
  if (body instanceof Stream) {
    await drained(body as Readable);
    if (!(body as Readable).readableEnded) reply.header('connection', 'close');
  }
  await sendRelayError(reply, tooManyUploads(perMinute));
  return true;
}

export function fileRoutes(app: FastifyInstance): Promise<void> {
  const { config, db, options, relayCache } = app.ctx;
  const store = appFileStore(config, db, app.log);
  app.addHook('onClose', async () => store.close?.());
  sweepPeriodically(app, store);

  // the relay parses multipart bodies whole (relay.ts); here the body is handed on as the stream it is
  app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));

  const callerOf = async (request: { ip: string; headers: { authorization?: string } }, reply: FastifyReply) => {
    const caller = await authenticateRelay(db, request, relayCache);
    if (!isRelayError(caller)) return caller;
    await sendRelayError(reply, caller);
    return undefined;
  };

  const ownFile = (userId: number, id: string) => (isWord(id) ? findFile(db, userId, id) : undefined);

  const limits = (): UploadLimits => {
    const operator = options.number('FileSizeLimitMB') * MIB;
    const quota = options.number('FileStorageQuotaMB') * MIB;
    return {
      fileBytes: Math.floor(operator > 0 ? Math.min(operator, VENDOR_FILE_LIMIT_BYTES) : VENDOR_FILE_LIMIT_BYTES),
      quotaBytes: quota > 0 ? Math.floor(quota) : Infinity,
    };
  };

  app.post('/v1/files', async (request, reply) => {
    const caller = await callerOf(request, reply);
    if (!caller) return reply;
    if (await refusedOverRate(app, caller.user.id, request.body, reply)) return reply;
    // the user's expired files and dead uploads go first, so their bytes are free again
    for (const id of await takeDeadFiles(db, caller.user.id, Math.floor(Date.now() / 1000) - STALE_UPLOAD_SECONDS)) await store.delete(id);
    const row = await handleUpload({ db, store, userId: caller.user.id, limits: limits() }, request, reply);
    return row ? fileObject(row) : reply;
  });

  app.get<{ Querystring: ListQuery }>('/v1/files', async (request, reply) => {
    const caller = await callerOf(request, reply);
    if (!caller) return reply;
    const parameters = listParameters(request.query);
    if (isRelayError(parameters)) return sendRelayError(reply, parameters);
    const after = parameters.after === undefined ? undefined : await findFile(db, caller.user.id, parameters.after);
    if (parameters.after !== undefined && !after) return sendRelayError(reply, { ...noSuchFile(parameters.after), param: 'after' });
    const rows = await listFiles(db, { ...parameters, userId: caller.user.id, after, limit: parameters.limit + 1 });
    const data = rows.slice(0, parameters.limit).map(fileObject);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: rows.length > parameters.limit,
    };
  });

  app.get<{ Params: { id: string } }>('/v1/files/:id', async (request, reply) => {
    const caller = await callerOf(request, reply);
    if (!caller) return reply;
    const row = await ownFile(caller.user.id, request.params.id);
    return row ? fileObject(row) : sendRelayError(reply, noSuchFile(request.params.id));
  });

  app.get<{ Params: { id: string } }>('/v1/files/:id/content', async (request, reply) => {
    const caller = await callerOf(request, reply);
    if (!caller) return reply;
    const row = await ownFile(caller.user.id, request.params.id);
    if (!row) return sendRelayError(reply, noSuchFile(request.params.id));
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(row.bytes))
      .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(row.filename)}`)
      .send(store.get(row.id));
  });

  app.delete<{ Params: { id: string } }>('/v1/files/:id', async (request, reply) => {
    const caller = await callerOf(request, reply);
    if (!caller) return reply;
    const row = await ownFile(caller.user.id, request.params.id);
    if (!row || !(await deleteFileRow(db, caller.user.id, row.id))) return sendRelayError(reply, noSuchFile(request.params.id));
    await store.delete(row.id);
    return { id: row.id, object: 'file', deleted: true };
  });
  return Promise.resolve();
}
