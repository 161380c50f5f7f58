// Asynchronous tasks (videos, batches) for the console: admins read everyone's,
// filtered by kind, status and owner (user_id); users their own (by user id),
// filtered by kind and status. Ten a page newest first unless page_size says
// otherwise, as the other lists. A row carries what it held and charged, its
// error ({ code, message }) and the request id that created it; only admins
// see the channel that took it. The tasks' rows are the relay's
// (repositories/tasks.ts); nothing here changes them.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ok } from '../../../common/envelope';
import { PAGE_SIZES } from '../../../common/listQuery';
import { Role } from '../../../common/roles';
import { callerOf, requireRole } from '../../plugins/auth';
import { pageWindowOf } from '../../repositories/pagination';
import { consoleTaskPage, type TaskListFilter } from '../../repositories/tasks';
import { text } from './inputSchemas';
import { taskActionRoutes } from './taskActions';
import { toTaskRecord } from './taskRecord';

type TaskQuery = Partial<Record<'p' | 'page_size' | 'kind' | 'status' | 'user_id', string>>;

const digits = (maxLength: number, description: string) => ({ type: 'string', pattern: `^[0-9]{0,${maxLength}}$`, description });
const listSchema = {
  querystring: Type.Unsafe<TaskQuery>({
    type: 'object',
    properties: {
      p: digits(15, 'a page number of at most 15 digits'),
      page_size: { type: 'string', enum: PAGE_SIZES.map(String), description: `one of ${PAGE_SIZES.join(', ')}` },
      kind: text(16),
      status: text(16),
      // admins only: one user's tasks
      user_id: digits(15, 'a user id (digits only)'),
    },
    maxProperties: 16,
    description: 'a JSON object',
  }),
};

function filterOf(query: TaskQuery): TaskListFilter {
  const word = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);
  const userId = Number.parseInt(query.user_id ?? '', 10);
  return { kind: word(query.kind), status: word(query.status), userId: Number.isSafeInteger(userId) && userId > 0 ? userId : undefined };
}

export function taskRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;

  /** A page of tasks: everyone's (filtered), or only `ownerId`'s (a user's own list, whatever user_id says). */
  const list = async (query: TaskQuery, ownerId?: number) => {
    const filter = filterOf(query);
    if (ownerId !== undefined) filter.userId = ownerId;
    const rows = await consoleTaskPage(db, filter, pageWindowOf(query));
    return ok(rows.map((row) => toTaskRecord(row, ownerId === undefined)));
  };

  app.get('/api/task/', { preHandler: requireRole(Role.admin), schema: listSchema }, (request) => list(request.query));
  app.get('/api/task/self', { preHandler: requireRole(Role.user), schema: listSchema }, (request) =>
    list(request.query, Number(callerOf(request).id)),
  );
  taskActionRoutes(app);
  return Promise.resolve();
}
