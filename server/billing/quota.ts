// Quota movements of one relayed request, each atomic in the database:
// reserve before the call (refused when the user or a limited token cannot
// cover it), settle with the real charge after, release on failure.
//
// A settlement is `balance + reserved - charge`, with no floor: the
// reservation covers the most the request may cost (accounting.ts), so only a
// provider that ignores the output limit can take a balance below zero, and
// then by exactly what it overran; the reservation's conditional UPDATE
// (quota >= amount) refuses every later request until that is paid.
//
// What a reservation takes is also counted in held_quota, in the same UPDATE,
// until its settlement or release takes it off again. So when a process dies
// (a crash, kill -9, a power cut) with requests in flight, what they held is
// still on record. On SQLite, returnHeldQuota gives it back at the next start
// (one process per file). On PostgreSQL and MySQL every reservation is also a
// row of `reservations` naming its node, written in the reservation's
// transaction and deleted by its settlement or release in theirs: a batch
// settled twice (a retry after an ambiguous COMMIT) finds its rows gone and
// changes nothing, and what a dead node held is given back by a live one
// (nodeLease.ts).
//
// The statements themselves are in repositories/ledger.ts (balances) and
// repositories/reservationRows.ts (the rows); this file decides which run, in
// which transaction and order.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { LogType } from '../../common/roles';
import {
  applyTotals,
  giveBackHold,
  returnAllHeldQuota,
  returnToUser,
  takeFromToken,
  takeFromUser,
  usersHoldingQuota,
  type BalanceTotals,
  type BudgetSpend,
  type LedgerTotals,
  type MemberSpend,
} from '../repositories/ledger';
import { insertLogs, type NewLog } from '../repositories/logs';
import {
  deleteReservation,
  deleteReservations,
  insertReservation,
  lockReservation,
  lockReservations,
} from '../repositories/reservationRows';

export interface Reservation {
  /** The request's id (Admission.reservationId): the key of its reservation row on PostgreSQL and MySQL. */
  id?: string;
  userId: number;
  tokenId: number;
  limitedToken: boolean;
  amount: number;
}

export type ReserveResult = { ok: true } | { ok: false; reason: 'user' | 'token' };

/**
 * Holds `amount` on the user and, for a limited token, on the token: both or
 * neither, and only if each has it. Every reservation is its own conditional
 * UPDATE, so no two can spend the same quota, on one node or many.
 */
export async function reserveQuota(db: Kysely<Database>, reservation: Reservation): Promise<ReserveResult> {
  if (reservation.amount <= 0) return { ok: true };
  // one conditional UPDATE is atomic on its own: no BEGIN/COMMIT round trips on the hot path
  if (!reservation.limitedToken)
    return (await takeFromUser(db, reservation.userId, reservation.amount)) ? { ok: true } : { ok: false, reason: 'user' };
  return db.transaction().execute((transaction) => takeFromUserAndToken(transaction, reservation));
}

/** Inside a transaction: the user's part, then the token's; a token shortfall gives the user's part back. */
async function takeFromUserAndToken(transaction: Kysely<Database>, reservation: Reservation): Promise<ReserveResult> {
  const { userId, tokenId, amount } = reservation;
  if (!(await takeFromUser(transaction, userId, amount))) return { ok: false, reason: 'user' };
  if (!reservation.limitedToken) return { ok: true };
  if (await takeFromToken(transaction, tokenId, amount)) return { ok: true };
  await returnToUser(transaction, userId, amount);
  return { ok: false, reason: 'token' };
}

export interface Settlement {
  reservation: Reservation;
  /** The real cost of the request. */
  charge: number;
  channelId: number;
  /** Whether the request counts in the user's request_count. */
  countRequest: boolean;
  /** Its consume log, written in the settlement's transaction (absent when LogConsumeEnabled is off). */
  log?: NewLog;
  /** The budgets the charge counts in, by the start of their period (billing/budgets.ts); absent without any. */
  budget?: SettlementBudget;
}

/**
 * The periods (their starts, Unix seconds) whose spend a settlement's charge adds to: the key's and the user's
 * budgets; and for a member's key of an organisation, the member whose spend it adds to (with their period cap's start).
 */
