// The relay's ledger on PostgreSQL and MySQL: quota held in leases, so a
// request does not wait for a commit of its own.
//
// A lease is a block of a user's quota (and of a limited key's) that this node
// took in one conditional UPDATE and now holds in memory. Its row is a row of
// `reservations` naming the node, written in the same transaction, so the
// rules of reservation rows hold for it unchanged: held_quota counts it, a
// node that dies loses it to the dead-node sweep (nodeLease.ts), and a
// settlement that comes after such a sweep takes its charge from the balance
// itself. A request's reservation is a hold on a lease, in memory; its
// settlement frees the hold at once and takes the charge off the lease's row
// in the next settlement batch, with the consume log, in one transaction per
// batch. A release costs nothing but the memory.
//
// Leases are short-lived. New holds come only from a lease under a second old
// (LEASE_MAX_AGE_MS); then, or when it runs short, the lease is retired and a
// new one taken for what comes next. A retired lease is given back in the
// batch after its last hold ends: the rest of its row goes back to the user
// (and the key) and the row is deleted. So a top-up, or an admin's change of
// a balance, reaches every node within a second; and an idle node holds
// nothing after LEASE_IDLE_MS.
//
// A lease's size follows what its key held in the last lease's life, and is
// never more than a quarter of what the user (and the key) still have, nor
// less than what the waiting requests need: a key that spends fast gets a
// block that lasts it a second, a balance near its end is reserved request by
// request, and several nodes sharing one balance each find some of it.
//
// Leases wanted at the same time are taken in one transaction (group commit);
// each settlement batch is one transaction. Lock order in every transaction
// here, as in the sweep: reservation rows, then users, then tokens (ascending
// ids each), so no two can deadlock. A settlement batch first inserts its id
// in ledger_batches: a retry after a COMMIT whose answer was lost finds it
// and applies nothing twice; a lease whose taking failed that way is given
// back by its row, which is there or not.
//
// The lease in memory and its shapes are in lease.ts; taking leases in
// leaseTaking.ts; a settlement batch's transaction in leaseSettlement.ts.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { isDatabaseUnavailable } from '../db/faults';
import { insertLogs, type NewLog } from '../repositories/logs';
import { keyOf, type Hold, type Lease, type Taken, type Waiter, type Wanted } from './lease';
import { writeLeaseBatch } from './leaseSettlement';
import { takeLeaseRows } from './leaseTaking';
import type { QuotaLedger, Reservation, ReserveResult, Settlement } from './quota';

/** New holds come from a lease at most this old: the longest a node keeps spending a balance changed elsewhere. */
export const LEASE_MAX_AGE_MS = 1000;
/** A lease nobody has used for this long is given back. */
export const LEASE_IDLE_MS = 250;

const OK: ReserveResult = { ok: true };

export interface LeaseLedgerOptions {
  nodeId: string;
  dialect: 'postgres' | 'mysql';
  log: { warn: (object: object, message: string) => void; error: (object: object, message: string) => void };
  maxAgeMs?: number;
  idleMs?: number;
}

