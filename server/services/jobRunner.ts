// Background jobs on one worker of one node at a time. Every worker keeps the
// same timers; a run starts only on the worker that claims the job's lease
// (repositories/jobLeases.ts), which it renews while the run lasts. A worker
// that dies mid-run stops renewing: once the lease has run out (leaseMs,
// NODE_LEASE_SECONDS) the next tick elsewhere takes the job over.
//
// A periodic job keeps its lease after a run until shortly before its next
// tick is due, so the workers whose timers fire in between see it taken and
// skip: the job runs about once per period across the whole deployment, most
// often on the worker that ran it last. A job an admin starts (test all,
// update all balances) lets go as soon as it ends.
import type { JobLeaseStore } from '../repositories/jobLeases';

export interface JobLeaseSettings {
  /** How long a claim lasts without renewal: the longest a dead holder keeps a job from the others. */
  leaseMs: number;
  /** How often a running job renews its claim. */
  renewMs: number;
}

/** A claimed job: stop when `signal` aborts (the lease was lost to another worker); `share` publishes progress to the others. */
export interface HeldJob {
  signal: AbortSignal;
  share(detail: string): void;
  /** Lets go of the lease: at once (a claim in this very millisecond wins), or (periodic jobs) held until `until`, with a last `detail`. */
  release(options?: { until?: number; detail?: string }): Promise<void>;
}

interface Log {
  warn(object: object, message: string): void;
}

/** Until when a periodic job ticked at `tick` stays taken: a tenth of a period (at most a second) before its next tick, so that tick finds it free. */
export const nextTickDue = (tick: number, periodMs: number) => tick + periodMs - Math.min(1000, periodMs / 10);

export class JobRunner {
  constructor(
    private readonly store: JobLeaseStore,
    /** This worker's id (its relay node id). */
    readonly holder: string,
    readonly settings: JobLeaseSettings,
    private readonly log: Log,
  ) {}

  /** Claims `name` (publishing `detail` with it) and keeps it renewed until released; undefined when another worker holds it. */
  async claim(name: string, initialDetail?: string): Promise<HeldJob | undefined> {
    const now = Date.now();
    if (!(await this.store.claim(name, this.holder, now, now + this.settings.leaseMs, initialDetail))) return undefined;
    const lost = new AbortController();
    let detail = initialDetail;
    let renewing: Promise<void> = Promise.resolve();
    const renew = async () => {
      try {
        if (!(await this.store.extend(name, this.holder, Date.now() + this.settings.leaseMs, detail))) {
          this.log.warn({ job: name }, 'lost the lease of a running job to another worker: stopping it');
          lost.abort();
        }
      } catch (error) {
        // the database may come back before the lease runs out; if not, another worker takes over and the next renewal says so
        this.log.warn({ err: error, job: name }, 'could not renew the lease of a running job');
      }
    };
    const timer = setInterval(() => {
      renewing = renewing.then(renew);
    }, this.settings.renewMs);
    timer.unref();
    return {
      signal: lost.signal,
      share: (next) => {
        detail = next;
      },
      release: async (options = {}) => {
        clearInterval(timer);
        await renewing;
        if (lost.signal.aborted) return;
        await this.store
          .extend(name, this.holder, options.until ?? Date.now() - 1, options.detail ?? detail)
          .catch((error: unknown) =>
            this.log.warn({ err: error, job: name }, 'could not release the lease of a job (it runs out by itself)'),
          );
      },
    };
  }

  /**
   * One tick of a periodic job: runs `work` when this worker claims the job,
   * then keeps the lease until just before the next tick (`periodMs` after
   * this one). Resolves to undefined when another worker has it.
   */
  async runPeriodic<T>(name: string, periodMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
    const tick = Date.now();
    const held = await this.claim(name);
    if (!held) return undefined;
    try {
      return await work(held.signal);
    } finally {
      await held.release({ until: nextTickDue(tick, periodMs) });
    }
  }

  /** The lease of `name` as the store has it (who holds it, its shared detail). */
  read(name: string) {
    return this.store.read(name);
  }
}
