// With REDIS_CONN_STRING the gateway connects to Redis at start and fails fast
// when it cannot; nodes sharing a database rely on it.
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../support/app';
import { REDIS_URL, redisAvailable } from '../support/databases';

const available = await redisAvailable('redis');

describe.runIf(available)('Redis connection', () => {
  it('connects at start and closes on shutdown', async () => {
    const app = await buildTestApp({ redisUrl: REDIS_URL });
    expect(await app.ctx.redis!.ping()).toBe('PONG');
    await app.close();
    await expect(app.ctx.redis!.ping()).rejects.toThrow();
  });
});

describe('Redis misconfiguration', () => {
  it('refuses to start when Redis cannot be reached', async () => {
    await expect(buildTestApp({ redisUrl: 'redis://127.0.0.1:1' })).rejects.toThrow(/cannot reach Redis/);
  });
});
