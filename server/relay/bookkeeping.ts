// The relay answers first and settles afterwards (the real charge, the
// counters, the consume log), so a client never waits for bookkeeping it does
// not need. That after-answer work is tracked here, per database, so it is
// never lost: app.close() (and so SIGTERM) waits for it and flushes the logs,
// and tests call idle() before reading balances or logs.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { LogWriter } from './logWriter';

export class Bookkeeping {
  readonly logs: LogWriter;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    db: Kysely<Database>,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.logs = new LogWriter(db, logger);
  }

  /** Runs `work` without the caller waiting; a failure is logged, never thrown at a client. */
  later(work: () => Promise<void>): void {
    const running = work()
      .catch((error) => this.logger.error({ err: error }, 'relay bookkeeping failed'))
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  /** Resolves once every tracked piece of work has finished and its logs are written. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.logs.flush();
  }

  async close(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.logs.close();
  }
}

const byDatabase = new WeakMap<Kysely<Database>, Bookkeeping>();

/** The one bookkeeper of a database handle (so of one app). */
export function bookkeepingFor(db: Kysely<Database>, logger: FastifyBaseLogger): Bookkeeping {
  let bookkeeping = byDatabase.get(db);
  if (!bookkeeping) {
    bookkeeping = new Bookkeeping(db, logger);
    byDatabase.set(db, bookkeeping);
  }
  return bookkeeping;
}
