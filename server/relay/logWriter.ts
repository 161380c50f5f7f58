// Consume logs leave the hot path: one multi-row INSERT writes what has
// gathered, at most once per FLUSH_INTERVAL_MS, or as soon as MAX_BATCH_ROWS
// rows wait (see BatchQueue for the pace and the no-loss rules).
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { insertLogs, type NewLog } from '../repositories/logs';
import { BatchQueue } from './batchQueue';

const FLUSH_INTERVAL_MS = 100;
/** 200 rows x 16 columns stays far below every dialect's bound-parameter limit. */
const MAX_BATCH_ROWS = 200;

export class LogWriter {
  private readonly queue: BatchQueue<NewLog>;

  constructor(db: Kysely<Database>, logger: FastifyBaseLogger) {
    this.queue = new BatchQueue({ writeBatch: (rows) => insertLogs(db, rows), intervalMs: FLUSH_INTERVAL_MS, maxBatch: MAX_BATCH_ROWS, noun: 'consume log', logger });
  }

  write(log: NewLog): void {
    this.queue.add({ ...log, createdAt: log.createdAt ?? Math.floor(Date.now() / 1000) });
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
