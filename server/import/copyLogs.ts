// Copying the logs (--with-logs), which can be millions of rows: streamed
// from the source by id in batches, each batch with its rollups in its own
// transaction, under the source's ids (offset like every other id). A batch
// whose ids are already in the target (an import run again after it
// stopped) is skipped, so nothing is counted twice.
import type { Kysely } from 'kysely';
import type { ImportProgress } from '../../common/importJob';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import { anyLogBetween, insertImportedLogs, resetSequences, sourceLogBatch } from '../repositories/importRows';
import { logRow, type NewLog } from '../repositories/logs';
import type { Plan } from './plan';
import type { SourceDatabase } from './source';
import { flag, num, text, type Row } from './sourceValues';

/** How long the request took: one-api counts milliseconds (elapsed_time), new-api whole seconds (use_time). */
function elapsedMsOf(row: Row, newApi: boolean, columns: Set<string>): number {
  if (newApi) return num(row.use_time) * 1000;
  return columns.has('elapsed_time') ? num(row.elapsed_time) : 0;
}

function logOf(row: Row, newApi: boolean, columns: Set<string>, offsets: Plan['offsets']): NewLog {
  return {
    userId: num(row.user_id) ? offsets.users + num(row.user_id) : 0,
    username: text(row.username).slice(0, 64),
    type: num(row.type),
    content: text(row.content),
    quota: num(row.quota),
    tokenName: text(row.token_name).slice(0, 64),
    tokenId: num(row.token_id) ? offsets.tokens + num(row.token_id) : 0,
    modelName: text(row.model_name).slice(0, 128),
    channelId: num(row.channel_id) ? offsets.channels + num(row.channel_id) : 0,
    promptTokens: num(row.prompt_tokens),
    completionTokens: num(row.completion_tokens),
    elapsedMs: elapsedMsOf(row, newApi, columns),
    isStream: flag(row.is_stream) === 1,
    createdAt: num(row.created_at),
  };
}

/** Copies the source's logs batch by batch (a batch already in the target is skipped), reporting progress after each. */
export async function copyLogs(
  source: SourceDatabase,
  target: { db: Kysely<Database>; dialect: DatabaseConfig['dialect'] },
  newApi: boolean,
  offsets: Plan['offsets'],
  batch: { size: number; total: number },
  progress: (progress: ImportProgress) => void,
) {
  const columns = source.columns.get('logs')!;
  let lastId = -1;
  let done = 0;
  for (;;) {
    const rows = await sourceLogBatch(source.db, lastId, batch.size);
    if (rows.length === 0) break;
    lastId = num(rows[rows.length - 1].id);
    const present = await anyLogBetween(target.db, offsets.logs + num(rows[0].id), offsets.logs + lastId);
    done += rows.length;
    if (present) {
      progress({ step: 'logs', done, total: batch.total });
      continue;
    }
    const logs = rows.map((row) => logOf(row, newApi, columns, offsets));
    const values = logs.map((log, index) => ({ ...logRow(log), id: offsets.logs + num(rows[index].id) }));
    await insertImportedLogs(target.db, values, logs);
    progress({ step: 'logs', done, total: batch.total });
  }
  if (target.dialect === 'postgres') await resetSequences(target.db, ['logs']);
}
