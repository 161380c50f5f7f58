// Counts of relayed requests in flight per API key and per user that every
// process serving them shares, so a limit holds across WORKERS=N and across
// nodes instead of multiplying with them. The relay's limiter
// (relay/concurrency.ts) always keeps this process's own counts too; it asks
// a shared count below only for a caller that has a limit, so a caller
// without one costs nothing more than it did.
//
// With Redis, each place is a member of two sorted sets, the key's and its
// user's (one hash tag per user, so a Redis Cluster keeps both on one shard),
// scored by when the place expires. One Lua script drops the expired members,
// counts, and either refuses or adds the member to both sets, atomically and
// on Redis's clock (nodes' clocks need not agree). A request removes its
// member when it ends; while it runs, its process renews the expiry of every
// member it holds each third of the lease (one script call per key held, not
// one per request). A process that dies (SIGKILL, a lost machine) renews
// nothing, so its places drop out of the counts once their lease runs out.
// Members per request were chosen over per-node counters in a hash: those
// need each node's liveness checked inside the script (a heartbeat key of its
// own, on another shard) and a dead node's count is only as exact as its last
// write, while a member per request gives an exact count and an expiry per
// place with no node registry, for a few dozen bytes per request in flight.
//
// A Redis command that fails or outlasts the client's command timeout leaves
// the place uncounted in Redis as far as the caller knows: it counts without
// Redis instead (below), and skips Redis for a second. Should Redis have taken
// the place anyway, the member is removed at once or, if that fails too,
// expires with its lease since nobody renews it. A request that ends while
// Redis is away has its member removed as soon as Redis answers again.
//
// Without Redis (or while it is down) under WORKERS=N, the primary process
// holds the counts: a worker asks it over the cluster's IPC channel, each ask
// with an id, and counts on its own when no answer comes within a short wait.
// An answer that comes after that wait and took a place is given back at
// once. The primary drops every place of a worker that exits.
//
// One process without Redis needs none of this: its own counts are the truth.
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What a caller asks for: a place under both limits (Infinity for none). */
export interface PlaceAsk {
  tokenId: number;
  userId: number;
  tokenLimit: number;
  userLimit: number;
}

/** A refusal: which limit is full, and how many requests hold it everywhere. */
export interface PlaceRefusal {
  scope: 'token' | 'user';
  count: number;
}

/** A place taken in a shared count; `give()` hands it back once. */
export interface PlaceTaken {
  give(): void;
}

/** A shared count's answer; undefined when it could not answer (unreachable, too slow): the caller counts on its own then. */
export type PlaceAnswer = PlaceTaken | PlaceRefusal | undefined;

export interface SharedPlaces {
  /** How the log names it. */
  readonly name: string;
  take(ask: PlaceAsk): Promise<PlaceAnswer>;
}

export const isRefusal = (answer: PlaceTaken | PlaceRefusal): answer is PlaceRefusal => 'scope' in answer;

/** A limit as the scripts and messages carry it: -1 for none (JSON has no Infinity). */
const wire = (limit: number) => (Number.isFinite(limit) ? limit : -1);

// ---- Redis ----

/** How long a place in Redis lasts unless its process renews it (each third of it). */
export const PLACE_LEASE_MS = 30_000;
/** After a failed Redis command, how long places are counted without Redis before trying it again. */
const REDIS_RETRY_AFTER_MS = 1000;

/** A script's `now` in ms: ARGV[1] when given (tests move the clock), else Redis's own, the same for every node. */
const SCRIPT_CLOCK = `
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
`;

/**
 * KEYS: the key's set, the user's set. ARGV: now ('' = Redis's clock), lease
 * ms, key limit, user limit (-1 = none), member. Returns {1} when taken, else
 * {0, 1 (the key's limit) or 2 (the user's), the count in that set}.
 */
const TAKE_SCRIPT = `${SCRIPT_CLOCK}local lease = tonumber(ARGV[2])
local limits = { tonumber(ARGV[3]), tonumber(ARGV[4]) }
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now))
  local count = redis.call('ZCARD', key)
  if limits[i] >= 0 and count >= limits[i] then return { 0, i, count } end
end
local expires = string.format('%.0f', now + lease)
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, expires, ARGV[5])
  if redis.call('PTTL', key) < lease then redis.call('PEXPIRE', key, lease) end
end
return { 1 }
`;

