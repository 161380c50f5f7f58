// Usage logs: admins read everyone's, users their own (by user id, so a
// rename loses nothing). Filters: type, username (admin), token_name,
// model_name, start_timestamp, end_timestamp, channel (admin), request_id;
// 10 per page, newest first by time (then id, so rows imported or back-dated
// fall in place), unless page_size, sort and order say otherwise. Each row
// carries its details (logs.other, parsed) and, for admins, the name of its
// channel (one query per page); a user's own rows never name channels (the
// console shows channels to admins only) nor quote upstreams.
// The stats read the hourly rollups when the filters fit them (no username or
// token name, a range of whole hours or none), else sum the logs. The exports
// stream every log the list's filters select as CSV, newest first, a page
// of rows per query (after the last row's time and id, so a long export never
// holds one huge result).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ExpressionBuilder, Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import { ok } from '../../../common/envelope';
import type { LogDetails, LogFilter, LogRecord } from '../../../common/records';
import { LogType, Role } from '../../../common/roles';
import type { Database } from '../../db/database';
import type { LogsTable } from '../../db/schema/logs';
import { callerOf, requireRole } from '../../plugins/auth';
import { orderedBy, pageWindowOf, SEARCH_LIMIT, sortOf, startsWith, type ListSort } from '../../repositories/pagination';
import { usageTotals } from '../../repositories/usage';
import { logQuerySchema, logSearchSchema } from './inputSchemas';

function filtersOf(query: Record<string, unknown>, admin: boolean): LogFilter {
  const text = (key: string) => (typeof query[key] === 'string' && (query[key] as string).trim() !== '' ? (query[key] as string).trim() : undefined);
  const number = (key: string) => {
    const value = Number.parseInt(String(query[key] ?? ''), 10);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  };
  return {
    type: number('type'),
    username: admin ? text('username') : undefined,
    token_name: text('token_name'),
    model_name: text('model_name'),
    start_timestamp: number('start_timestamp'),
    end_timestamp: number('end_timestamp'),
    channel: admin ? number('channel') : undefined,
    request_id: text('request_id'),
  };
}

/** The stat's filters as a rollup read (a range from the start of an hour to the end of one), or undefined when only the logs can answer. */
function rollupReadOf(filters: LogFilter, userId: number | undefined) {
  if (filters.username || filters.token_name || filters.request_id) return undefined;
  const { start_timestamp: start, end_timestamp: end } = filters;
  if ((start !== undefined && start % 3600 !== 0) || (end !== undefined && (end + 1) % 3600 !== 0)) return undefined;
  const to = end === undefined ? undefined : end + 1;
  // whole days read the daily rollups, a few rows per day instead of per hour
  const seconds = (start ?? 0) % 86_400 === 0 && (to ?? 0) % 86_400 === 0 ? 86_400 : 3600;
  return { scope: { userId, model: filters.model_name, channelId: filters.channel }, range: { seconds, from: start, to } };
}

function applyFilters<O>(query: SelectQueryBuilder<Database, 'logs', O>, filters: LogFilter, userId?: number) {
  let result = query;
  if (userId !== undefined) result = result.where('user_id', '=', userId);
  if (filters.type !== undefined) result = result.where('type', '=', filters.type);
  if (filters.username) result = result.where('username', '=', filters.username);
  if (filters.token_name) result = result.where('token_name', '=', filters.token_name);
  if (filters.model_name) result = result.where('model_name', '=', filters.model_name);
  if (filters.start_timestamp) result = result.where('created_at', '>=', filters.start_timestamp);
  if (filters.end_timestamp) result = result.where('created_at', '<=', filters.end_timestamp);
  if (filters.channel) result = result.where('channel_id', '=', filters.channel);
  if (filters.request_id) result = result.where('request_id', '=', filters.request_id);
  return result;
}

