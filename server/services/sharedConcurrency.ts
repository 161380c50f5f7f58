// Counts of relayed requests in flight per API key and per user that every
// process serving them shares, so a limit holds across WORKERS=N and across
// nodes instead of multiplying with them. The relay's limiter
// (relay/concurrency.ts) always keeps this process's own counts too; it asks
// a shared count below only for a caller that has a limit, so a caller
// without one costs nothing more than it did.
//
// Each way of sharing lives in a file of its own: Redis (redisPlaces.ts),
// members in sorted sets with a lease, renewed while their requests run; and
// the primary process over IPC (ipcPlaces.ts), for WORKERS=N without Redis or
// while it is down. What a place is, and the answers, are in places.ts.
//
// One process without Redis needs none of this: its own counts are the truth.
import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import { primaryPlaces } from './ipcPlaces';
import type { SharedPlaces } from './places';
import { RedisPlaces } from './redisPlaces';

export { isRefusal, type PlaceAnswer, type PlaceAsk, type PlaceRefusal, type PlaceTaken, type SharedPlaces } from './places';
export { PLACE_LEASE_MS, placeKeys, RedisPlaces, redisGivePlace, redisRenewPlaces, redisTakePlace } from './redisPlaces';
export { IPC_ANSWER_MS, IpcPlaces, PlaceCoordinator, serveSharedPlaces, type PlaceChannel, type PlaceMessage } from './ipcPlaces';

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
