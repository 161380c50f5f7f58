// With REDIS_CONN_STRING the gateway connects to Redis at start; when Redis is
// unreachable it starts anyway and uses Redis once it answers (tests/server/faults/).
import { describe, expect, it } from 'vitest';
import { buildTestApp, ROOT_PASSWORD } from '../support/app';
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

describe('Redis unreachable at start', () => {
  it('starts without it (an outage never keeps a node down), signs in, and closes cleanly', async () => {
    const app = await buildTestApp({
      redisUrl: 'redis://127.0.0.1:1',
      rateLimits: { critical: { max: 5, windowSeconds: 60 }, topUp: { max: 5, windowSeconds: 60 } },
    });
    expect(app.ctx.redis!.status).not.toBe('ready');
    const login = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: ROOT_PASSWORD } });
    expect(login.json()).toMatchObject({ success: true });
    await app.close();
  });
});
