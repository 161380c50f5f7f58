// The shared counts of requests in flight (server/services/sharedConcurrency.ts)
// on their own: the primary's coordinator and the workers' IPC client (on a
// channel the test controls: answers delayed, lost, or a channel closed), the
// limiter using them, and the Redis scripts on a clock the test moves,
// including a node that dies holding places (they come back once their lease
// runs out, unless renewed) and a Redis too slow to answer.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ConcurrencyLimiter } from '../../../server/relay/concurrency';
import type { RelayCaller } from '../../../server/relay/tokenAuth';
import {
  IpcPlaces,
  PlaceCoordinator,
  placeKeys,
  RedisPlaces,
  redisGivePlace,
  redisRenewPlaces,
  redisTakePlace,
  type PlaceAnswer,
  type PlaceMessage,
  type PlaceRefusal,
  type PlaceTaken,
  type SharedPlaces,
} from '../../../server/services/sharedConcurrency';
import { REDIS_URL, redisAvailable } from '../../support/databases';

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
const ask = (tokenId: number, userId: number, tokenLimit: number, userLimit = Infinity) => ({ tokenId, userId, tokenLimit, userLimit });
const taken = (answer: PlaceAnswer): PlaceTaken => {
  expect(answer && 'give' in answer, JSON.stringify(answer)).toBe(true);
  return answer as PlaceTaken;
};

describe("the primary's coordinator", () => {
  it('counts every worker against one limit per key and per user, and says which is full', () => {
    const coordinator = new PlaceCoordinator();
    expect(coordinator.take(1, ask(7, 1, 2, 3))).toBeUndefined();
    expect(coordinator.take(2, ask(7, 1, 2, 3))).toBeUndefined();
    expect(coordinator.take(1, ask(7, 1, 2, 3))).toEqual({ scope: 'token', count: 2 });
    // another key of the same user: the user's third place, then the user is full
    expect(coordinator.take(2, ask(8, 1, 5, 3))).toBeUndefined();
    expect(coordinator.take(1, ask(8, 1, 5, 3))).toEqual({ scope: 'user', count: 3 });
    // -1 (as the messages carry it) and Infinity are no limit
    expect(coordinator.take(1, ask(9, 2, -1, -1))).toBeUndefined();
    expect(coordinator.take(1, ask(9, 2, Infinity, Infinity))).toBeUndefined();
    expect(Object.fromEntries(coordinator.byToken)).toEqual({ 7: 2, 8: 1, 9: 2 });
    expect(Object.fromEntries(coordinator.byUser)).toEqual({ 1: 3, 2: 2 });
    coordinator.give(2, 7);
    expect(coordinator.take(1, ask(7, 1, 2, 3))).toBeUndefined();
  });

  it("drops a dead worker's places, and ignores gives it does not hold", () => {
    const coordinator = new PlaceCoordinator();
    for (let i = 0; i < 3; i += 1) expect(coordinator.take(1, ask(7, 1, 4))).toBeUndefined();
    expect(coordinator.take(2, ask(7, 1, 4))).toBeUndefined();
    expect(coordinator.take(2, ask(7, 1, 4))).toEqual({ scope: 'token', count: 4 });
    coordinator.dropWorker(1);
    expect(Object.fromEntries(coordinator.byToken)).toEqual({ 7: 1 });
    expect(Object.fromEntries(coordinator.byUser)).toEqual({ 1: 1 });
    // a give from the dead worker arriving late, or for a key it never held, changes nothing
    coordinator.give(1, 7);
    coordinator.give(2, 99);
    expect(Object.fromEntries(coordinator.byToken)).toEqual({ 7: 1 });
    coordinator.give(2, 7);
    expect(coordinator.byToken.size + coordinator.byUser.size).toBe(0);
  });
});

/** A worker's channel to a coordinator in this process, with answers the test can delay or lose. */
function channelTo(
  coordinator: PlaceCoordinator,
  worker: number,
  behaviour: { delayMs?: () => number; lose?: boolean; closed?: boolean } = {},
) {
  const sent: PlaceMessage[] = [];
  const listeners: Array<(message: unknown) => void> = [];
  const answered = { count: 0 };
  return {
    sent,
    answered,
    channel: {
      send(message: PlaceMessage) {
        if (behaviour.closed) return false;
        sent.push(message);
        coordinator.handle(worker, message, (answer) => {
          if (behaviour.lose) return;
          setTimeout(() => {
            answered.count += 1;
            listeners.forEach((listener) => listener(answer));
          }, behaviour.delayMs?.() ?? 0);
        });
        return true;
      },
      onMessage: (listener: (message: unknown) => void) => listeners.push(listener),
    },
  };
}

