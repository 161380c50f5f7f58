// Writes to and reads from the logs table. Consume logs carry their hourly
// rollups (usageRollups.ts) in the same transaction.
import type { ExpressionBuilder, Insertable, Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { LogDetails, LogFilter } from '../../common/records';
import type { Database } from '../db/database';
import type { LogsTable } from '../db/schema/logs';
import { orderedBy, SEARCH_LIMIT, startsWith, type ListSort, type PageWindow } from './pagination';
import { rollupsOf, upsertRollups } from './usageRollups';

export type LogRow = Selectable<LogsTable>;

/**
 * A log to write, in its writers' words (camelCase, flags as booleans, details as an object, defaults left
 * out): not the row's shape; logRow maps it onto Insertable<LogsTable>, so the table's type checks every column.
 */
export interface NewLog {
  userId: number;
  username: string;
  type: number;
  content: string;
  quota?: number;
  tokenName?: string;
  tokenId?: number;
  modelName?: string;
  channelId?: number;
  promptTokens?: number;
  completionTokens?: number;
  elapsedMs?: number;
  isStream?: boolean;
  estimated?: boolean;
  /** Seconds since the epoch; defaults to now. Queued logs keep the time of their request. */
  createdAt?: number;
  /** The relayed request's X-Request-Id. */
  requestId?: string;
  /** Stored as JSON in `other`. */
  details?: LogDetails;
}

/** The logs row of a log, as every writer stores it. */
export function logRow(log: NewLog): Insertable<LogsTable> {
  return {
    user_id: log.userId,
    username: log.username,
    created_at: log.createdAt ?? Math.floor(Date.now() / 1000),
    type: log.type,
    content: log.content,
    quota: log.quota ?? 0,
    token_name: log.tokenName ?? '',
    token_id: log.tokenId ?? 0,
    model_name: log.modelName ?? '',
    channel_id: log.channelId ?? 0,
    prompt_tokens: log.promptTokens ?? 0,
    completion_tokens: log.completionTokens ?? 0,
    elapsed_ms: log.elapsedMs ?? 0,
    is_stream: log.isStream ? 1 : 0,
    estimated: log.estimated ? 1 : 0,
    request_id: log.requestId ?? null,
    other: log.details ? JSON.stringify(log.details) : null,
  };
}

/** logRow's values in logRow's column order, without the object: the SQLite ledger binds them by position. */
export function logValues(log: NewLog): unknown[] {
  return [
    log.userId,
    log.username,
    log.createdAt ?? Math.floor(Date.now() / 1000),
    log.type,
    log.content,
    log.quota ?? 0,
    log.tokenName ?? '',
    log.tokenId ?? 0,
    log.modelName ?? '',
    log.channelId ?? 0,
    log.promptTokens ?? 0,
    log.completionTokens ?? 0,
    log.elapsedMs ?? 0,
    log.isStream ? 1 : 0,
    log.estimated ? 1 : 0,
    log.requestId ?? null,
    log.details ? JSON.stringify(log.details) : null,
  ];
}

export async function insertLog(db: Kysely<Database>, log: NewLog): Promise<void> {
  await insertLogs(db, [log]);
}

/**
 * One multi-row INSERT, for the relay's batched consume and error logs, and
 * the batch's rollups in the same transaction: the caller's, or one of its
 * own when there are rollups to write.
 */
export async function insertLogs(db: Kysely<Database>, logs: readonly NewLog[]): Promise<void> {
  const rollups = rollupsOf(logs);
  const write = async (executor: Kysely<Database>) => {
    if (logs.length > 0) await executor.insertInto('logs').values(logs.map(logRow)).execute();
    await upsertRollups(executor, rollups);
  };
  if (rollups.length === 0 || db.isTransaction) return write(db);
  await db.transaction().execute(write);
}

// ---- reads (the console's log pages) -------------------------------------

function filteredLogs<O>(query: SelectQueryBuilder<Database, 'logs', O>, filters: LogFilter, userId?: number) {
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

/** A page of the logs these filters select (`userId`: one user's own only). */
export function listLogs(
  db: Kysely<Database>,
  filters: LogFilter,
  userId: number | undefined,
  window: PageWindow,
  sort: ListSort,
): Promise<LogRow[]> {
  return logOrder(filteredLogs(db.selectFrom('logs').selectAll(), filters, userId), sort)
    .limit(window.limit)
    .offset(window.offset)
    .execute();
}

/** The quota and tokens of the logs these filters select, summed over the logs themselves. */
export async function sumLogs(
  db: Kysely<Database>,
  filters: LogFilter,
  userId: number | undefined,
): Promise<{ quota: number; tokens: number }> {
  const row = await filteredLogs(
    db
      .selectFrom('logs')
      .select((eb: ExpressionBuilder<Database, 'logs'>) => [
        eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('quota'),
        eb.fn.coalesce(eb.fn.sum<number>('prompt_tokens'), eb.lit(0)).as('prompt_tokens'),
        eb.fn.coalesce(eb.fn.sum<number>('completion_tokens'), eb.lit(0)).as('completion_tokens'),
      ]),
    filters,
    userId,
  ).executeTakeFirst();
  const promptTokens = Number(row?.prompt_tokens ?? 0);
  const completionTokens = Number(row?.completion_tokens ?? 0);
  return { quota: Number(row?.quota ?? 0), tokens: promptTokens + completionTokens };
}

/** Up to `limit` of the selected logs, newest first, older than `before` (by time, then id) when given: one page of an export. */
export function logsBefore(
  db: Kysely<Database>,
  filters: LogFilter,
  userId: number | undefined,
  before: { createdAt: number; id: number } | undefined,
  limit: number,
): Promise<LogRow[]> {
  let query = filteredLogs(db.selectFrom('logs').selectAll(), filters, userId);
  if (before !== undefined) {
    const { createdAt, id } = before;
    query = query.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Logs whose type is the keyword, whose request id is it, or whose content starts with it; narrowed by a type or a request id. */
export function searchLogs(
  db: Kysely<Database>,
  keyword: string,
  narrowing: Pick<LogFilter, 'type' | 'request_id'>,
  userId: number | undefined,
): Promise<LogRow[]> {
  // logs.type is a 32-bit integer: a longer run of digits is no type, only text
  const type = /^\d{1,9}$/.test(keyword) ? Number(keyword) : undefined;
  const query = filteredLogs(db.selectFrom('logs').selectAll(), narrowing, userId)
    // a keyword may also be a request id a client quoted from an error
    .where((eb) =>
      eb.or([...(type === undefined ? [] : [eb('type', '=', type)]), eb('request_id', '=', keyword), startsWith('content', keyword)]),
    );
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(SEARCH_LIMIT).execute();
}
