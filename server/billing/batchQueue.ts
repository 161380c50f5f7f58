// After-answer writes leave the hot path in batches: the first item queued
// opens a window of intervalMs, and one write takes what gathered in it (or
// goes as soon as maxBatch items wait). Writing at once instead would put a
// database write on the event loop just as the next request of a client
// arrives: that cost the benchmark's single-client latency half its budget.
// Nothing is dropped: a failed write keeps its items for the
// next attempt, shutdown flushes, and items that still cannot be written are
// printed to the server log rather than vanishing.
import type { FastifyBaseLogger } from 'fastify';

const MAX_RETRY_DELAY_MS = 5000;

export interface BatchQueueOptions<T> {
  /** Writes one batch; throwing keeps the batch queued. */
  writeBatch: (items: T[]) => Promise<void>;
  intervalMs: number;
  maxBatch: number;
  /** What the server log calls an item it had to give up on. */
  noun: string;
  logger: FastifyBaseLogger;
}

/** Told of every batch written or failed: its size and how long the write took (the metrics). */
export type BatchObserver = (size: number, milliseconds: number, written: boolean) => void;

export class BatchQueue<T> {
  /** Set by the metrics; nothing is timed when absent. */
  observer: BatchObserver | undefined;
  private queue: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Failed writes in a row: the next attempt waits intervalMs x 2^failures, at most MAX_RETRY_DELAY_MS. */
  private failures = 0;
  /** Writes run one at a time, so items keep their order and a slow database is not piled on. */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly options: BatchQueueOptions<T>) {}

  add(item: T): void {
    this.queue.push(item);
    if (this.queue.length >= this.options.maxBatch) void this.flush();
    else this.schedule();
  }

  /** Writes everything queued so far; resolves when it is written (or was kept after a failure). */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.writeQueued());
    return this.writing;
  }

  /** Final flush at shutdown; whatever the database refused goes to the server log. */
  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const item of this.queue.splice(0))
      this.options.logger.error({ [this.options.noun]: item }, `${this.options.noun} could not be written to the database`);
  }

  private schedule(): void {
    if (this.timer) return;
    // a database that is down is not hammered: each failure in a row doubles the wait
    const delay = Math.min(this.options.intervalMs * 2 ** this.failures, MAX_RETRY_DELAY_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delay);
    // a pending flush must not keep a finished process alive; close() flushes
    this.timer.unref();
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      const { observer } = this;
      const started = observer ? performance.now() : 0;
      try {
        await this.options.writeBatch(batch);
        this.failures = 0;
        observer?.(batch.length, performance.now() - started, true);
      } catch (error) {
        observer?.(batch.length, performance.now() - started, false);
        this.failures = Math.min(this.failures + 1, 16);
        this.queue.unshift(...batch);
        this.options.logger.error({ err: error, items: batch.length }, `could not write a batch of ${this.options.noun}; will retry`);
        this.schedule();
        return;
      }
    }
  }
}
