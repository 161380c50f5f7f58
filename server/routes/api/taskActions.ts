// What the console does to one task, with its session cookie rather than an
// API key: a finished video's bytes (GET /api/task/:id/content, streamed from
// the vendor with the browser's Range, so a <video> plays and seeks it;
// ?download=1 saves it), a batch's output and error files (GET
// /api/task/:id/files/output|error), and a cancel (POST /api/task/:id/cancel:
// a batch validating or in progress, a video queued or in progress, which
// the vendor deletes). Each uses the relay's own code (relay/tasks/
// taskActions.ts). The owner or an admin only: anyone else's task answers
// 404 as an unknown one does. Refusals carry real HTTP statuses (a <video>
// and a download read the status, not an envelope).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { isAdmin, Role } from '../../../common/roles';
import { callerOf, requireRole } from '../../plugins/auth';
import { cancelBatchTask, deleteVideoTask, readVideoContent } from '../../relay/tasks/taskActions';
import { findFile } from '../../repositories/files';
import { findTaskById, type TaskRow } from '../../repositories/tasks';
import { findUserById } from '../../repositories/users';
import { appFileStore } from '../../services/s3FileStore';
import { batchFilesOf, toTaskRecord } from './taskRecord';

type TaskRequest = FastifyRequest<{ Params: { id: string; which?: string }; Querystring: { download?: string } }>;

const isWord = (value: unknown): value is string => typeof value === 'string' && /^[\w-]{1,64}$/.test(value);
/** A batch the gateway runs (OpenAI's Batch API); other kinds of batch have no files or cancel here yet. */
const isBatch = (task: TaskRow) => task.kind === 'batch';
/** A video the vendor may still stop: queued or in progress (one still being submitted has no vendor id yet). */
const VIDEO_CANCELLABLE = ['queued', 'in_progress'];

const notFound = (reply: FastifyReply) => reply.code(404).send(fail('task not found', 'not_found'));
const refuse = (reply: FastifyReply, status: number, message: string) => reply.code(status).send(fail(message));
const attachment = (name: string) => `attachment; filename*=UTF-8''${encodeURIComponent(name)}`;

/** The task the caller may see: their own, or anyone's for an admin; undefined (a 404) otherwise. */
async function visibleTask(app: FastifyInstance, request: TaskRequest): Promise<TaskRow | undefined> {
  const caller = callerOf(request);
  const task = isWord(request.params.id) ? await findTaskById(app.ctx.db, request.params.id) : undefined;
  if (!task || task.status === 'deleted') return undefined;
  return Number(task.user_id) === Number(caller.id) || isAdmin(caller.role) ? task : undefined;
}

async function videoBytes(app: FastifyInstance, request: TaskRequest, reply: FastifyReply) {
  const task = await visibleTask(app, request);
  if (!task || task.kind !== 'video') return notFound(reply);
  if (task.status !== 'completed') return refuse(reply, 409, `the video is ${task.status}, not completed`);
  const range = request.headers.range;
  const store = appFileStore(app.ctx.config, app.ctx.db, app.log);
  const content = await readVideoContent(app.ctx.db, store, task, typeof range === 'string' ? range : undefined);
  if (!content.ok) return refuse(reply, content.status, content.message);
  reply.code(content.status).headers(content.headers);
  if (request.query.download === '1') reply.header('content-disposition', attachment(`${task.id}.mp4`));
  return reply.send(content.body);
}

async function batchFile(app: FastifyInstance, request: TaskRequest, reply: FastifyReply) {
  const { which } = request.params;
  const task = await visibleTask(app, request);
  if (!task || !isBatch(task) || (which !== 'output' && which !== 'error')) return notFound(reply);
  const fileId = batchFilesOf(task)[`${which}_file_id`];
  const file = fileId ? await findFile(app.ctx.db, Number(task.user_id), fileId) : undefined;
  if (!file) return refuse(reply, 404, `the batch has no ${which} file (not found)`);
  const store = appFileStore(app.ctx.config, app.ctx.db, app.log);
  return reply
    .header('content-type', 'application/octet-stream')
    .header('content-length', String(file.bytes))
    .header('content-disposition', attachment(file.filename))
    .send(store.get(file.id));
}

/** The task as the list shows it now, with its owner's name for an admin. */
async function recordOf(app: FastifyInstance, task: TaskRow, admin: boolean) {
  const owner = admin ? await findUserById(app.ctx.db, Number(task.user_id)) : undefined;
  return ok(toTaskRecord({ ...task, username: owner?.username ?? null }, admin));
}

async function cancelTask(app: FastifyInstance, request: TaskRequest, reply: FastifyReply) {
  const { db } = app.ctx;
  const task = await visibleTask(app, request);
  if (!task) return notFound(reply);
  const admin = isAdmin(callerOf(request).role);
  if (isBatch(task)) {
    const current = await cancelBatchTask(db, task);
    return current ? recordOf(app, current, admin) : refuse(reply, 409, `a ${task.status} batch cannot be cancelled`);
  }
  if (task.kind !== 'video' || !VIDEO_CANCELLABLE.includes(task.status))
    return refuse(reply, 409, `a ${task.status} ${task.kind} cannot be cancelled`);
  const deleted = await deleteVideoTask(db, appFileStore(app.ctx.config, db, app.log), task);
  if (deleted === 'vendor_failed') return refuse(reply, 502, 'the vendor did not stop the video; try again');
  if (deleted === 'gone') return refuse(reply, 409, 'the video finished or was cancelled meanwhile');
  return recordOf(app, (await findTaskById(db, task.id))!, admin);
}

export function taskActionRoutes(app: FastifyInstance): void {
  // real statuses for the refusals too: a 403 rather than one-api's 200 with success false
  const user = { preHandler: requireRole(Role.user, { refusalStatus: 403 }) };
  app.get('/api/task/:id/content', user, (request: TaskRequest, reply) => videoBytes(app, request, reply));
  app.get('/api/task/:id/files/:which', user, (request: TaskRequest, reply) => batchFile(app, request, reply));
  app.post('/api/task/:id/cancel', user, (request: TaskRequest, reply) => cancelTask(app, request, reply));
}