describe("a worker's IPC client", () => {
  it('matches each answer to its ask by id, whatever order they come back in', async () => {
    const coordinator = new PlaceCoordinator();
    const { channel, sent } = channelTo(coordinator, 1, { delayMs: () => Math.random() * 30 });
    const places = new IpcPlaces(channel, 1000);
    const answers = await Promise.all(Array.from({ length: 10 }, () => places.take(ask(7, 1, 4))));
    expect(answers.filter((answer) => answer && 'give' in answer)).toHaveLength(4);
    expect(answers.filter((answer) => answer && 'scope' in answer)).toEqual(
      Array.from({ length: 6 }, () => ({ scope: 'token', count: 4 })),
    );
    expect(new Set(sent.map((message) => (message as { id: number }).id)).size).toBe(10);
    for (const answer of answers) if (answer && 'give' in answer) answer.give();
    expect(coordinator.byToken.size).toBe(0);
  });

  it('gives up after its wait, and gives back a place the primary took too late', async () => {
    const coordinator = new PlaceCoordinator();
    const { channel, sent, answered } = channelTo(coordinator, 1, { delayMs: () => 200 });
    const places = new IpcPlaces(channel, 50);
    expect(await places.take(ask(7, 1, 4))).toBeUndefined();
    // it gave up at its own wait, before the answer came: not a measured time, which a loaded machine stretches
    // (Node fires timers in the order they fall due, however late the loop gets to them)
    expect(answered.count).toBe(0);
    expect(coordinator.byToken.get(7)).toBe(1);
    await sleep(250);
    // the late answer said taken: the client gave it back at once
    expect(sent.at(-1)).toEqual({ sb: 'places-give', tokenId: 7, userId: 1 });
    expect(coordinator.byToken.size).toBe(0);
  });

  it('answers at once, with nothing, when the channel is closed; and at its wait when answers are lost', async () => {
    const closed = new IpcPlaces(channelTo(new PlaceCoordinator(), 1, { closed: true }).channel, 5000);
    const startedAt = Date.now();
    expect(await closed.take(ask(7, 1, 4))).toBeUndefined();
    // not its 5 s wait (half of it leaves room for a loaded machine)
    expect(Date.now() - startedAt).toBeLessThan(2500);
    const silent = new IpcPlaces(channelTo(new PlaceCoordinator(), 1, { lose: true }).channel, 30);
    expect(await silent.take(ask(7, 1, 4))).toBeUndefined();
  });
});

const caller = (tokenId: number, userId: number, tokenLimit: number, userLimit = 0): RelayCaller =>
  ({ token: { id: tokenId, concurrency_limit: tokenLimit }, user: { id: userId, concurrency_limit: userLimit } }) as unknown as RelayCaller;
const noDefaults = { number: () => 0 };

describe('the limiter over the primary', () => {
  it('holds one limit across two workers, answers a caller without a limit synchronously with no message, and counts alone when the primary is silent', async () => {
    const coordinator = new PlaceCoordinator();
    const one = channelTo(coordinator, 1);
    const two = channelTo(coordinator, 2);
    const warnings: string[] = [];
    const log = { warn: (message: string) => warnings.push(message) };
    const workers = [
      new ConcurrencyLimiter(noDefaults, [new IpcPlaces(one.channel, 500)], log),
      new ConcurrencyLimiter(noDefaults, [new IpcPlaces(two.channel, 500)], log),
    ];
    const limited = caller(7, 1, 3);
    const results = await Promise.all(Array.from({ length: 8 }, async (_, index) => workers[index % 2].enter(limited)));
    expect(results.filter((result) => result === undefined)).toHaveLength(3);
    const refusals = results.filter((result) => result !== undefined);
    expect(refusals).toHaveLength(5);
    for (const refusal of refusals)
      expect(refusal).toMatchObject({
        status: 429,
        code: 'too_many_concurrent_requests',
        retryAfter: 1,
        message: 'this API key already has 3 requests in flight, its limit; retry when one ends',
      });
    // both workers admitted some; each process counts its own too
    expect((workers[0].byToken.get(7) ?? 0) + (workers[1].byToken.get(7) ?? 0)).toBe(3);
    expect(coordinator.byToken.get(7)).toBe(3);
    // one ends on whichever worker held it: another may start on the other worker
    const holder = workers[0].byToken.get(7) ? workers[0] : workers[1];
    const other = holder === workers[0] ? workers[1] : workers[0];
    holder.leave(limited);
    expect(await other.enter(limited)).toBeUndefined();
    expect(await holder.enter(limited)).toMatchObject({ status: 429 });

    // no limit at all: a plain synchronous answer, nothing sent
    const before = one.sent.length;
    const free = caller(8, 2, -1, -1);
    expect(workers[0].enter(free)).toBeUndefined();
    workers[0].leave(free);
    expect(one.sent.length).toBe(before);

    // the primary silent: the worker's own counts decide, and the outage is logged once
    const silent = channelTo(coordinator, 3, { lose: true });
    const alone = new ConcurrencyLimiter(noDefaults, [new IpcPlaces(silent.channel, 20)], log);
    expect(await alone.enter(caller(9, 3, 1))).toBeUndefined();
    expect(await alone.enter(caller(9, 3, 1))).toMatchObject({
      status: 429,
      message: 'this API key already has 1 requests in flight, its limit; retry when one ends',
    });
    expect(warnings.filter((warning) => warning.includes('did not answer'))).toHaveLength(1);
    alone.leave(caller(9, 3, 1));
    expect(alone.byToken.size).toBe(0);
  });
});