export interface SettlementBudget {
  tokenStart?: number;
  userStart?: number;
  member?: { organizationId: number; userId: number; start?: number };
}

const addSpend = (spends: Map<number, BudgetSpend>, id: number, start: number | undefined, charge: number) => {
  if (start === undefined) return;
  const current = spends.get(id);
  if (!current || start > current.start) spends.set(id, { start, charge });
  else if (start === current.start) current.charge += charge;
};

const addTo = <K>(totals: Map<K, BalanceTotals>, key: K, refund: number, charge: number) => {
  const current = totals.get(key) ?? { refund: 0, charge: 0, requests: 0 };
  current.refund += refund;
  current.charge += charge;
  totals.set(key, current);
};

const byId = <T>(left: [number, T], right: [number, T]) => left[0] - right[0];

/** A charge of a member's key onto the member's spend: the lifetime spend always, the period's with a period cap. */
function addMemberSpend(spends: Map<string, MemberSpend>, member: NonNullable<SettlementBudget['member']>, charge: number) {
  if (charge === 0) return;
  const key = `${member.organizationId}:${member.userId}`;
  let current = spends.get(key);
  if (!current) {
    current = { organizationId: member.organizationId, userId: member.userId, charge: 0 };
    spends.set(key, current);
  }
  current.charge += charge;
  if (member.start === undefined) return;
  if (!current.period || member.start > current.period.start) current.period = { start: member.start, charge };
  else if (member.start === current.period.start) current.period.charge += charge;
}

/** A batch of settlements summed per user, token and channel, each list in ascending id order. */
export function settlementTotals(settlements: readonly Settlement[]): LedgerTotals {
  const users = new Map<number, BalanceTotals>();
  const limitedTokens = new Map<number, BalanceTotals>();
  const tokensUsed = new Map<number, number>();
  const channels = new Map<number, number>();
  const userSpends = new Map<number, BudgetSpend>();
  const tokenSpends = new Map<number, BudgetSpend>();
  const memberSpends = new Map<string, MemberSpend>();
  for (const { reservation, charge, channelId, countRequest, budget } of settlements) {
    if (budget) {
      addSpend(userSpends, reservation.userId, budget.userStart, charge);
      addSpend(tokenSpends, reservation.tokenId, budget.tokenStart, charge);
      if (budget.member) addMemberSpend(memberSpends, budget.member, charge);
    }
    addTo(users, reservation.userId, reservation.amount, charge);
    if (countRequest) users.get(reservation.userId)!.requests += 1;
    if (reservation.limitedToken) addTo(limitedTokens, reservation.tokenId, reservation.amount, charge);
    tokensUsed.set(reservation.tokenId, (tokensUsed.get(reservation.tokenId) ?? 0) + charge);
    if (charge > 0) channels.set(channelId, (channels.get(channelId) ?? 0) + charge);
  }
  // rows in ascending id order, the same on every node, so two batches cannot deadlock
  return {
    users: [...users].sort(byId),
    tokens: [...tokensUsed].sort(byId).map(([tokenId, used]) => ({ tokenId, used, limited: limitedTokens.get(tokenId) })),
    channels: [...channels].sort(byId),
    userSpends: [...userSpends].sort(byId),
    tokenSpends: [...tokenSpends].sort(byId),
    memberSpends: [...memberSpends.values()].sort(
      (left, right) => left.organizationId - right.organizationId || left.userId - right.userId,
    ),
  };
}

const logsOf = (settlements: readonly Settlement[]) => settlements.flatMap((settlement) => (settlement.log ? [settlement.log] : []));

/**
 * Replaces reservations by the real charges, for one request or many at once
 * (the relay settles in batches after answering): each reserved amount goes
 * back, each charge is taken, the counters move and the consume logs are
 * written, all in one transaction with one UPDATE per user, token and channel
 * concerned. A request that used nothing releases everything and counts
 * nothing. The failed requests of the batch go into the usage rollups beside
 * the logs'. Without reservation rows (SQLite): see settleReserved for the rest.
 */
