// The shared counts of requests in flight (sharedConcurrency.ts) kept by the
// primary process. Without Redis (or while it is down) under WORKERS=N, the
// primary process holds the counts: a worker asks it over the cluster's IPC channel, each ask
// with an id, and counts on its own when no answer comes within a short wait.
// An answer that comes after that wait and took a place is given back at
// once. The primary drops every place of a worker that exits.
import cluster, { type Worker } from 'node:cluster';
import { wire, type PlaceAnswer, type PlaceAsk, type PlaceRefusal, type SharedPlaces } from './places';

/** How long a worker waits for the primary's answer before counting on its own. */
export const IPC_ANSWER_MS = 250;

/** Messages between a worker and the primary; the `sb` tag keeps them apart from any other IPC. */
export type PlaceMessage =
  | { sb: 'places-take'; id: number; tokenId: number; userId: number; tokenLimit: number; userLimit: number }
  | { sb: 'places-answer'; id: number; tokenId: number; userId: number; taken: boolean; scope?: PlaceRefusal['scope']; count?: number }
  | { sb: 'places-give'; tokenId: number; userId: number };

const isPlaceMessage = (value: unknown): value is PlaceMessage =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { sb?: unknown }).sb === 'string' &&
  (value as { sb: string }).sb.startsWith('places-');

/** The primary's counts: every worker's places, by key and by user, and by worker so a dead one's can be dropped. */
export class PlaceCoordinator {
  readonly byToken = new Map<number, number>();
  readonly byUser = new Map<number, number>();
  /** By worker, then by token id: how many places it holds, and the key's user. */
  private readonly byWorker = new Map<number, Map<number, { userId: number; count: number }>>();

  /** Takes a place for a worker, or says which limit is full (nothing taken then). Limits: -1 or Infinity for none. */
  take(worker: number, ask: PlaceAsk): PlaceRefusal | undefined {
    const tokenCount = this.byToken.get(ask.tokenId) ?? 0;
    if (ask.tokenLimit >= 0 && tokenCount >= ask.tokenLimit) return { scope: 'token', count: tokenCount };
    const userCount = this.byUser.get(ask.userId) ?? 0;
    if (ask.userLimit >= 0 && userCount >= ask.userLimit) return { scope: 'user', count: userCount };
    this.byToken.set(ask.tokenId, tokenCount + 1);
    this.byUser.set(ask.userId, userCount + 1);
    let held = this.byWorker.get(worker);
    if (!held) {
      held = new Map();
      this.byWorker.set(worker, held);
    }
    const entry = held.get(ask.tokenId);
    if (entry) entry.count += 1;
    else held.set(ask.tokenId, { userId: ask.userId, count: 1 });
    return undefined;
  }

  /** A worker gives one of its places back; one it does not hold (dropped already) changes nothing. */
  give(worker: number, tokenId: number): void {
    const held = this.byWorker.get(worker);
    const entry = held?.get(tokenId);
    if (!held || !entry) return;
    entry.count -= 1;
    if (entry.count === 0) held.delete(tokenId);
    if (held.size === 0) this.byWorker.delete(worker);
    decrement(this.byToken, tokenId, 1);
    decrement(this.byUser, entry.userId, 1);
  }

  /** A worker exited: every place it held is free. */
  dropWorker(worker: number): void {
    const held = this.byWorker.get(worker);
    if (!held) return;
    this.byWorker.delete(worker);
    for (const [tokenId, { userId, count }] of held) {
      decrement(this.byToken, tokenId, count);
      decrement(this.byUser, userId, count);
    }
  }

  /** Answers one message from a worker; `reply` sends to that worker. */
  handle(worker: number, message: unknown, reply: (answer: PlaceMessage) => void): void {
    if (!isPlaceMessage(message)) return;
    if (message.sb === 'places-give') this.give(worker, message.tokenId);
    else if (message.sb === 'places-take') {
      const refused = this.take(worker, message);
      reply({ sb: 'places-answer', id: message.id, tokenId: message.tokenId, userId: message.userId, taken: !refused, ...refused });
    }
  }
}

function decrement(counts: Map<number, number>, id: number, by: number): void {
  const count = (counts.get(id) ?? 0) - by;
  if (count > 0) counts.set(id, count);
  else counts.delete(id);
}

/** Primary side: holds the workers' counts, and drops a worker's places when it exits. */
export function serveSharedPlaces(coordinator = new PlaceCoordinator()): PlaceCoordinator {
  cluster.on('message', (worker: Worker, message: unknown) =>
    coordinator.handle(worker.id, message, (answer) => {
      if (worker.isConnected()) worker.send(answer);
    }),
  );
  cluster.on('exit', (worker: Worker) => coordinator.dropWorker(worker.id));
  return coordinator;
}

/** How a worker talks to its primary (the process's IPC channel; a fake in tests). */
export interface PlaceChannel {
  /** Sends, or says false when the channel is closed (nothing sent). */
  send(message: PlaceMessage): boolean;
  onMessage(listener: (message: unknown) => void): void;
}

/** Worker side: asks the primary for places. */
export class IpcPlaces implements SharedPlaces {
  readonly name = 'the primary process';
  private lastId = 0;
  private readonly waiting = new Map<number, (answer: PlaceAnswer) => void>();

  constructor(
    private readonly channel: PlaceChannel,
    private readonly answerMs = IPC_ANSWER_MS,
  ) {
    channel.onMessage((message) => this.answered(message));
  }

  take(ask: PlaceAsk): Promise<PlaceAnswer> {
    const id = (this.lastId += 1);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // too late from here on: a place the primary takes after this is given back as its answer comes
        this.waiting.delete(id);
        resolve(undefined);
      }, this.answerMs);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      let sent = false;
      try {
        sent = this.channel.send({
          sb: 'places-take',
          id,
          tokenId: ask.tokenId,
          userId: ask.userId,
          tokenLimit: wire(ask.tokenLimit),
          userLimit: wire(ask.userLimit),
        });
      } catch {
        // the channel is closed (the primary is gone): counted here
      }
      if (!sent) {
        this.waiting.delete(id);
        clearTimeout(timer);
        resolve(undefined);
      }
    });
  }

  private answered(message: unknown): void {
    if (!isPlaceMessage(message) || message.sb !== 'places-answer') return;
    const resolve = this.waiting.get(message.id);
    if (resolve) this.waiting.delete(message.id);
    if (!message.taken) {
      resolve?.({ scope: message.scope ?? 'token', count: message.count ?? 0 });
      return;
    }
    const { tokenId, userId } = message;
    const give = () => {
      try {
        this.channel.send({ sb: 'places-give', tokenId, userId });
      } catch {
        // the primary is gone, and its counts with it
      }
    };
    if (!resolve) give();
    else {
      let given = false;
      resolve({
        give: () => {
          if (given) return;
          given = true;
          give();
        },
      });
    }
  }
}

let workerPlaces: IpcPlaces | undefined;

/** This worker's link to the primary's counts (one per process: it listens on the process's channel). */
export function primaryPlaces(): IpcPlaces {
  workerPlaces ??= new IpcPlaces({
    // process.send's own false only means a backlog (the message still goes): what matters is whether the channel is open
    send: (message) => {
      if (!process.connected || !process.send) return false;
      process.send(message);
      return true;
    },
    onMessage: (listener) => process.on('message', listener),
  });
  return workerPlaces;
}