describe('the limiter between a shared count and its own', () => {
  it('gives back the places it counted alone before the shared ones, so the shared count never drops below what runs', async () => {
    const coordinator = new PlaceCoordinator();
    let answering = true;
    const store: SharedPlaces = {
      name: 'a test count',
      take: async (wanted) => {
        if (!answering) return undefined;
        const refused = coordinator.take(1, wanted);
        return refused ?? { give: () => coordinator.give(1, wanted.tokenId) };
      },
    };
    const limiter = new ConcurrencyLimiter(noDefaults, [store]);
    const limited = caller(7, 1, 5);
    expect(await limiter.enter(limited)).toBeUndefined();
    // the shared count stops answering: one more is counted here alone
    answering = false;
    expect(await limiter.enter(limited)).toBeUndefined();
    answering = true;
    expect(await limiter.enter(limited)).toBeUndefined();
    expect(coordinator.byToken.get(7)).toBe(2);
    expect(limiter.byToken.get(7)).toBe(3);
    // whichever ends first, the one counted alone is what goes: the shared count keeps the two still running
    limiter.leave(limited);
    expect(coordinator.byToken.get(7)).toBe(2);
    limiter.leave(limited);
    limiter.leave(limited);
    expect(coordinator.byToken.size).toBe(0);
    expect(limiter.byToken.size).toBe(0);
  });
});

const redisUp = await redisAvailable('shared concurrency in Redis');