export async function settleQuota(
  db: Kysely<Database>,
  settlements: readonly Settlement[],
  failures: readonly NewLog[] = [],
): Promise<void> {
  const totals = settlementTotals(settlements);
  await db.transaction().execute(async (transaction) => {
    // the logs and rollups first: the users' rows, which every reservation needs, stay locked the shortest time
    await insertLogs(transaction, [...logsOf(settlements), ...failures]);
    await applyTotals(transaction, totals);
  });
}

/** The states of a reservation row; a settled or released reservation has no row. */
export const ReservationState = {
  /** Its request is in flight. */
  held: 1,
  /** Its node's lease expired and another node gave the hold back: a late settlement only charges. */
  swept: 3,
} as const;

/**
 * settleQuota with reservation rows (PostgreSQL, MySQL): the batch's rows are
 * locked first (ascending id, as on every node), and each settlement is
 * applied by its row: held, as usual; swept (a live node already gave the hold
 * back), the charge alone; no row (settled already, released, or never
 * reserved), not at all. The rows go in the same transaction, so a batch
 * committed once and retried (its COMMIT's answer was lost) changes nothing
 * the second time. Read committed: MySQL's repeatable read would lock the gaps
 * beside missing ids and block other nodes' reservations.
 */
async function settleReserved(db: Kysely<Database>, settlements: readonly Settlement[], failures: readonly NewLog[]): Promise<void> {
  const ids = [...new Set(settlements.map((settlement) => settlement.reservation.id).filter((id): id is string => Boolean(id)))].sort();
  await db
    .transaction()
    .setIsolationLevel('read committed')
    .execute(async (transaction) => {
      const rows = ids.length === 0 ? [] : await lockReservations(transaction, ids);
      const byId = new Map(rows.map((row) => [row.id, row]));
      const applied: Settlement[] = [];
      for (const settlement of settlements) {
        const row = settlement.reservation.id === undefined ? undefined : byId.get(settlement.reservation.id);
        if (row === undefined) continue;
        // a settlement listed twice in one batch applies once
        byId.delete(row.id);
        // what goes back is what the row holds: the hold as taken, or nothing once swept
        const refund = Number(row.state) === ReservationState.held ? Number(row.amount) : 0;
        applied.push({ ...settlement, reservation: { ...settlement.reservation, amount: refund } });
      }
      if (rows.length > 0)
        await deleteReservations(
          transaction,
          rows.map((row) => row.id),
        );
      // the logs and rollups before the balances: the users' rows, which every reservation needs, stay locked the shortest time
      await insertLogs(transaction, [...logsOf(applied), ...failures]);
      await applyTotals(transaction, settlementTotals(applied));
    });
}

async function releaseReserved(db: Kysely<Database>, reservation: Reservation): Promise<void> {
  await db
    .transaction()
    .setIsolationLevel('read committed')
    .execute(async (transaction) => {
      const row = await lockReservation(transaction, reservation.id!);
      if (!row) return;
      await deleteReservation(transaction, reservation.id!);
      if (Number(row.state) === ReservationState.held) await giveBackHold(transaction, { ...reservation, amount: Number(row.amount) });
    });
}

/** Takes the user's part, the token's and writes the reservation's row, in one transaction. */
async function reserveWithRow(db: Kysely<Database>, nodeId: string, reservation: Reservation): Promise<ReserveResult> {
  const result = await db.transaction().execute(async (transaction) => {
    if (reservation.amount > 0) {
      const taken = await takeFromUserAndToken(transaction, reservation);
      if (!taken.ok) return taken;
    }
    await insertReservation(transaction, {
      id: reservation.id!,
      node_id: nodeId,
      user_id: reservation.userId,
      token_id: reservation.tokenId,
      limited: reservation.limitedToken ? 1 : 0,
      amount: Math.max(0, reservation.amount),
      state: ReservationState.held,
      created_at: Date.now(),
    });
    return { ok: true } as const;
  });
  return result;
}

export async function releaseQuota(db: Kysely<Database>, reservation: Reservation): Promise<void> {
  if (reservation.amount <= 0) return;
  if (!reservation.limitedToken) return giveBackHold(db, reservation);
  await db.transaction().execute((transaction) => giveBackHold(transaction, reservation));
}

