// Consume logs leave the hot path: the relay queues each row and one
// multi-row INSERT writes what has gathered, at most once per
// FLUSH_INTERVAL_MS, or as soon as MAX_BATCH_ROWS rows wait. The first row
// after a quiet spell goes at once, so at low traffic a log page shows a
// request as soon as it is answered; under load rows batch up. Nothing is
// dropped: a failed insert keeps its rows for the next attempt, shutdown
// flushes, and rows that still cannot be written are printed to the server
// log rather than vanishing.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { insertLogs, type NewLog } from '../repositories/logs';

const FLUSH_INTERVAL_MS = 100;
/** 200 rows x 16 columns stays far below every dialect's bound-parameter limit. */
const MAX_BATCH_ROWS = 200;

export class LogWriter {
  private queue: NewLog[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastInsertAt = 0;
  /** Inserts run one at a time, so rows keep their order and a slow database is not piled on. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: FastifyBaseLogger,
  ) {}

  write(log: NewLog): void {
    this.queue.push({ ...log, createdAt: log.createdAt ?? Math.floor(Date.now() / 1000) });
    if (this.queue.length >= MAX_BATCH_ROWS) void this.flush();
    else this.schedule();
  }

  /** Writes everything queued so far; resolves when it is in the database (or was kept after a failure). */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.insertQueued());
    return this.writing;
  }

  /** Final flush at shutdown; whatever the database refused goes to the server log. */
  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const log of this.queue.splice(0)) this.logger.error({ log }, 'consume log could not be written to the database');
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.flush();
      },
      Math.max(0, this.lastInsertAt + FLUSH_INTERVAL_MS - Date.now()),
    );
    // a pending flush must not keep a finished process alive; close() flushes
    this.timer.unref();
  }

  private async insertQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH_ROWS);
      this.lastInsertAt = Date.now();
      try {
        await insertLogs(this.db, batch);
      } catch (error) {
        this.queue.unshift(...batch);
        this.logger.error({ err: error, rows: batch.length }, 'could not write consume logs; will retry');
        this.schedule();
        return;
      }
    }
  }
}
