// Taking quota leases (leaseLedger.ts): the leases wanted at the same time, in
// one transaction (group commit). The users' and limited keys' rows are locked
// (ascending ids), each lease sized from its key's rate and what is left, the
// amounts moved into held_quota, and the leases' rows written with them.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { holdTokenQuota, holdUserQuota, lockTokenQuotas, lockUserQuotas } from '../repositories/ledger';
import { insertReservations, type NewReservationRow } from '../repositories/reservationRows';
import { ascending, Lease, type Taken, type Wanted } from './lease';
import { ReservationState } from './quota';

/** A lease is at least this many times what the requests waiting for it need. */
const LEASE_MIN_MULTIPLE = 4;

/** What sizes a batch's leases: the node they belong to, how long a lease serves, and what each key held per second in its last. */
export interface LeaseSizing {
  nodeId: string;
  maxAgeMs: number;
  rates: ReadonlyMap<string, number>;
}

/** A batch's leases sized, before anything is written: what each user and key gives, and the rows. */
interface SizedLeases {
  result: Taken[];
  userTaken: Map<number, number>;
  tokenTaken: Map<number, number>;
  inserts: NewReservationRow[];
}

/** The leases of a batch (each row's id chosen by the caller), in one read-committed transaction. */
export async function takeLeaseRows(
  db: Kysely<Database>,
  rows: ReadonlyArray<{ wanted: Wanted; id: string }>,
  now: number,
  sizing: LeaseSizing,
): Promise<Taken[]> {
  const batch = rows.map((row) => row.wanted);
  return db
    .transaction()
    .setIsolationLevel('read committed')
    .execute(async (transaction) => {
      const userIds = [...new Set(batch.map((wanted) => wanted.userId))].sort(ascending);
      const tokenIds = [...new Set(batch.filter((wanted) => wanted.limited).map((wanted) => wanted.tokenId))].sort(ascending);
      const users = await lockUserQuotas(transaction, userIds);
      const tokens = tokenIds.length > 0 ? await lockTokenQuotas(transaction, tokenIds) : new Map<number, number>();
      const { result, userTaken, tokenTaken, inserts } = sizeLeases(rows, users, tokens, now, sizing);
      for (const userId of [...userTaken.keys()].sort(ascending)) await holdUserQuota(transaction, userId, userTaken.get(userId)!);
      for (const tokenId of [...tokenTaken.keys()].sort(ascending)) await holdTokenQuota(transaction, tokenId, tokenTaken.get(tokenId)!);
      if (inserts.length > 0) await insertReservations(transaction, inserts);
      return result;
    });
}

/**
 * Each wanted lease sized against what its user (and key) still have, in the
 * batch's order: `users` and `tokens` (the balances read) go down as leases
 * take from them.
 */
function sizeLeases(
  rows: ReadonlyArray<{ wanted: Wanted; id: string }>,
  users: Map<number, number>,
  tokens: Map<number, number>,
  now: number,
  sizing: LeaseSizing,
): SizedLeases {
  const sized: SizedLeases = { result: [], userTaken: new Map(), tokenTaken: new Map(), inserts: [] };
  const { result, userTaken, tokenTaken, inserts } = sized;
  for (const { wanted, id } of rows) {
    const amounts = wanted.waiters.map((waiter) => waiter.reservation.amount);
    const need = amounts.reduce((sum, amount) => sum + amount, 0);
    const smallest = Math.min(...amounts);
    const userLeft = users.get(wanted.userId) ?? 0;
    const tokenLeft = wanted.limited ? (tokens.get(wanted.tokenId) ?? 0) : Infinity;
    const available = Math.min(userLeft, tokenLeft);
    if (available < smallest) {
      result.push({ wanted, refused: userLeft < smallest ? 'user' : 'token' });
      continue;
    }
    const target = Math.max(need * LEASE_MIN_MULTIPLE, Math.ceil((sizing.rates.get(wanted.key) ?? 0) * (sizing.maxAgeMs / 1000)));
    // more wanted than is left: half of it (at least one request's worth), so other nodes find the rest
    const amount =
      available >= need ? Math.max(need, Math.min(target, Math.floor(available / 4))) : Math.max(smallest, Math.floor(available / 2));
    users.set(wanted.userId, userLeft - amount);
    userTaken.set(wanted.userId, (userTaken.get(wanted.userId) ?? 0) + amount);
    if (wanted.limited) {
      tokens.set(wanted.tokenId, tokenLeft - amount);
      tokenTaken.set(wanted.tokenId, (tokenTaken.get(wanted.tokenId) ?? 0) + amount);
    }
    inserts.push({
      id,
      node_id: sizing.nodeId,
      user_id: wanted.userId,
      token_id: wanted.tokenId,
      limited: wanted.limited ? 1 : 0,
      amount,
      state: ReservationState.held,
      created_at: now,
    });
    result.push({ wanted, lease: new Lease(id, wanted.key, wanted.userId, wanted.tokenId, wanted.limited, amount, now) });
  }
  return sized;
}