/** The log's order: by time, newest first; a sort by id (the default) is one by time too, ids only break ties. */
function logOrder<O>(query: SelectQueryBuilder<Database, 'logs', O>, sort: ListSort) {
  return sort.field === 'id' ? query.orderBy('created_at', sort.order).orderBy('id', sort.order) : orderedBy(query, sort);
}

/**
 * logs.other as the API shows it: parsed; in a user's own rows the attempts
 * keep their channel id and status but lose the channel's name and the
 * upstream's words, which are the admin's (a client is told only the request
 * id of a channel's failure).
 */
function detailsOf(other: unknown, admin: boolean): LogDetails | null {
  if (typeof other !== 'string' || other === '') return null;
  let details: LogDetails;
  try {
    details = JSON.parse(other) as LogDetails;
  } catch {
    return null;
  }
  if (!admin && details.attempts) details.attempts = details.attempts.map((attempt) => ({ ...attempt, channelName: '', reason: '' }));
  return details;
}

/** The names of the channels a page of rows went through, in one query. */
async function channelNames(db: Kysely<Database>, rows: ReadonlyArray<{ channel_id: number }>): Promise<Map<number, string>> {
  const ids = [...new Set(rows.map((row) => Number(row.channel_id)).filter((id) => id > 0))];
  if (ids.length === 0) return new Map();
  const channels = await db.selectFrom('channels').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(channels.map((channel) => [Number(channel.id), channel.name]));
}

type LogRow = Selectable<LogsTable>;

/** A page of rows as the API answers them: admins get channel names. */
async function logRecords(db: Kysely<Database>, rows: LogRow[], admin: boolean) {
  const names = admin ? await channelNames(db, rows) : undefined;
  return rows.map((row) => {
    const record = toLogRecord(row, admin);
    if (names) record.channel_name = names.get(record.channel_id) ?? '';
    return record;
  });
}

function toLogRecord(row: LogRow, admin: boolean): LogRecord & { elapsed_ms: number; is_stream: boolean; estimated: boolean; request_id: string | null } {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    created_at: Number(row.created_at),
    type: Number(row.type),
    content: String(row.content ?? ''),
    username: String(row.username ?? ''),
    token_name: String(row.token_name ?? ''),
    model_name: String(row.model_name ?? ''),
    quota: Number(row.quota),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    channel_id: Number(row.channel_id),
    elapsed_ms: Number(row.elapsed_ms),
    is_stream: Number(row.is_stream) === 1,
    estimated: Number(row.estimated) === 1,
    request_id: typeof row.request_id === 'string' ? row.request_id : null,
    details: detailsOf(row.other, admin),
  };
}

const EXPORT_COLUMNS = ['id', 'created_at', 'type', 'username', 'token_name', 'model_name', 'channel_id', 'quota', 'prompt_tokens', 'completion_tokens', 'elapsed_ms', 'is_stream', 'estimated', 'request_id', 'content', 'details'] as const;
const EXPORT_PAGE = 1000;