export class LeaseLedger implements QuotaLedger {
  private readonly maxAgeMs: number;
  private readonly idleMs: number;
  /** The lease new holds of each key come from. */
  private readonly active = new Map<string, Lease>();
  /** Leases retired with holds or charges still to come. */
  private readonly retiring = new Set<Lease>();
  /** Holds by reservation id. */
  private readonly holds = new Map<string, Hold>();
  /** Settlements freed in memory, by reservation id, with the lease their charge comes off. */
  private readonly noted = new Map<string, Lease>();
  /** Rows of leases whose taking failed with its connection: perhaps there, given back by row. */
  private readonly orphans = new Set<string>();
  /** Settlements and failure logs of a batch whose outcome is unknown, by object, with that batch's id. */
  private readonly attempted = new WeakMap<object, readonly string[]>();
  /** Settlements and failure logs already written: handed over again, they change nothing. */
  private readonly written = new WeakSet<object>();
  /** What each key held per second in its last lease: the size of the next. */
  private readonly rates = new Map<string, number>();
  private wanted = new Map<string, Wanted>();
  private taking = false;
  private counter = 0;
  /** Writes (settlement batches, give-backs) run one at a time. */
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Set while the database is unreachable (a write of this ledger failed so): no hold comes from a lease then, every reservation asks the database and is refused as the database is. */
  private unreachable = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: LeaseLedgerOptions,
  ) {
    this.maxAgeMs = options.maxAgeMs ?? LEASE_MAX_AGE_MS;
    this.idleMs = options.idleMs ?? LEASE_IDLE_MS;
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.min(this.idleMs, this.maxAgeMs) / 2));
    this.timer.unref();
  }

  /** Ids of lease rows and batches: the node's id, this ledger's own (a node may open a ledger again), a counter. */
  private nextId(prefix: string): string {
    return `${this.options.nodeId}-${this.instance}${prefix}${(this.counter += 1).toString(36)}`;
  }

  private readonly instance = randomBytes(3).toString('hex');

  // ---- holds, in memory -------------------------------------------------

  reserve(reservation: Reservation): Promise<ReserveResult> {
    if (reservation.amount <= 0) return Promise.resolve(OK);
    if (this.tryHold(reservation)) return Promise.resolve(OK);
    return new Promise((resolve, reject) => this.want(reservation, { resolve, reject }));
  }

  /**
   * A hold on the key's lease, if it is young and has enough. A lease too old is retired; one too small stays
   * for smaller requests until the lease taken for this one replaces it.
   */
  private tryHold(reservation: Reservation, now = Date.now()): boolean {
    const key = keyOf(reservation);
    const lease = this.active.get(key);
    if (!lease || this.unreachable) return false;
    if (now - lease.createdAt >= this.maxAgeMs) {
      this.retire(lease);
      return false;
    }
    if (lease.free >= reservation.amount) {
      lease.free -= reservation.amount;
      lease.holds += 1;
      lease.heldTotal += reservation.amount;
      lease.lastUsedAt = now;
      if (!reservation.id) reservation.id = this.nextId('r');
      this.holds.set(reservation.id, { lease, amount: reservation.amount });
      return true;
    }
    return false;
  }

  private retire(lease: Lease): void {
    if (lease.retired) return;
    lease.retired = true;
    if (this.active.get(lease.key) === lease) this.active.delete(lease.key);
    const seconds = Math.max(0.05, (Date.now() - lease.createdAt) / 1000);
    this.rates.set(lease.key, lease.heldTotal / seconds);
    this.retiring.add(lease);
  }

  freeFor(payer: Pick<Reservation, 'userId' | 'tokenId' | 'limitedToken'>): number {
    const lease = this.active.get(keyOf(payer));
    return lease && Date.now() - lease.createdAt < this.maxAgeMs ? Math.max(0, lease.free) : 0;
  }

  release(reservation: Reservation): Promise<void> {
    this.free(reservation, 0);
    return Promise.resolve();
  }

  noteSettlement(settlement: Settlement): void {
    const lease = this.free(settlement.reservation, settlement.charge);
    if (lease && settlement.reservation.id) {
      lease.unwritten += 1;
      this.noted.set(settlement.reservation.id, lease);
    }
  }

  /** Ends a hold: what it took beyond `charge` is free again. The lease it was on, if any. */
  private free(reservation: Reservation, charge: number): Lease | undefined {
    const id = reservation.id;
    const hold = id === undefined ? undefined : this.holds.get(id);
    if (!hold) return undefined;
    this.holds.delete(id!);
    hold.lease.holds -= 1;
    // a retired lease takes no new holds: what comes back to it is given back with its row
    hold.lease.free += hold.amount - charge;
    return hold.lease;
  }

  // ---- taking leases (group commit) ---------------------------------------

  private want(reservation: Reservation, waiter: Omit<Waiter, 'reservation'>): void {
    if (this.closed) return waiter.reject(new Error('the ledger is closed'));
    const key = keyOf(reservation);
    let wanted = this.wanted.get(key);
    if (!wanted) {
      wanted = { key, userId: reservation.userId, tokenId: reservation.tokenId, limited: reservation.limitedToken, waiters: [] };
      this.wanted.set(key, wanted);
    }
    wanted.waiters.push({ reservation, ...waiter });
    // the requests that arrive in this turn of the event loop wait for one transaction together
    if (!this.taking) {
      this.taking = true;
      setImmediate(() => void this.takeWanted());
    }
  }

  /** Takes every lease wanted so far in one transaction; what is wanted meanwhile goes in the next. */
  private async takeWanted(): Promise<void> {
    try {
      while (this.wanted.size > 0) {
        const batch = [...this.wanted.values()];
        this.wanted = new Map();
        let taken: Taken[];
        try {
          taken = await this.takeLeases(batch);
        } catch (error) {
          rejectAll(batch, error);
          continue;
        }
        for (const each of taken) this.handOut(each);
      }
    } finally {
      this.taking = false;
    }
  }

  /** A lease taken becomes its key's active one, and its waiters hold on it (or are refused as its balance was). */
  private handOut({ wanted, lease, refused }: Taken): void {
    if (lease) {
      const previous = this.active.get(wanted.key);
      if (previous) this.retire(previous);
      this.active.set(wanted.key, lease);
    }
    for (const waiter of wanted.waiters) {
      if (this.tryHold(waiter.reservation)) waiter.resolve(OK);
      else if (refused) waiter.resolve({ ok: false, reason: refused });
      // what the lease had went to the waiters before it: try again with what is left
      else if (lease) this.want(waiter.reservation, waiter);
      else waiter.resolve({ ok: false, reason: 'user' });
    }
  }

  /** The leases of a batch, each sized from its key's rate and what the user and key have; one transaction. */
  private async takeLeases(batch: readonly Wanted[]): Promise<Taken[]> {
    const now = Date.now();
    const rows = batch.map((wanted) => ({ wanted, id: this.nextId('L') }));
    try {
      const taken = await takeLeaseRows(this.db, rows, now, { nodeId: this.options.nodeId, maxAgeMs: this.maxAgeMs, rates: this.rates });
      this.unreachable = false;
      return taken;
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.unreachable = true;
      // perhaps committed (the COMMIT's answer lost): given back by row in the next batch, if there
      for (const { id } of rows) this.orphans.add(id);
      throw error;
    }
  }

  // ---- writing: settlement batches and give-backs ---------------------------

  settle(settlements: readonly Settlement[], failures: readonly NewLog[] = []): Promise<void> {
    const run = this.writing.then(() =>
      this.writeBatch(settlements, failures).catch((error: unknown) => {
        if (isDatabaseUnavailable(error)) this.unreachable = true;
        throw error;
      }),
    );
    this.writing = run.catch(() => undefined);
    return run;
  }

  async insertLogs(rows: readonly NewLog[]): Promise<void> {
    await insertLogs(this.db, rows);
  }

  /**
   * One transaction (leaseSettlement.ts): the batch's id, the charges off
   * their leases' rows (a row swept meanwhile, or none, sends the charge to
   * the balance itself), the retired leases given back, the logs, then the
   * users, tokens and channels. Before it, what the batch carries; after it,
   * the memory brought in line with what was written.
   */
  private async writeBatch(allSettlements: readonly Settlement[], allFailures: readonly NewLog[]): Promise<void> {
    const settlements = allSettlements.filter((settlement) => !this.written.has(settlement));
    const failures = allFailures.filter((failure) => !this.written.has(failure));
    for (const settlement of settlements) {
      // a settlement handed straight to the ledger (not through the bookkeeping) is freed now
      if (settlement.reservation.id && !this.noted.has(settlement.reservation.id) && this.holds.has(settlement.reservation.id))
        this.noteSettlement(settlement);
    }
    const returning = [...this.retiring].filter((lease) => lease.returnable);
    const orphans = [...this.orphans];
    if (settlements.length === 0 && failures.length === 0 && returning.length === 0 && orphans.length === 0) return;
    const batchId = this.nextId('B');
    // the ids of the earlier attempts of these items, whose COMMIT may have landed
    const priorOf = new Map<object, readonly string[]>();
    const priorIds = new Set<string>();
    for (const item of [...settlements, ...failures]) {
      const ids = this.attempted.get(item) ?? [];
      if (ids.length > 0) priorOf.set(item, ids);
      for (const id of ids) priorIds.add(id);
      this.attempted.set(item, [...ids, batchId]);
    }
    const swept = await writeLeaseBatch(this.db, this.options.dialect, {
      id: batchId,
      settlements,
      failures,
      returning,
      orphans,
      priorIds,
      priorOf,
      noted: this.noted,
    });
    this.unreachable = false;
    // written: the charges are off their leases, the returned leases and orphans are gone
    for (const item of [...settlements, ...failures]) this.written.add(item);
    for (const settlement of settlements) {
      const id = settlement.reservation.id;
      const lease = id ? this.noted.get(id) : undefined;
      if (!lease) continue;
      this.noted.delete(id!);
      lease.unwritten -= 1;
    }
    for (const lease of returning) this.retiring.delete(lease);
    for (const id of orphans) this.orphans.delete(id);
    for (const lease of swept) {
      this.retire(lease);
      lease.free = 0;
      this.options.log.warn(
        { lease: lease.id },
        'a lease of this node was swept as if the node were dead; its charges went to the balance',
      );
    }
  }

  // ---- idle leases --------------------------------------------------------

  /** Retires leases too old for new holds or unused for a while, and gives back what it can. */
  private tick(): void {
    const now = Date.now();
    for (const lease of this.active.values()) {
      if (now - lease.createdAt >= this.maxAgeMs || (lease.holds === 0 && now - lease.lastUsedAt >= this.idleMs)) this.retire(lease);
    }
    if (now < this.nextGiveBackAt || this.givingBack) return;
    if (this.orphans.size > 0 || [...this.retiring].some((lease) => lease.returnable)) {
      this.givingBack = true;
      this.settle([])
        .then(() => (this.giveBackFailures = 0))
        .catch((error: unknown) => {
          // a database that is down is not asked again every tick: the wait doubles, up to 5 s
          this.giveBackFailures += 1;
          this.nextGiveBackAt = Date.now() + Math.min(5000, 100 * 2 ** this.giveBackFailures);
          this.options.log.warn({ err: error }, 'could not give back idle quota leases; will retry');
        })
        .finally(() => (this.givingBack = false));
    }
  }

  private givingBack = false;
  private giveBackFailures = 0;
  private nextGiveBackAt = 0;

  /** Retires every lease (a lease in use keeps its holds, and is given back once they end) and gives back what it can now. */
  async quiesce(): Promise<void> {
    for (const lease of [...this.active.values()]) if (lease.holds === 0) this.retire(lease);
    await this.settle([]);
  }

  /** Every lease retired and given back; the node lease's sweep takes whatever a database outage kept here. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const lease of [...this.active.values()]) this.retire(lease);
    await this.settle([]);
  }

  /** This node's lease was lost (it registered again): its leases may have been swept, so none takes a new hold. */
  retireAll(): void {
    for (const lease of [...this.active.values()]) this.retire(lease);
  }
}

/** A failed taking refuses every request that waited for it. */
function rejectAll(batch: readonly Wanted[], error: unknown): void {
  for (const wanted of batch) for (const waiter of wanted.waiters) waiter.reject(error);
}