/**
 * Gives back what requests still held when the process serving them died:
 * their reservations were committed, their settlements never came. Each user
 * and limited token gets its held_quota back, and each user a system log
 * saying so. Run at start, before any request is served, and only where no
 * other live process relays on the same database (a SQLite file whose
 * instance lock this process holds): another process's requests in flight
 * hold quota too, and would be paid back twice.
 */
export async function returnHeldQuota(db: Kysely<Database>): Promise<{ users: number; quota: number }> {
  return db.transaction().execute(async (transaction) => {
    const held = await usersHoldingQuota(transaction);
    await returnAllHeldQuota(transaction);
    await insertLogs(
      transaction,
      held.map((user) => ({
        userId: Number(user.id),
        username: user.username,
        type: LogType.system,
        content: `returned ${Number(user.held_quota)} quota held by requests that a restart cut off`,
        quota: Number(user.held_quota),
      })),
    );
    return { users: held.length, quota: held.reduce((sum, user) => sum + Number(user.held_quota), 0) };
  });
}

/**
 * Where the relay's own writes go: reservations, releases, batched
 * settlements and batched consume logs. PostgreSQL and MySQL go through
 * Kysely (kyselyLedger); SQLite has a faster ledger of its own (sqliteLedger.ts).
 */
export interface QuotaLedger {
  /** `alone`: no other relayed request is in flight, so none could share this reservation's transaction. */
  reserve(reservation: Reservation, hint?: { alone?: boolean }): Promise<ReserveResult>;
  release(reservation: Reservation): Promise<void>;
  /** `failures`: the error logs of relayed requests refused or failed, written (and counted in the usage rollups) in the same transaction. */
  settle(settlements: readonly Settlement[], failures?: readonly NewLog[]): Promise<void>;
  insertLogs(rows: readonly NewLog[]): Promise<void>;
  /** What this node holds free for the payer's new reservations, beyond the balance in the database (a quota lease). */
  freeFor?(payer: Pick<Reservation, 'userId' | 'tokenId' | 'limitedToken'>): number;
  /** Told at once when a request's settlement is queued, before settle() writes it (a ledger that holds quota in memory frees the hold then). */
  noteSettlement?(settlement: Settlement): void;
  /** Gives back whatever the ledger holds that no request needs now (idle, before a test reads balances). */
  quiesce?(): Promise<void>;
  /** At shutdown, after the last settlement: gives back everything still held. */
  close?(): Promise<void>;
}

export interface KyselyLedgerOptions {
  /**
   * Write a row per reservation (PostgreSQL, MySQL): settlement becomes
   * idempotent and a dead node's holds can be given back (nodeLease.ts).
   * Off on SQLite, whose ledger keeps no rows (sqliteLedger.ts).
   */
  reservationRows: boolean;
  /** The node the rows belong to (its lease in relay_nodes); required with reservationRows. */
  nodeId?: string;
}

/**
 * Each reservation its own transaction: a batch of them could take row locks
 * in an order that deadlocks with another node's batch.
 */
export function kyselyLedger(db: Kysely<Database>, options: KyselyLedgerOptions = { reservationRows: false }): QuotaLedger {
  const { nodeId } = options;
  if (!options.reservationRows || !nodeId) {
    return {
      reserve: (reservation) => reserveQuota(db, reservation),
      release: (reservation) => releaseQuota(db, reservation),
      settle: (settlements, failures) => settleQuota(db, settlements, failures),
      insertLogs: (rows) => insertLogs(db, rows),
    };
  }
  // a reservation without an id (a caller outside the relay routes) gets one, so its row can exist
  let counter = 0;
  const withId = (reservation: Reservation) => {
    if (!reservation.id) reservation.id = `${nodeId}-l${(counter += 1).toString(36)}`;
    return reservation;
  };
  return {
    async reserve(reservation) {
      try {
        return await reserveWithRow(db, nodeId, withId(reservation));
      } catch (error) {
        // a COMMIT whose answer was lost may have taken the quota: the row says so, and a release undoes it once
        await releaseReserved(db, reservation).catch(() => undefined);
        throw error;
      }
    },
    release: (reservation) => releaseReserved(db, withId(reservation)),
    settle: (settlements, failures = []) => settleReserved(db, settlements, failures),
    insertLogs: (rows) => insertLogs(db, rows),
  };
}
