// Two deployments on one Redis share no sign-in lockouts: the failure
// counters (wrong passwords, wrong two-factor codes) start their keys with
// REDIS_KEY_PREFIX as every other key does.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FailureCounter } from '../../server/services/rateLimiter';
import { REDIS_URL, redisAvailable, redisTestPrefix } from '../support/databases';

const redisUp = await redisAvailable('sign-in failure counters');
const rule = { windowSeconds: 60, max: 5 };

describe.runIf(redisUp)('sign-in failure counters on a shared Redis', () => {
  const clients: Redis[] = [];
  const client = () => {
    const made = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
    clients.push(made);
    return made;
  };
  afterAll(async () => {
    await Promise.all(clients.map((made) => made.quit()));
  });

  it("counts each deployment's failures under its own prefix, so one's lockout is not the other's", async () => {
    const base = redisTestPrefix();
    const first = new FailureCounter(client(), `${base}a:`);
    const second = new FailureCounter(client(), `${base}b:`);
    for (let attempt = 0; attempt < 5; attempt += 1) await first.add('login:root', rule);
    expect(await first.count('login:root', rule)).toBe(5);
    // the second deployment, its own process: nothing of the first's in Redis under its prefix
    expect(await second.count('login:root', rule)).toBe(0);
    const keys = await clients[0].keys(`${base}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.startsWith(`${base}a:failures:`))).toBe(true);
    await clients[0].del(...keys);
  });
});
