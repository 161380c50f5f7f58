// The shared counts of requests in flight (sharedConcurrency.ts) kept in
// Redis, shared by every node and worker using it.
//
// Each place is a member of two sorted sets, the key's and its user's (one
// hash tag per user, so a Redis Cluster keeps both on one shard),
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
// Redis instead (ipcPlaces.ts, or on its own), and skips Redis for a second. Should Redis have taken
// the place anyway, the member is removed at once or, if that fails too,
// expires with its lease since nobody renews it. A request that ends while
// Redis is away has its member removed as soon as Redis answers again.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { wire, type PlaceAnswer, type PlaceAsk, type PlaceRefusal, type SharedPlaces } from './places';

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
