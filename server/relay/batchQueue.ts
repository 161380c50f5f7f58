// After-answer writes leave the hot path in batches: the first item queued
// opens a window of intervalMs, and one write takes what gathered in it (or
// goes as soon as maxBatch items wait). Writing at once instead would put a
// database write on the event loop just as the next request of a client
// arrives: that cost the benchmark's single-client latency half its budget.
// Nothing is dropped: a failed write keeps its items for the
// next attempt, shutdown flushes, and items that still cannot be written are
// printed to the server log rather than vanishing. While writes fail (the
// database is restarting, say) the next attempt waits longer each time, up to
// MAX_RETRY_DELAY_MS, so an outage is not hammered; the first success resets it.
import type { FastifyBaseLogger } from 'fastify';

export interface BatchQueueOptions<T> {
  /** Writes one batch; throwing keeps the batch queued. */
  writeBatch: (items: T[]) => Promise<void>;
  intervalMs: number;
  maxBatch: number;
  /** What the server log calls an item it had to give up on. */
  noun: string;
  logger: FastifyBaseLogger;
}

const MAX_RETRY_DELAY_MS = 2000;

export class BatchQueue<T> {
  private queue: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Writes run one at a time, so items keep their order and a slow database is not piled on. */
  private writing: Promise<void> = Promise.resolve();
  /** Failed writes in a row; while above 0, new items wait for the retry timer. */
  private failures = 0;

  constructor(private readonly options: BatchQueueOptions<T>) {}

  add(item: T): void {
    this.queue.push(item);
    if (this.queue.length >= this.options.maxBatch && this.failures === 0) void this.flush();
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
    for (const item of this.queue.splice(0)) this.options.logger.error({ [this.options.noun]: item }, `${this.options.noun} could not be written to the database`);
  }

  private schedule(): void {
    if (this.timer) return;
    const delay = this.failures === 0 ? this.options.intervalMs : Math.min(MAX_RETRY_DELAY_MS, this.options.intervalMs * 2 ** this.failures);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.flush();
      },
      delay,
    );
    // a pending flush must not keep a finished process alive; close() flushes
    this.timer.unref();
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      try {
        await this.options.writeBatch(batch);
        this.failures = 0;
      } catch (error) {
        this.queue.unshift(...batch);
        this.failures += 1;
        this.options.logger.error({ err: error, items: batch.length }, `could not write a batch of ${this.options.noun}; will retry`);
        this.schedule();
        return;
      }
    }
  }
}
