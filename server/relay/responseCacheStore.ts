// Where the exact response cache (responseCache.ts) keeps its answers: Redis
// when the node has one, so every node shares them, else the database
// (repositories/responseCache.ts, migration 0032). Each entry lives for the
// TTL it was stored with; over the total cap the oldest entries go first.
// In Redis an entry is a string with its own expiry, beside a sorted set of
// the keys by the time they were stored, a hash of their sizes and a running
// total, so the oldest can be found and removed without a scan.
//
// In front of either, each node keeps the entries it stored or read lately,
// decoded, in memory (at most MEMORY_BYTES, and never more than the total
// cap): a hit then costs no round trip. An entry is never changed under its
// key, only replaced by a fresh answer (no-cache) or removed, so a node's copy
// is the same answer until it expires; another node may serve the older one
// until then.
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { cachedEntry, clearEntries, storeEntry } from '../repositories/responseCache';

/** One stored answer: whole (`body`) or a stream's chunks in the order they came (`chunks`), base64. */
export interface CachedAnswer {
  status: number;
  contentType: string;
  body?: string;
  chunks?: string[];
  /** The channel that made it (the log of a hit names it in its details). */
  channelId: number;
  /** Milliseconds: past it the entry is a miss. */
  expiresAt?: number;
}

/** An entry as a hit replays it: its bytes decoded. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body?: Buffer;
  chunks?: Buffer[];
  channelId: number;
  expiresAt: number;
}

/** How long an entry lives and how much the cache may hold, in milliseconds and bytes. */
export interface StoreLimits {
  ttlMs: number;
  maxTotalBytes: number;
}

export interface ResponseCacheStore {
  readonly kind: 'redis' | 'database';
  get(key: string): Promise<StoredAnswer | undefined>;
  /** Stores an entry (the caller has checked it against the per-entry cap). */
  put(key: string, answer: CachedAnswer, limits: StoreLimits): Promise<void>;
  clear(): Promise<void>;
}

/** Where the entries are kept for good: Redis or the database, serialised. */
interface SharedStore {
  kind: ResponseCacheStore['kind'];
  get(key: string): Promise<CachedAnswer | undefined>;
  put(key: string, entry: string, size: number, limits: StoreLimits): Promise<void>;
  clear(): Promise<void>;
}

/** The most a node keeps decoded in memory, in bytes (its serialised size). */
const MEMORY_BYTES = 64 * 1024 * 1024;

/** The node's store: Redis when it has a client, else the database, with the node's recent entries in memory. */
export function responseCacheStore(db: Kysely<Database>, redis: Redis | undefined, prefix = ''): ResponseCacheStore {
  return withMemory(redis ? redisStore(redis, prefix) : databaseStore(db));
}

function decoded(answer: CachedAnswer, expiresAt: number): StoredAnswer {
  return {
    status: answer.status,
    contentType: answer.contentType,
    channelId: answer.channelId,
    expiresAt,
    body: answer.body === undefined ? undefined : Buffer.from(answer.body, 'base64'),
    chunks: answer.chunks?.map((chunk) => Buffer.from(chunk, 'base64')),
  };
}

function withMemory(shared: SharedStore): ResponseCacheStore {
  /** Oldest first (a Map keeps the order entries came in). */
  const memory = new Map<string, { answer: StoredAnswer; size: number }>();
  let held = 0;
  let cap = MEMORY_BYTES;
  const drop = (key: string) => {
    const kept = memory.get(key);
    if (!kept) return;
    held -= kept.size;
    memory.delete(key);
  };
  const keep = (key: string, answer: StoredAnswer, size: number) => {
    drop(key);
    memory.set(key, { answer, size });
    held += size;
    for (const oldest of memory.keys()) {
      if (held <= cap) break;
      drop(oldest);
    }
  };
  return {
    kind: shared.kind,
    get: async (key) => {
      const kept = memory.get(key);
      if (kept && kept.answer.expiresAt > Date.now()) return kept.answer;
      drop(key);
      const found = await shared.get(key);
      if (!found?.expiresAt || found.expiresAt <= Date.now()) return undefined;
      const answer = decoded(found, found.expiresAt);
      keep(key, answer, JSON.stringify(found).length);
      return answer;
    },
    put: async (key, answer, limits) => {
      const expiresAt = Date.now() + limits.ttlMs;
      const entry = JSON.stringify({ ...answer, expiresAt });
      const size = Buffer.byteLength(entry);
      cap = Math.min(MEMORY_BYTES, limits.maxTotalBytes);
      if (size <= cap) keep(key, decoded(answer, expiresAt), size);
      else drop(key);
      await shared.put(key, entry, size, limits);
    },
    clear: async () => {
      memory.clear();
      held = 0;
      await shared.clear();
    },
  };
}

const parsed = (text: string | null | undefined): CachedAnswer | undefined => (text ? (JSON.parse(text) as CachedAnswer) : undefined);

function databaseStore(db: Kysely<Database>): SharedStore {
  return {
    kind: 'database',
    get: async (key) => parsed(await cachedEntry(db, key, Date.now())),
    put: async (key, entry, size, limits) => {
      const now = Date.now();
      await storeEntry(db, { key, entry, size, createdAt: now, expiresAt: now + limits.ttlMs }, limits.maxTotalBytes);
    },
    clear: () => clearEntries(db),
  };
}

/** How many of the oldest entries one round of trimming looks at. */
const TRIM_BATCH = 100;

function redisStore(redis: Redis, prefix: string): SharedStore {
  const entryKey = (key: string) => `${prefix}rc:e:${key}`;
  const index = `${prefix}rc:index`;
  const sizes = `${prefix}rc:sizes`;
  const total = `${prefix}rc:total`;

  /** Forgets the listed keys: their entries, their places in the index and their sizes in the total. */
  async function forget(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const known = await redis.hmget(sizes, ...keys);
    const freed = known.reduce((sum, size) => sum + Number(size ?? 0), 0);
    await redis
      .multi()
      .del(...keys.map(entryKey))
      .zrem(index, ...keys)
      .hdel(sizes, ...keys)
      .decrby(total, freed)
      .exec();
  }

  /** Expired entries go; then the oldest, while the total is over the cap. */
  async function trim(now: number, limits: StoreLimits): Promise<void> {
    await forget(await redis.zrangebyscore(index, '-inf', now - limits.ttlMs, 'LIMIT', 0, TRIM_BATCH));
    while (Number((await redis.get(total)) ?? 0) > limits.maxTotalBytes) {
      const oldest = await redis.zrange(index, 0, 0);
      if (oldest.length === 0) break;
      await forget(oldest);
    }
  }

  return {
    kind: 'redis',
    get: async (key) => parsed(await redis.get(entryKey(key))),
    put: async (key, entry, size, limits) => {
      const now = Date.now();
      // a replaced entry gives its size back first
      await forget([key]);
      await redis
        .multi()
        .set(entryKey(key), entry, 'PX', Math.max(1, Math.round(limits.ttlMs)))
        .zadd(index, now, key)
        .hset(sizes, key, size)
        .incrby(total, size)
        .exec();
      await trim(now, limits);
    },
    clear: async () => {
      const keys = await redis.zrange(index, 0, -1);
      await forget(keys);
      await redis.del(total);
    },
  };
}
