// The relay answers first and settles afterwards (the real charge, the
// counters, the consume log), so a client never waits for bookkeeping it does
// not need. Settlements are written in batches (BatchQueue): under load one
// transaction settles every request of the last few milliseconds, and writes
// their consume logs in the same transaction (a charge never exists without
// its log, or the reverse). A batch that fails stays queued and is retried,
// backing off; on PostgreSQL and MySQL a retry after a COMMIT whose answer was
// lost applies nothing twice (quota.ts). Other logs go through LogWriter.
// Nothing is lost: app.close() (and so SIGTERM) waits for the work and flushes
// both queues, and tests call idle() before reading balances or logs.
// The error logs of relayed requests that were refused or failed ride the
// settlements' queue too (recordFailure): written in the same transactions,
// they are the usage rollups' errors, and cost nothing when nothing fails.
//
// A settlement only hands back what its reservation held beyond the real cost
// (or takes the excess of a provider that overran the limit, in full), so
// writing it a few milliseconds late never lets a balance be overdrawn by
// anything but that overrun.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { BatchQueue, type BatchObserver } from './batchQueue';
import { LogWriter } from './logWriter';
import type { QuotaLedger, Settlement } from './quota';
import type { NewLog } from '../repositories/logs';

const SETTLE_INTERVAL_MS = 50;
const MAX_SETTLEMENTS_PER_BATCH = 500;

/** Told, once the batch is in the database, what a user was charged in it in all (the low-quota reminder). */
export type ChargeListener = (userId: number, charge: number) => void;

type QueuedSettlement =
  | { settlement: Settlement; charged?: ChargeListener; failure?: undefined }
  | { failure: NewLog; settlement?: undefined; charged?: undefined };

/** Each listener once per user, with the user's total charge in the batch, so one crossing is one e-mail. */
function tellCharges(batch: readonly QueuedSettlement[]): void {
  const totals = new Map<number, { charge: number; charged: ChargeListener }>();
  for (const { settlement, charged } of batch) {
    if (!settlement || !charged || settlement.charge <= 0) continue;
    const userId = settlement.reservation.userId;
    const total = totals.get(userId) ?? { charge: 0, charged };
    total.charge += settlement.charge;
    totals.set(userId, total);
  }
  for (const [userId, { charge, charged }] of totals) charged(userId, charge);
}

export class Bookkeeping {
  readonly logs: LogWriter;
  private readonly settlements: BatchQueue<QueuedSettlement>;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly ledger: QuotaLedger,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.logs = new LogWriter((rows) => ledger.insertLogs(rows), logger);
    this.settlements = new BatchQueue({
      writeBatch: async (batch) => {
        const settlements: Settlement[] = [];
        const failures: NewLog[] = [];
        for (const queued of batch) {
          if (queued.failure) failures.push(queued.failure);
          else settlements.push(queued.settlement);
        }
        await ledger.settle(settlements, failures);
        tellCharges(batch);
      },
      intervalMs: SETTLE_INTERVAL_MS,
      maxBatch: MAX_SETTLEMENTS_PER_BATCH,
      noun: 'settlement',
      logger,
    });
  }

  /** Times each batch of settlements and of other logs (the metrics). */
  observeBatches(observer: (queue: 'settlements' | 'logs', ...batch: Parameters<BatchObserver>) => void): void {
    this.settlements.observer = (...batch) => observer('settlements', ...batch);
    this.logs.observe((...batch) => observer('logs', ...batch));
  }

  settle(settlement: Settlement, charged?: ChargeListener): void {
    this.ledger.noteSettlement?.(settlement);
    this.settlements.add({ settlement, charged });
  }

  /** The error log of a relayed request refused or failed, written with the next batch of settlements. */
  recordFailure(failure: NewLog): void {
    this.settlements.add({ failure });
  }

  /**
   * Work that ends in a settlement but is awaited by its caller (a bill counted paced after the answer went out):
   * idle() waits for it too, so that "idle" still means every answered request is billed.
   */
  track<T>(work: Promise<T>): Promise<T> {
    const running = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(running);
    void running.finally(() => this.pending.delete(running));
    return work;
  }

  /** Runs `work` without the caller waiting; a failure is logged, never thrown at a client. */
  later(work: () => Promise<void>): void {
    const running = work()
      .catch((error) => this.logger.error({ err: error }, 'relay bookkeeping failed'))
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  /** Resolves once every tracked piece of work has finished and its settlements and logs are written. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.settlements.flush();
    await this.logs.flush();
    await this.ledger.quiesce?.();
  }

  async close(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.settlements.close();
    await this.logs.close();
    await this.ledger
      .close?.()
      .catch((error: unknown) => this.logger.error({ err: error }, 'could not give back the quota leases; the dead-node sweep will'));
  }
}

const byDatabase = new WeakMap<Kysely<Database>, Bookkeeping>();

/** The one bookkeeper of a database handle (so of one app). */
export function bookkeepingFor(context: { db: Kysely<Database>; ledger: QuotaLedger }, logger: FastifyBaseLogger): Bookkeeping {
  const { db } = context;
  let bookkeeping = byDatabase.get(db);
  if (!bookkeeping) {
    bookkeeping = new Bookkeeping(context.ledger, logger);
    byDatabase.set(db, bookkeeping);
  }
  return bookkeeping;
}
