// Consume logs leave the hot path: one write (a multi-row INSERT, or one
// transaction of prepared INSERTs on SQLite) takes what has gathered, at most
// once per FLUSH_INTERVAL_MS, or as soon as MAX_BATCH_ROWS rows wait (see
// BatchQueue for the pace and the no-loss rules).
import type { FastifyBaseLogger } from 'fastify';
import type { NewLog } from '../repositories/logs';
import { BatchQueue, type BatchObserver } from './batchQueue';

const FLUSH_INTERVAL_MS = 100;
/** 200 rows x 17 columns stays far below every dialect's bound-parameter limit. */
const MAX_BATCH_ROWS = 200;

export class LogWriter {
  private readonly queue: BatchQueue<NewLog>;

  /** `insert` writes one batch of rows (QuotaLedger.insertLogs). */
  constructor(insert: (rows: NewLog[]) => Promise<void>, logger: FastifyBaseLogger) {
    this.queue = new BatchQueue({
      writeBatch: insert,
      intervalMs: FLUSH_INTERVAL_MS,
      maxBatch: MAX_BATCH_ROWS,
      noun: 'consume log',
      logger,
    });
  }

  /** Times each batch (the metrics). */
  observe(observer: BatchObserver): void {
    this.queue.observer = observer;
  }

  write(log: NewLog): void {
    this.queue.add(log.createdAt === undefined ? { ...log, createdAt: Math.floor(Date.now() / 1000) } : log);
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
