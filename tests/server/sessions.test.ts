// Sessions end on the server: logout and a password change revoke them at
// once; a password change needs the current password; a stranger's wrong
// guesses burn nobody's reset link; sign-in limits count failures per (IP,
// account) and per IP, so one attacker locks nobody else out.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD, sessionCookieOf } from '../support/app';
import { REDIS_URL, redisAvailable } from '../support/databases';

let app: FastifyInstance;
afterEach(async () => {
  await app?.close();
});

const self = (cookie: string) => asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' });

describe('logout', () => {
  it('revokes the session: a copy of the old cookie neither reads nor writes', async () => {
    app = await buildTestApp();
    await register(app, 'dave');
    const cookie = await login(app, 'dave', 'password-123');
    const other = await login(app, 'dave', 'password-123');
    expect((await asBrowser(app, cookie, { method: 'GET', url: '/api/user/logout' })).json().success).toBe(true);
    expect((await self(cookie)).statusCode).toBe(401);
    const write = await asBrowser(app, cookie, { method: 'PUT', url: '/api/user/self', payload: { display_name: 'after logout' } });
    expect(write.statusCode).toBe(401);
    // only that session ended
    expect((await self(other)).json().data.display_name).toBe('dave');
  });
});

describe('password change', () => {
  it('needs the current password, and ends the other sessions while this one stays', async () => {
    app = await buildTestApp();
    await register(app, 'erin');
    const mine = await login(app, 'erin', 'password-123');
    const elsewhere = await login(app, 'erin', 'password-123');
    const change = (payload: Record<string, unknown>) => asBrowser(app, mine, { method: 'PUT', url: '/api/user/self', payload });

    expect((await change({ password: 'hijacked-1' })).json()).toEqual({
      success: false,
      message: 'enter your current password to set a new one',
    });
    expect((await change({ password: 'hijacked-1', original_password: 'not-it-at-all' })).json()).toEqual({
      success: false,
      message: 'the current password is wrong',
      code: 'wrong_current_password',
    });
    expect((await login(app, 'erin', 'password-123')).length).toBeGreaterThan(0);

    const changed = await change({ password: 'new-password-1', original_password: 'password-123' });
    expect(changed.json()).toEqual({ success: true, message: '' });
    const renewed = sessionCookieOf(changed);
    expect((await self(renewed)).statusCode).toBe(200);
    expect((await self(elsewhere)).statusCode).toBe(401);
    await login(app, 'erin', 'new-password-1');
  });

  it("needs no current password from an admin setting another user's, or from an account that has none", async () => {
    app = await buildTestApp();
    await register(app, 'fred');
    const fred = await login(app, 'fred', 'password-123');
    const root = await login(app, 'root', ROOT_PASSWORD);
    const user = await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'fred').executeTakeFirstOrThrow();
    const set = await asBrowser(app, root, {
      method: 'PUT',
      url: '/api/user/',
      payload: { id: Number(user.id), password: 'set-by-admin-1' },
    });
    expect(set.json().success).toBe(true);
    expect((await self(fred)).statusCode).toBe(401);
    await login(app, 'fred', 'set-by-admin-1');

    // an OAuth sign-up has no password (''): no password signs in, not even the timing dummy's,
    // and it may set its first password without a current one
    const signedIn = await login(app, 'fred', 'set-by-admin-1');
    await app.ctx.db.updateTable('users').set({ password_hash: '' }).where('id', '=', Number(user.id)).execute();
    for (const password of ['set-by-admin-1', 'switchboard-timing-equaliser']) {
      const refused = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'fred', password } });
      expect(refused.json().success).toBe(false);
    }
    const first = await asBrowser(app, signedIn, { method: 'PUT', url: '/api/user/self', payload: { password: 'first-password-1' } });
    expect(first.json()).toEqual({ success: true, message: '' });
    await login(app, 'fred', 'first-password-1');
  });
});

