// A quota lease as this node holds it in memory (leaseLedger.ts), and the
// shapes of asking for one: the requests waiting on a key's lease, and what
// taking it gave them.
import type { Reservation, ReserveResult } from './quota';

/** A block of a user's (and a limited key's) quota this node took, and holds on it in flight. */
export class Lease {
  /** What new holds may take. */
  free = 0;
  /** Holds in flight. */
  holds = 0;
  /** Settlements freed in memory whose charge is not written yet. */
  unwritten = 0;
  /** What its holds took over its life: the next lease's size. */
  heldTotal = 0;
  retired = false;
  lastUsedAt: number;

  constructor(
    readonly id: string,
    readonly key: string,
    readonly userId: number,
    readonly tokenId: number,
    readonly limited: boolean,
    amount: number,
    readonly createdAt: number,
  ) {
    this.free = amount;
    this.lastUsedAt = createdAt;
  }

  /** Given back in the next batch: retired, no hold in flight, every charge written. */
  get returnable(): boolean {
    return this.retired && this.holds === 0 && this.unwritten === 0;
  }
}

/** A request's hold on a lease, in memory. */
export interface Hold {
  lease: Lease;
  amount: number;
}

/** A request waiting for its key's next lease. */
export interface Waiter {
  reservation: Reservation;
  resolve: (result: ReserveResult) => void;
  reject: (error: unknown) => void;
}

/** The requests waiting for one key's lease, taken together in the next transaction. */
export interface Wanted {
  key: string;
  userId: number;
  tokenId: number;
  limited: boolean;
  waiters: Waiter[];
}

/** What taking a lease gave: the lease, or which balance refused. */
export interface Taken {
  wanted: Wanted;
  lease?: Lease;
  refused?: 'user' | 'token';
}

/** A lease's key: the user's, or the user's and the limited key's. */
export const keyOf = (reservation: Pick<Reservation, 'userId' | 'tokenId' | 'limitedToken'>) =>
  reservation.limitedToken ? `${reservation.userId}:${reservation.tokenId}` : `${reservation.userId}`;
export const ascending = (left: number, right: number) => left - right;