describe.runIf(redisUp)('places in Redis', () => {
  const client = new Redis(REDIS_URL, { lazyConnect: true });
  const prefix = `cc-test:${randomBytes(6).toString('hex')}:`;
  afterAll(async () => {
    if (client.status === 'ready') {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
    }
    client.disconnect();
  });
  const connected = async () => {
    if (client.status !== 'ready') await client.connect();
    return client;
  };
  const limits = (tokenLimit: number, userLimit = -1) => ({ tokenLimit, userLimit });

  it('takes up to the limit and refuses past it, per key and per user, atomically under concurrent takes', async () => {
    const redis = await connected();
    const keys = placeKeys(prefix, 1, 7);
    const takes = await Promise.all(Array.from({ length: 20 }, (_, index) => redisTakePlace(redis, keys, `n:${index}`, limits(5), 60_000)));
    expect(takes.filter((take) => take === true)).toHaveLength(5);
    expect(takes.filter((take) => take !== true)).toEqual(Array.from({ length: 15 }, () => ({ scope: 'token', count: 5 })));
    // the user's set counts every key of theirs
    const other = placeKeys(prefix, 1, 8);
    expect(await redisTakePlace(redis, other, 'n:other', limits(10, 6), 60_000)).toBe(true);
    expect(await redisTakePlace(redis, other, 'n:other2', limits(10, 6), 60_000)).toEqual({ scope: 'user', count: 6 });
    await redisGivePlace(redis, keys, 'n:0');
    expect(await redis.zcard(keys[1])).toBe(5);
    expect(await redisTakePlace(redis, keys, 'n:again', limits(5), 60_000)).toBe(true);
  });

  it("lets a dead node's places go once their lease has run out, and keeps a live node's that it renews", async () => {
    const redis = await connected();
    const keys = placeKeys(prefix, 2, 20);
    const lease = 1000;
    const at = 1_000_000;
    // two nodes hold the key's two places; one of them dies holding its place
    expect(await redisTakePlace(redis, keys, 'dead:1', limits(2), lease, at)).toBe(true);
    expect(await redisTakePlace(redis, keys, 'live:1', limits(2), lease, at)).toBe(true);
    expect(await redisTakePlace(redis, keys, 'live:2', limits(2), lease, at + 500)).toEqual({ scope: 'token', count: 2 });
    // the live node renews its own place a third of a lease later; the dead one renews nothing
    await redisRenewPlaces(redis, keys, ['live:1'], lease, at + 334);
    expect(await redisTakePlace(redis, keys, 'live:2', limits(2), lease, at + 999)).toEqual({ scope: 'token', count: 2 });
    // the dead node's lease is over: its place is free, the live one's still counts
    expect(await redisTakePlace(redis, keys, 'live:2', limits(2), lease, at + 1001)).toBe(true);
    expect(await redisTakePlace(redis, keys, 'live:3', limits(2), lease, at + 1002)).toEqual({ scope: 'token', count: 2 });
    expect((await redis.zrange(keys[0], 0, -1)).sort()).toEqual(['live:1', 'live:2']);
    // the sets themselves expire with their last place
    expect(await redis.pttl(keys[0])).toBeGreaterThan(0);
  });

  it('renews the places a process holds while they run, and gives them back; a process killed holding some frees them after the lease', async () => {
    const redis = await connected();
    const lease = 600;
    const node = new RedisPlaces(redis, prefix, lease);
    const limited = ask(30, 3, 2);
    const first = taken(await node.take(limited));
    taken(await node.take(limited));
    expect(((await node.take(limited)) as PlaceRefusal).count).toBe(2);
    // well past one lease: renewed, so still held
    await sleep(lease * 2);
    expect(await node.take(limited)).toEqual({ scope: 'token', count: 2 });
    first.give();
    first.give();
    await sleep(50);
    expect(await redis.zcard(placeKeys(prefix, 3, 30)[0])).toBe(1);
    expect(node.heldCount()).toBe(1);

    // a second process takes a place and is killed (its client gone, nothing given back or renewed)
    const doomedClient = new Redis(REDIS_URL, { lazyConnect: true });
    await doomedClient.connect();
    const doomed = new RedisPlaces(doomedClient, prefix, lease);
    taken(await doomed.take(limited));
    doomedClient.disconnect();
    expect(await node.take(limited)).toEqual({ scope: 'token', count: 2 });
    await sleep(lease + 100);
    const after = taken(await node.take(limited));
    after.give();
  });

  it('answers nothing, at once, when Redis is not connected or a command fails, and skips Redis for a moment after a failure', async () => {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    expect(await new RedisPlaces(down, prefix).take(ask(1, 1, 1))).toBeUndefined();
    down.disconnect();

    // a client whose script call times out, as ioredis's command timeout makes it
    const calls: string[] = [];
    const slow = {
      status: 'ready',
      on: () => undefined,
      defineCommand: () => undefined,
      switchboardPlaceTake: async () => {
        calls.push('take');
        await sleep(20);
        throw new Error('Command timed out');
      },
      switchboardPlaceGive: async () => {
        calls.push('give');
        return 1;
      },
    } as unknown as Redis;
    const places = new RedisPlaces(slow, prefix);
    expect(await places.take(ask(1, 1, 1))).toBeUndefined();
    // the take may have run after all: its member is removed
    expect(calls).toEqual(['take', 'give']);
    expect(await places.take(ask(1, 1, 1))).toBeUndefined();
    expect(calls).toEqual(['take', 'give']);
  });

  it('gives back, once Redis answers again, the places of requests that ended while it was away', async () => {
    const given: string[] = [];
    const listeners: Array<() => void> = [];
    const flaky = {
      status: 'ready',
      on: (event: string, listener: () => void) => event === 'ready' && listeners.push(listener),
      defineCommand: () => undefined,
      switchboardPlaceTake: async () => [1],
      switchboardPlaceGive: async (_keys: number, _token: string, _user: string, member: string) => {
        given.push(member);
        return 1;
      },
    };
    const places = new RedisPlaces(flaky as unknown as Redis, prefix, 60_000);
    const first = taken(await places.take(ask(1, 1, 5)));
    const second = taken(await places.take(ask(1, 1, 5)));
    flaky.status = 'reconnecting';
    first.give();
    expect(given).toEqual([]);
    expect(places.ungivenCount()).toBe(1);
    flaky.status = 'ready';
    for (const listener of listeners) listener();
    expect(given).toHaveLength(1);
    expect(places.ungivenCount()).toBe(0);
    second.give();
    expect(given).toHaveLength(2);
    expect(places.heldCount()).toBe(0);
  });
});
