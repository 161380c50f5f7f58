// The Redis client of a node. Redis shares rate-limit counters and the counts
// of requests in flight, and announces option changes between nodes; nothing else depends on it, so an outage must
// not take a node down or slow it: commands fail fast while Redis is away
// (no offline queue, a short command timeout), the callers fall back to
// what the node can do alone, and the client reconnects in the background.
// A node whose Redis is down when it starts still starts, and uses Redis once
// it answers.
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/** The longest wait between two reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 2000;
/** How long the start waits for a first answer before going on without Redis. */
const START_WAIT_MS = 2000;

export async function connectRedis(url: string, commandTimeoutMs: number, log: FastifyBaseLogger): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 0,
    connectTimeout: START_WAIT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
  });
  // one line per outage and one per recovery, not one per reconnection attempt
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.warn({ err: error }, 'Redis unreachable: rate limits and requests in flight count on this node alone until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.warn('Redis reachable again');
  });
  try {
    await redis.connect();
  } catch (error) {
    // connect() gives up on the first failure, but the client keeps trying in the background
    down = true;
    console.warn(`[switchboard] Redis is unreachable (${(error as Error).message}); starting without it, it is used once it answers`);
  }
  return redis;
}
