// Leases of the relay nodes sharing a PostgreSQL or MySQL database. Each node
// registers under a random id in relay_nodes and renews its lease every few
// seconds; every reservation row it writes names it (quota.ts). A node that
// stops renewing (killed, frozen, cut off from the database) loses its
// reservations still held once its lease has run out: a live node gives each
// back to its user and limited token, marks it swept and logs it for the user.
// Row locks make that happen once even when several nodes sweep together, and
// a settlement that comes late for a swept reservation takes the charge alone.
// A node that finds its own lease row gone registers again.
//
// SQLite needs none of this: one process per file, whose instance lock is the
// lease, and what it held comes back at the next start (returnHeldQuota).
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { LogType } from '../../common/roles';
import type { Database } from '../db/database';
import { insertLogs } from '../repositories/logs';
import {
  deleteNodeRow,
  forgetExpiredRows,
  heldReservationsOfDeadNodes,
  inSweepTransaction,
  insertNodeRow,
  markReservations,
  renewNodeRow,
  returnTokenHold,
  returnUserHold,
  usernamesOf,
} from '../repositories/relayNodes';
import { ReservationState } from '../billing/quota';
import type { JobRunner } from '../services/jobRunner';

export const DEFAULT_NODE_LEASE_SECONDS = 30;
export const DEFAULT_NODE_RENEW_SECONDS = 5;
/** Swept reservations nobody settled are forgotten after this long. */
const SWEPT_ROWS_KEPT_MS = 24 * 3600 * 1000;

/** A node's id: random, so a restarted process is a new node and never renews a dead one's lease. */
export const newNodeId = () => randomBytes(8).toString('hex');

/** Request ids of one node: its id and a counter, unique across nodes and cheap to make. */
export function requestIdsOf(nodeId: string): () => string {
  let counter = 0;
  return () => `req_${nodeId}_${(counter += 1).toString(36)}`;
}

export interface LeaseSettings {
  leaseMs: number;
  renewMs: number;
}

/** NODE_LEASE_SECONDS and NODE_LEASE_RENEW_SECONDS, or the defaults (30 s, 5 s). */
export function leaseSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LeaseSettings {
  const seconds = (value: string | undefined, fallback: number) => {
    const parsed = Number(value);
    return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
  };
  const leaseSeconds = seconds(env.NODE_LEASE_SECONDS, DEFAULT_NODE_LEASE_SECONDS);
  const renewSeconds = Math.min(seconds(env.NODE_LEASE_RENEW_SECONDS, DEFAULT_NODE_RENEW_SECONDS), leaseSeconds / 3);
  return { leaseMs: Math.round(leaseSeconds * 1000), renewMs: Math.round(renewSeconds * 1000) };
}

/** Renews this node's lease, registering it again if its row is gone; whether it had to. */
export async function renewLease(db: Kysely<Database>, nodeId: string, leaseMs: number, now = Date.now()): Promise<boolean> {
  if (await renewNodeRow(db, nodeId, now + leaseMs)) return false;
  await insertNodeRow(db, nodeId, now + leaseMs, now);
  return true;
}

export interface SweepResult {
  reservations: number;
  quota: number;
  users: number;
}

/**
 * Gives back, once, what reservations still held by nodes without a live
 * lease hold. A reservation younger than a lease is left alone: its node may
 * have just registered again after losing its row.
 */
export async function sweepDeadNodes(db: Kysely<Database>, leaseMs: number, now = Date.now()): Promise<SweepResult> {
  return inSweepTransaction(db, async (transaction) => {
    // locked in id order, as settlements lock them; a sweep that waited for another re-reads the state and skips what it swept
    const held = await heldReservationsOfDeadNodes(transaction, { now, before: now - leaseMs, held: ReservationState.held });
    await forgetExpiredRows(transaction, { now, keptSince: now - SWEPT_ROWS_KEPT_MS, swept: ReservationState.swept });
    if (held.length === 0) return { reservations: 0, quota: 0, users: 0 };
    const marked = await markReservations(
      transaction,
      held.map((row) => row.id),
      ReservationState.held,
      ReservationState.swept,
    );
    // a row that changed under us means another sweep or a settlement got there first: undo all, try next time
    if (marked !== held.length) throw new Error('reservations changed during the sweep');
    const users = await giveBackSwept(transaction, held);
    return { reservations: held.length, quota: held.reduce((sum, row) => sum + Number(row.amount), 0), users };
  });
}

