// Writes to and reads from the logs table. Consume logs carry their hourly
// rollups (usageRollups.ts) in the same transaction.
import type { Insertable, Kysely } from 'kysely';
import type { LogDetails } from '../../common/records';
import type { Database } from '../db/database';
import type { LogsTable } from '../db/schema/logs';
import { rollupsOf, upsertRollups } from './usageRollups';

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