describe('reset links', () => {
  it('survive any number of wrong guesses by a stranger', async () => {
    app = await buildTestApp();
    await register(app, 'gina');
    await app.ctx.db.updateTable('users').set({ email: 'gina@example.com' }).where('username', '=', 'gina').execute();
    const { storeCode } = await import('../../server/repositories/verificationCodes');
    const token = 'a'.repeat(64);
    await storeCode(app.ctx.db, 'reset', 'gina@example.com', token, 900);
    for (let guess = 0; guess < 20; guess += 1) {
      const wrong = await app.inject({
        method: 'POST',
        url: '/api/user/reset',
        remoteAddress: '198.51.100.66',
        payload: { email: 'gina@example.com', token: `${guess}`.padStart(64, 'b') },
      });
      expect(wrong.json().success).toBe(false);
    }
    const confirmed = await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email: 'gina@example.com', token } });
    expect(confirmed.json().success).toBe(true);
  });
});

describe('sign-in limits', () => {
  const attempt = (username: string, password: string, remoteAddress: string) =>
    app.inject({ method: 'POST', url: '/api/user/login', remoteAddress, payload: { username, password } });

  it('lock out only (that IP, that account) after 10 failures, not others behind the IP or the owner elsewhere', async () => {
    // the production default for the per-IP bucket the other sensitive endpoints share
    app = await buildTestApp({ rateLimits: { critical: { max: 20, windowSeconds: 1200 }, topUp: { max: 0, windowSeconds: 60 } } });
    await register(app, 'harry');
    const attacker = '192.0.2.50';
    for (let guess = 0; guess < 20; guess += 1) await attempt('root', `wrong-${guess}`, attacker);
    // a colleague behind the same address signs in
    expect((await attempt('harry', 'password-123', attacker)).json().success).toBe(true);
    // root, from anywhere else, signs in
    expect((await attempt('root', ROOT_PASSWORD, '203.0.113.20')).json().success).toBe(true);
    // the attacker's address cannot try root any more, not even with the right password
    const blocked = await attempt('root', ROOT_PASSWORD, attacker);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().message).toBe('too many failed sign-ins, please try again later');
  });

  it('stop one address spraying many accounts at the per-IP cap', async () => {
    app = await buildTestApp({ loginLimits: { perAccount: { max: 10, windowSeconds: 1200 }, perIp: { max: 15, windowSeconds: 1200 } } });
    await register(app, 'ivy');
    const sprayer = '192.0.2.77';
    for (let index = 0; index < 15; index += 1) await attempt(`user${index}`, 'password-123', sprayer);
    expect((await attempt('ivy', 'password-123', sprayer)).statusCode).toBe(429);
    expect((await attempt('ivy', 'password-123', '192.0.2.78')).json().success).toBe(true);
  });
});

const redisUp = await redisAvailable('sign-in limits across nodes');

describe.runIf(redisUp)('sign-in limits with Redis', () => {
  it("count one address's failures on every node", async () => {
    const limits = { perAccount: { max: 4, windowSeconds: 60 }, perIp: { max: 100, windowSeconds: 60 } };
    const first = await buildTestApp({ redisUrl: REDIS_URL, trustProxy: true, loginLimits: limits });
    const second = await buildTestApp({ redisUrl: REDIS_URL, trustProxy: true, loginLimits: limits });
    app = first;
    try {
      const address = `198.18.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0] % 250)}`;
      const attemptOn = (node: FastifyInstance, password: string) =>
        node.inject({
          method: 'POST',
          url: '/api/user/login',
          headers: { 'x-forwarded-for': address },
          payload: { username: 'root', password },
        });
      for (const node of [first, second, first, second]) expect((await attemptOn(node, 'wrong-password')).statusCode).toBe(200);
      expect((await attemptOn(first, ROOT_PASSWORD)).statusCode).toBe(429);
      expect((await attemptOn(second, ROOT_PASSWORD)).statusCode).toBe(429);
    } finally {
      await second.close();
    }
  });
});
