// Sensitive endpoints are limited per client IP; X-Forwarded-For only counts
// behind a configured trusted proxy; with Redis the limit holds across nodes.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../support/app';
import { REDIS_URL, redisAvailable } from '../support/databases';

const strict = { critical: { max: 3, windowSeconds: 60 }, topUp: { max: 0, windowSeconds: 60 } };
const apps: FastifyInstance[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

// sign-in has limits of its own on failed attempts (loginLimits.test.ts); registration stands for the critical bucket
const attempt = (app: FastifyInstance, headers: Record<string, string> = {}) =>
  app
    .inject({ method: 'POST', url: '/api/user/register', payload: { username: 'x', password: 'short' }, headers })
    .then((response) => response.statusCode);

const redisUp = await redisAvailable('rate limits across nodes');

describe('rate limits', () => {
  it('answers 429 after the limit, per client IP', async () => {
    const app = await buildTestApp({ rateLimits: strict });
    apps.push(app);
    expect([await attempt(app), await attempt(app), await attempt(app)]).toEqual([200, 200, 200]);
    expect(await attempt(app)).toBe(429);
    expect((await app.inject({ method: 'POST', url: '/api/user/register', payload: {} })).json()).toEqual({
      success: false,
      message: 'too many requests, please try again later',
      code: 'too_many_requests',
    });
  });

  it('ignores X-Forwarded-For unless a trusted proxy is configured', async () => {
    const direct = await buildTestApp({ rateLimits: strict });
    apps.push(direct);
    for (let index = 0; index < 3; index += 1) await attempt(direct, { 'x-forwarded-for': `10.0.0.${index}` });
    expect(await attempt(direct, { 'x-forwarded-for': '10.0.0.99' })).toBe(429);

    const proxied = await buildTestApp({ rateLimits: strict, trustProxy: true });
    apps.push(proxied);
    for (let index = 0; index < 3; index += 1) await attempt(proxied, { 'x-forwarded-for': '10.0.0.1' });
    expect(await attempt(proxied, { 'x-forwarded-for': '10.0.0.1' })).toBe(429);
    expect(await attempt(proxied, { 'x-forwarded-for': '10.0.0.2' })).toBe(200);
  });

  it.runIf(redisUp)('shares the count between two nodes through Redis', async () => {
    const address = `192.0.2.${1 + (randomBytes(1)[0] % 200)}`;
    const first = await buildTestApp({ rateLimits: strict, redisUrl: REDIS_URL, trustProxy: true });
    const second = await buildTestApp({ rateLimits: strict, redisUrl: REDIS_URL, trustProxy: true });
    apps.push(first, second);
    const headers = { 'x-forwarded-for': address };
    expect([await attempt(first, headers), await attempt(second, headers), await attempt(first, headers)]).toEqual([200, 200, 200]);
    expect(await attempt(second, headers)).toBe(429);
  });
});