/** One CSV field (RFC 4180); text a spreadsheet would run as a formula is prefixed with a quote. */
function csvField(value: unknown): string {
  let text = String(value ?? '');
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export async function logRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);
  const signedIn = requireRole(Role.user);
  const scopeOf = (request: FastifyRequest, self: boolean) => (self ? Number(callerOf(request).id) : undefined);

  const list = (self: boolean) => async (request: FastifyRequest) => {
    const filters = filtersOf(request.query as Record<string, unknown>, !self);
    const window = pageWindowOf(request.query);
    const rows = await logOrder(applyFilters(db.selectFrom('logs').selectAll(), filters, scopeOf(request, self)), sortOf('log', request.query))
      .limit(window.limit)
      .offset(window.offset)
      .execute();
    return ok(await logRecords(db, rows, !self));
  };

  const stat = (self: boolean) => async (request: FastifyRequest) => {
    // consumption only: the stat is what was spent, whatever type the page shows
    const filters = { ...filtersOf(request.query as Record<string, unknown>, !self), type: LogType.consume };
    const rollupRead = rollupReadOf(filters, scopeOf(request, self));
    if (rollupRead) {
      const totals = await usageTotals(db, rollupRead.scope, rollupRead.range);
      return ok({ quota: totals.quota, token: totals.prompt_tokens + totals.completion_tokens });
    }
    const row = await applyFilters(
      db.selectFrom('logs').select((eb: ExpressionBuilder<Database, 'logs'>) => [
        eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('quota'),
        eb.fn.coalesce(eb.fn.sum<number>('prompt_tokens'), eb.lit(0)).as('prompt_tokens'),
        eb.fn.coalesce(eb.fn.sum<number>('completion_tokens'), eb.lit(0)).as('completion_tokens'),
      ]),
      filters,
      scopeOf(request, self),
    ).executeTakeFirst();
    const promptTokens = Number(row?.prompt_tokens ?? 0);
    const completionTokens = Number(row?.completion_tokens ?? 0);
    return ok({ quota: Number(row?.quota ?? 0), token: promptTokens + completionTokens });
  };

  const exported = (self: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const filters = filtersOf(request.query as Record<string, unknown>, !self);
    const scope = scopeOf(request, self);
    async function* lines() {
      yield `${EXPORT_COLUMNS.join(',')}\r\n`;
      let before: { createdAt: number; id: number } | undefined;
      for (;;) {
        let query = applyFilters(db.selectFrom('logs').selectAll(), filters, scope);
        if (before !== undefined) {
          const { createdAt, id } = before;
          query = query.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
        }
        const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(EXPORT_PAGE).execute();
        if (rows.length === 0) return;
        yield rows
          .map((row) => {
            const details = detailsOf(row.other, !self);
            const values: Record<string, unknown> = { ...row, details: details ? JSON.stringify(details) : '' };
            return `${EXPORT_COLUMNS.map((column) => csvField(values[column])).join(',')}\r\n`;
          })
          .join('');
        if (rows.length < EXPORT_PAGE) return;
        const last = rows[rows.length - 1];
        before = { createdAt: Number(last.created_at), id: Number(last.id) };
      }
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="logs-${Math.floor(Date.now() / 1000)}.csv"`)
      .send(Readable.from(lines()));
  };

  const search = (self: boolean) => async (request: FastifyRequest) => {
    const keyword = String((request.query as { keyword?: string }).keyword ?? '').trim();
    // logs.type is a 32-bit integer: a longer run of digits is no type, only text
    const type = /^\d{1,9}$/.test(keyword) ? Number(keyword) : undefined;
    const { type: onlyType, request_id: requestId } = filtersOf(request.query as Record<string, unknown>, !self);
    let query = applyFilters(db.selectFrom('logs').selectAll(), { type: onlyType, request_id: requestId }, scopeOf(request, self));
    // a keyword may also be a request id a client quoted from an error
    query = query.where((eb) => eb.or([...(type === undefined ? [] : [eb('type', '=', type)]), eb('request_id', '=', keyword), startsWith('content', keyword)]));
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(SEARCH_LIMIT).execute();
    return ok(await logRecords(db, rows, !self));
  };

  app.get('/api/log/', { preHandler: admin, schema: logQuerySchema }, list(false));
  app.get('/api/log/stat', { preHandler: admin, schema: logQuerySchema }, stat(false));
  app.get('/api/log/search', { preHandler: admin, schema: logSearchSchema }, search(false));
  app.get('/api/log/self', { preHandler: signedIn, schema: logQuerySchema }, list(true));
  app.get('/api/log/self/stat', { preHandler: signedIn, schema: logQuerySchema }, stat(true));
  app.get('/api/log/self/search', { preHandler: signedIn, schema: logSearchSchema }, search(true));
  app.get('/api/log/export', { preHandler: admin, schema: logQuerySchema }, exported(false));
  app.get('/api/log/self/export', { preHandler: signedIn, schema: logQuerySchema }, exported(true));
}