/** A swept reservation: what it held, and of whom. */
type SweptRow = Awaited<ReturnType<typeof heldReservationsOfDeadNodes>>[number];

/** Gives the swept reservations' quota back to their users and limited tokens, and logs it for each user; how many users. */
async function giveBackSwept(transaction: Transaction<Database>, held: SweptRow[]): Promise<number> {
  const users = new Map<number, { amount: number; nodes: Set<string> }>();
  const tokens = new Map<number, number>();
  for (const row of held) {
    const amount = Number(row.amount);
    const user = users.get(Number(row.user_id)) ?? { amount: 0, nodes: new Set<string>() };
    user.amount += amount;
    user.nodes.add(row.node_id);
    users.set(Number(row.user_id), user);
    if (Number(row.limited) === 1) tokens.set(Number(row.token_id), (tokens.get(Number(row.token_id)) ?? 0) + amount);
  }
  const userIds = [...users.keys()].sort((left, right) => left - right);
  // a quota lease whose charges overran it holds less than nothing: it goes back all the same, taking the overrun off the balance
  for (const userId of userIds) {
    const { amount } = users.get(userId)!;
    if (amount !== 0) await returnUserHold(transaction, userId, amount);
  }
  for (const tokenId of [...tokens.keys()].sort((left, right) => left - right)) {
    const amount = tokens.get(tokenId)!;
    if (amount !== 0) await returnTokenHold(transaction, tokenId, amount);
  }
  const names = userIds.length === 0 ? [] : await usernamesOf(transaction, userIds);
  const nameOf = new Map(names.map((row) => [Number(row.id), row.username]));
  await insertLogs(
    transaction,
    userIds
      .filter((userId) => users.get(userId)!.amount > 0)
      .map((userId) => {
        const { amount, nodes } = users.get(userId)!;
        return {
          userId,
          username: nameOf.get(userId) ?? '',
          type: LogType.system,
          content: `returned ${amount} quota held by requests that node ${[...nodes].sort().join(', ')} cut off`,
          quota: amount,
        };
      }),
  );
  return userIds.length;
}

export interface NodeLease {
  nodeId: string;
  stop(): Promise<void>;
}

/**
 * Registers the node, sweeps once, then renews and sweeps every renewMs. A
 * database that does not answer is logged and tried again next round; it
 * never stops the node. Each node renews its own lease; the sweep runs on
 * one node at a time, under the job lease `reservation-sweep` (row locks
 * would keep two sweeps exact anyway; the lease saves the others the work).
 */
export async function startNodeLease(
  db: Kysely<Database>,
  nodeId: string,
  settings: LeaseSettings,
  log: { warn: (object: object, message: string) => void; info: (object: object, message: string) => void },
  jobs?: JobRunner,
  /** Told when the node finds its lease row gone: what it held may have been swept. */
  onLost?: () => void,
): Promise<NodeLease> {
  await renewLease(db, nodeId, settings.leaseMs);
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const round = async () => {
    try {
      if (await renewLease(db, nodeId, settings.leaseMs)) {
        log.warn({ nodeId }, 'this node had lost its lease and registered again');
        onLost?.();
      }
    } catch (error) {
      log.warn({ err: error }, 'could not renew the node lease');
    }
    try {
      const sweep = () => sweepDeadNodes(db, settings.leaseMs);
      const swept = jobs ? await jobs.runPeriodic('reservation-sweep', settings.renewMs, sweep) : await sweep();
      if (swept && swept.reservations > 0)
        log.info(swept, `returned ${swept.quota} quota held by ${swept.reservations} request(s) of nodes whose lease expired`);
    } catch (error) {
      log.warn({ err: error }, 'could not sweep the reservations of dead nodes');
    }
  };
  await round();
  const timer = setInterval(() => {
    if (!stopped) running = running.then(round);
  }, settings.renewMs);
  timer.unref();
  return {
    nodeId,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      // a clean stop leaves nothing held (bookkeeping has flushed): the row can go at once
      await deleteNodeRow(db, nodeId).catch(() => undefined);
    },
  };
}