/** KEYS: the two sets. ARGV: now ('' = Redis's clock), lease ms, members: each expires a lease from now (and is back if it had expired: its request still runs). */
const RENEW_SCRIPT = `${SCRIPT_CLOCK}local lease = tonumber(ARGV[2])
local expires = string.format('%.0f', now + lease)
for i = 3, #ARGV do
  for _, key in ipairs(KEYS) do redis.call('ZADD', key, expires, ARGV[i]) end
end
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < lease then redis.call('PEXPIRE', key, lease) end
end
return 1
`;

/** KEYS: the two sets. ARGV[1]: the member, removed from both. */
const GIVE_SCRIPT = `for _, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[1]) end
return 1
`;

type ScriptedRedis = Redis & {
  switchboardPlaceTake(keyCount: number, ...args: string[]): Promise<number[]>;
  switchboardPlaceRenew(keyCount: number, ...args: string[]): Promise<number>;
  switchboardPlaceGive(keyCount: number, ...args: string[]): Promise<number>;
};

function scripted(redis: Redis): ScriptedRedis {
  const client = redis as ScriptedRedis;
  if (typeof client.switchboardPlaceTake !== 'function') {
    redis.defineCommand('switchboardPlaceTake', { lua: TAKE_SCRIPT });
    redis.defineCommand('switchboardPlaceRenew', { lua: RENEW_SCRIPT });
    redis.defineCommand('switchboardPlaceGive', { lua: GIVE_SCRIPT });
  }
  return client;
}

/** The two sets of a key: its own and its user's, under the user's hash tag. */
export function placeKeys(keyPrefix: string, userId: number, tokenId: number): [string, string] {
  const user = `${keyPrefix}cc:{u${userId}}`;
  return [`${user}:k${tokenId}`, user];
}

/** One take by the script; `now` (ms) only where a test moves the clock, else Redis's own. */
export async function redisTakePlace(
  redis: Redis,
  keys: [string, string],
  member: string,
  ask: Pick<PlaceAsk, 'tokenLimit' | 'userLimit'>,
  leaseMs: number,
  now?: number,
): Promise<true | PlaceRefusal> {
  const reply = await scripted(redis).switchboardPlaceTake(
    2,
    ...keys,
    now === undefined ? '' : String(now),
    String(leaseMs),
    String(wire(ask.tokenLimit)),
    String(wire(ask.userLimit)),
    member,
  );
  if (Number(reply[0]) === 1) return true;
  return { scope: Number(reply[1]) === 1 ? 'token' : 'user', count: Number(reply[2]) };
}

/** Renews `members` (`now` as above). */
export function redisRenewPlaces(redis: Redis, keys: [string, string], members: string[], leaseMs: number, now?: number): Promise<number> {
  return scripted(redis).switchboardPlaceRenew(2, ...keys, now === undefined ? '' : String(now), String(leaseMs), ...members);
}

/** Removes a member from both sets. */
export function redisGivePlace(redis: Redis, keys: [string, string], member: string): Promise<number> {
  return scripted(redis).switchboardPlaceGive(2, ...keys, member);
}

/** The counts in Redis, shared by every node and worker using it. */
export class RedisPlaces implements SharedPlaces {
  readonly name = 'Redis';
  /** Names this process's members apart from every other's. */
  private readonly holder = randomBytes(6).toString('hex');
  private sequence = 0;
  /** The members this process holds, by the key's set: renewed while their requests run. */
  private readonly held = new Map<string, { keys: [string, string]; members: Set<string> }>();
  /** Places whose requests ended while Redis could not be told, given back once it answers (else their lease runs out). */
  private ungiven: Array<{ keys: [string, string]; member: string; at: number }> = [];
  private renewal?: NodeJS.Timeout;
  private skippedUntil = 0;

  constructor(
    private readonly redis: Redis,
    /** Prefixes every key (deployments, or test runs, sharing one Redis). */
    private readonly keyPrefix = '',
    private readonly leaseMs = PLACE_LEASE_MS,
  ) {
    // back from an outage: what ended meanwhile stops counting now, not when its lease runs out
    redis.on('ready', () => this.giveUngiven());
  }

