// A settlement batch of the lease ledger (leaseLedger.ts), in one
// read-committed transaction: the batch's id first (a retry after a COMMIT
// whose answer was lost finds it and applies nothing twice), the charges off
// their leases' rows (a row swept meanwhile, or none, sends the charge to the
// balance itself), the retired leases and orphaned rows given back, the logs,
// then the users, tokens and channels. Lock order, as everywhere in the
// ledger: reservation rows, then users, then tokens (ascending ids each).
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { applyTotals } from '../repositories/ledger';
import { insertLogs, type NewLog } from '../repositories/logs';
import {
  chargeLeaseRow,
  claimBatchId,
  deleteReservations,
  insertBatchId,
  lockLeaseRows,
  type LeaseRow,
} from '../repositories/reservationRows';
import type { Lease } from './lease';
import { ReservationState, settlementTotals, type Settlement } from './quota';

/** What one batch writes, and what it knows of earlier attempts of the same items. */
export interface LeaseBatch {
  id: string;
  settlements: readonly Settlement[];
  failures: readonly NewLog[];
  /** Retired leases with no hold or charge to come: their rows go, the rest back to the balances. */
  returning: readonly Lease[];
  /** Rows of leases whose taking failed with its connection: given back if they are there. */
  orphans: readonly string[];
  /** The ids of earlier attempts of this batch's items, whose COMMIT may have landed. */
  priorIds: ReadonlySet<string>;
  /** Those ids per item. */
  priorOf: ReadonlyMap<object, readonly string[]>;
  /** The lease each settlement freed in memory takes its charge off, by reservation id. */
  noted: ReadonlyMap<string, Lease>;
}

/** Writes a batch in one transaction; the leases of its charges found swept (as if this node were dead) meanwhile. */
export async function writeLeaseBatch(db: Kysely<Database>, dialect: 'postgres' | 'mysql', batch: LeaseBatch): Promise<Set<Lease>> {
  return db
    .transaction()
    .setIsolationLevel('read committed')
    .execute(async (transaction) => {
      await insertBatchId(transaction, batch.id, Date.now());
      const committed = await committedPriorBatches(transaction, dialect, batch.priorIds);
      const applies = (item: object) => !(batch.priorOf.get(item) ?? []).some((id) => committed.has(id));
      const live = batch.settlements.filter(applies);
      const logs = batch.failures.filter(applies);

      const chargeByLease = new Map<Lease, number>();
      for (const settlement of live) {
        const lease = settlement.reservation.id ? batch.noted.get(settlement.reservation.id) : undefined;
        if (lease) chargeByLease.set(lease, (chargeByLease.get(lease) ?? 0) + settlement.charge);
      }
      // every reservation row this batch touches, locked in ascending id order first
      const rowIds = [
        ...new Set([...[...chargeByLease.keys()].map((lease) => lease.id), ...batch.returning.map((lease) => lease.id), ...batch.orphans]),
      ].sort();
      const rows = rowIds.length === 0 ? [] : await lockLeaseRows(transaction, rowIds);
      const held = new Map(rows.filter((row) => Number(row.state) === ReservationState.held).map((row) => [row.id, row]));
      const swept = await chargeLeases(transaction, chargeByLease, held);
      // the balances' movements, as settlements: a refund is what leaves held_quota, a charge what leaves the balance
      const movements = settlementMovements(live, batch.noted, swept);
      const gone = [...new Set([...batch.returning.map((lease) => lease.id), ...batch.orphans])].filter((id) =>
        rows.some((row) => row.id === id),
      );
      movements.push(...givenBack(gone, held));
      if (gone.length > 0) await deleteReservations(transaction, gone);
      const consumeLogs = live.flatMap((settlement) => (settlement.log ? [settlement.log] : []));
      await insertLogs(transaction, [...consumeLogs, ...logs]);
      await applyTotals(transaction, settlementTotals(movements));
      return swept;
    });
}

/** The earlier attempts' ids that committed: an id this transaction can claim did not (a claim waits for an attempt still running). */
async function committedPriorBatches(
  transaction: Kysely<Database>,
  dialect: 'postgres' | 'mysql',
  priorIds: ReadonlySet<string>,
): Promise<Set<string>> {
  const committed = new Set<string>();
  for (const id of [...priorIds].sort()) if (!(await claimBatchId(transaction, dialect, id, Date.now()))) committed.add(id);
  return committed;
}

/** Takes each lease's charges off its row, in id order; the leases whose row is no longer held (swept). */
async function chargeLeases(
  transaction: Kysely<Database>,
  chargeByLease: ReadonlyMap<Lease, number>,
  held: ReadonlyMap<string, LeaseRow>,
): Promise<Set<Lease>> {
  const swept = new Set<Lease>();
  for (const [lease, charge] of [...chargeByLease].sort(([left], [right]) => (left.id < right.id ? -1 : 1))) {
    if (!held.has(lease.id)) {
      swept.add(lease);
      continue;
    }
    if (charge !== 0) {
      await chargeLeaseRow(transaction, lease.id, charge);
      held.get(lease.id)!.amount = Number(held.get(lease.id)!.amount) - charge;
    }
  }
  return swept;
}

/** The live settlements as balance movements: a charge off a lease (from held_quota), or straight off the balance. */
function settlementMovements(live: readonly Settlement[], noted: ReadonlyMap<string, Lease>, swept: ReadonlySet<Lease>): Settlement[] {
  const movements: Settlement[] = [];
  for (const settlement of live) {
    const lease = settlement.reservation.id ? noted.get(settlement.reservation.id) : undefined;
    const fromLease = lease !== undefined && !swept.has(lease);
    if (!fromLease && settlement.charge === 0 && !settlement.log && !settlement.countRequest) continue;
    const reservation = lease
      ? {
          userId: lease.userId,
          tokenId: settlement.reservation.tokenId,
          limitedToken: lease.limited,
          amount: fromLease ? settlement.charge : 0,
        }
      : { ...settlement.reservation, amount: 0 };
    movements.push({ ...settlement, reservation });
  }
  return movements;
}

/** What the rows given back still hold, back to their users (and keys) as refunds. */
function givenBack(gone: readonly string[], held: ReadonlyMap<string, LeaseRow>): Settlement[] {
  const movements: Settlement[] = [];
  for (const id of gone) {
    const row = held.get(id);
    if (row && Number(row.amount) !== 0) {
      movements.push({
        reservation: {
          userId: Number(row.user_id),
          tokenId: Number(row.token_id),
          limitedToken: Number(row.limited) === 1,
          amount: Number(row.amount),
        },
        charge: 0,
        channelId: 0,
        countRequest: false,
      });
    }
  }
  return movements;
}
