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
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify';
import type { Kysely } from 'kysely';
import { ok } from '../../../common/envelope';
import type { LogDetails, LogFilter, LogRecord } from '../../../common/records';
import { LogType, Role } from '../../../common/roles';
import type { Database } from '../../db/database';
import { callerOf, requireRole } from '../../plugins/auth';
import { channelNames } from '../../repositories/channels';
import { listLogs, logsBefore, searchLogs, sumLogs, type LogRow } from '../../repositories/logs';
import { pageWindowOf, sortOf } from '../../repositories/pagination';
import { usageTotals } from '../../repositories/usage';
import { logQuerySchema, logSearchSchema } from './inputSchemas';

/** The filters of a log query, as the schema has let them through (digit strings and bounded text). */
type FilterQuery = Partial<
  Record<'type' | 'username' | 'token_name' | 'model_name' | 'start_timestamp' | 'end_timestamp' | 'channel' | 'request_id', string>
>;

function filtersOf(query: FilterQuery, admin: boolean): LogFilter {
  const text = (key: keyof FilterQuery) => {
    const value = query[key];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const number = (key: keyof FilterQuery) => {
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
function channelNamesOf(db: Kysely<Database>, rows: ReadonlyArray<{ channel_id: number }>): Promise<Map<number, string>> {
  return channelNames(db, [...new Set(rows.map((row) => Number(row.channel_id)).filter((id) => id > 0))]);
}

/** A page of rows as the API answers them: admins get channel names. */
async function logRecords(db: Kysely<Database>, rows: LogRow[], admin: boolean) {
  const names = admin ? await channelNamesOf(db, rows) : undefined;
  return rows.map((row) => {
    const record = toLogRecord(row, admin);
    if (names) record.channel_name = names.get(record.channel_id) ?? '';
    return record;
  });
}

function toLogRecord(
  row: LogRow,
  admin: boolean,
): LogRecord & { elapsed_ms: number; is_stream: boolean; estimated: boolean; request_id: string | null } {
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

const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'type',
  'username',
  'token_name',
  'model_name',
  'channel_id',
  'quota',
  'prompt_tokens',
  'completion_tokens',
  'elapsed_ms',
  'is_stream',
  'estimated',
  'request_id',
  'content',
  'details',
] as const;
const EXPORT_PAGE = 1000;

/** A log row's column as the database returns it. */
type CsvValue = string | number | bigint | boolean | null | undefined;

/** One CSV field (RFC 4180); text a spreadsheet would run as a formula is prefixed with a quote. */
function csvField(value: CsvValue): string {
  let text = String(value ?? '');
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The request of a route with this schema, typed by it. */
type RequestOf<S extends FastifySchema> = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  S,
  TypeBoxTypeProvider
>;
type ListRequest = RequestOf<typeof logQuerySchema>;
type SearchRequest = RequestOf<typeof logSearchSchema>;

export function logRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);
  const signedIn = requireRole(Role.user);
  const scopeOf = (request: FastifyRequest, self: boolean) => (self ? Number(callerOf(request).id) : undefined);

  const list = (self: boolean) => async (request: ListRequest) => {
    const filters = filtersOf(request.query, !self);
    const rows = await listLogs(db, filters, scopeOf(request, self), pageWindowOf(request.query), sortOf('log', request.query));
    return ok(await logRecords(db, rows, !self));
  };

  const stat = (self: boolean) => async (request: ListRequest) => {
    // consumption only: the stat is what was spent, whatever type the page shows
    const filters = { ...filtersOf(request.query, !self), type: LogType.consume };
    const rollupRead = rollupReadOf(filters, scopeOf(request, self));
    if (rollupRead) {
      const totals = await usageTotals(db, rollupRead.scope, rollupRead.range);
      return ok({ quota: totals.quota, token: totals.prompt_tokens + totals.completion_tokens });
    }
    const totals = await sumLogs(db, filters, scopeOf(request, self));
    return ok({ quota: totals.quota, token: totals.tokens });
  };

  const exported = (self: boolean) => async (request: ListRequest, reply: FastifyReply) => {
    const filters = filtersOf(request.query, !self);
    const scope = scopeOf(request, self);
    async function* lines() {
      yield `${EXPORT_COLUMNS.join(',')}\r\n`;
      let before: { createdAt: number; id: number } | undefined;
      for (;;) {
        const rows = await logsBefore(db, filters, scope, before, EXPORT_PAGE);
        if (rows.length === 0) return;
        yield rows
          .map((row) => {
            const details = detailsOf(row.other, !self);
            const values: Record<string, CsvValue> = { ...row, details: details ? JSON.stringify(details) : '' };
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

  const search = (self: boolean) => async (request: SearchRequest) => {
    const keyword = (request.query.keyword ?? '').trim();
    const { type: onlyType, request_id: requestId } = filtersOf(request.query, !self);
    const rows = await searchLogs(db, keyword, { type: onlyType, request_id: requestId }, scopeOf(request, self));
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
  return Promise.resolve();
}