  async take(ask: PlaceAsk): Promise<PlaceAnswer> {
    // a client that is not connected would only fail, and one that just timed out would likely again: skip the attempt
    if (this.redis.status !== 'ready' || Date.now() < this.skippedUntil) return undefined;
    const keys = placeKeys(this.keyPrefix, ask.userId, ask.tokenId);
    const member = `${this.holder}:${(this.sequence += 1)}`;
    let taken: true | PlaceRefusal;
    try {
      taken = await redisTakePlace(this.redis, keys, member, ask, this.leaseMs);
    } catch {
      this.skippedUntil = Date.now() + REDIS_RETRY_AFTER_MS;
      // a take that timed out may still have run: remove it (nobody renews it, so at worst its lease runs out)
      this.give(keys, member, Date.now());
      return undefined;
    }
    if (taken !== true) return taken;
    this.hold(keys, member);
    let given = false;
    return {
      give: () => {
        if (given) return;
        given = true;
        this.release(keys, member);
      },
    };
  }

  /** Members held now (tests). */
  heldCount(): number {
    let count = 0;
    for (const group of this.held.values()) count += group.members.size;
    return count;
  }

  /** Places waiting to be given back (tests). */
  ungivenCount(): number {
    return this.ungiven.length;
  }

  private hold(keys: [string, string], member: string): void {
    let group = this.held.get(keys[0]);
    if (!group) {
      group = { keys, members: new Set() };
      this.held.set(keys[0], group);
    }
    group.members.add(member);
    this.renewing();
  }

  /** The renewal runs while this process holds places, or has some to give back. */
  private renewing(): void {
    const wanted = this.held.size > 0 || this.ungiven.length > 0;
    if (wanted && !this.renewal) {
      this.renewal = setInterval(() => this.renew(), Math.max(1, Math.floor(this.leaseMs / 3)));
      this.renewal.unref();
    } else if (!wanted && this.renewal) {
      clearInterval(this.renewal);
      this.renewal = undefined;
    }
  }

  private release(keys: [string, string], member: string): void {
    const group = this.held.get(keys[0]);
    group?.members.delete(member);
    if (group?.members.size === 0) this.held.delete(keys[0]);
    this.give(keys, member, Date.now());
    this.renewing();
  }

  /** Removes a member from Redis, or keeps it to try again once Redis answers (as long as its lease would still count it). */
  private give(keys: [string, string], member: string, at: number): void {
    const later = () => {
      if (Date.now() - at >= this.leaseMs) return;
      this.ungiven.push({ keys, member, at });
      this.renewing();
    };
    if (this.redis.status !== 'ready') later();
    else redisGivePlace(this.redis, keys, member).catch(later);
  }

  private giveUngiven(): void {
    if (this.ungiven.length === 0 || this.redis.status !== 'ready') return;
    const waiting = this.ungiven;
    this.ungiven = [];
    for (const { keys, member, at } of waiting) this.give(keys, member, at);
    this.renewing();
  }

  private renew(): void {
    if (this.ungiven.length > 0) {
      const now = Date.now();
      this.ungiven = this.ungiven.filter((place) => now - place.at < this.leaseMs);
      this.renewing();
    }
    if (this.redis.status !== 'ready') return;
    this.giveUngiven();
    for (const { keys, members } of this.held.values())
      redisRenewPlaces(this.redis, keys, [...members], this.leaseMs).catch(() => undefined);
  }
}

// ---- the primary process, over the cluster's IPC channel ----

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
function primaryPlaces(): IpcPlaces {
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

/**
 * The shared counts a process uses, in the order it asks them: Redis when
 * configured, then, in a cluster worker, the primary. None in a lone
 * process without Redis.
 */
export function sharedPlaces(redis: Redis | undefined, keyPrefix = ''): SharedPlaces[] {
  const places: SharedPlaces[] = [];
  if (redis) places.push(new RedisPlaces(redis, keyPrefix));
  if (cluster.isWorker) places.push(primaryPlaces());
  return places;
}
