// The cross-site check sees the request the router runs: percent-encoded,
// dot-segment and doubled-slash spellings of a state-changing route are all
// refused; a browser's Sec-Fetch-Site: same-origin is believed even behind a
// proxy that rewrites Host; X-Forwarded-Host counts only under TRUSTED_PROXY.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
let cookie: string;
let rootCookie: string;
beforeAll(async () => {
  app = await buildTestApp();
  await register(app, 'victim');
  cookie = await login(app, 'victim', 'password-123');
  rootCookie = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app.close();
});

const crossSite = { host: 'localhost:3000', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };

const SPELLINGS: Array<[method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE', url: string, root?: boolean]> = [
  ['PUT', '/%61pi/option/', true],
  ['PUT', '/api/%6fption/', true],
  ['PUT', '/%2561pi/option/', true],
  ['PUT', '/api/user/%73elf'],
  ['DELETE', '/api/user/%73elf'],
  ['POST', '/api/user/%6cogin'],
  ['GET', '/api/%6fauth/email/bind?email=a@b.cd&code=123456'],
  ['GET', '/api/%6Fauth/email/bind?email=a@b.cd&code=123456'],
  ['GET', '//api//user/logout'],
  ['GET', '/api/./user/logout'],
  ['GET', '/api/x/../user/logout'],
  ['GET', '/api/user/logout/'],
  ['GET', '/api/user/%6cogout'],
  ['GET', '/api/user/%6Cogout?x=1'],
  ['GET', '/api%2fuser/logout'],
  ['GET', '/API/user/logout'],
  ['HEAD', '/api/user/logout'],
  ['GET', '/api/user/%74oken'],
  ['GET', '/api/channel/%74est/1', true],
  ['GET', '/api/channel/update%5fbalance/1', true],
];

describe('the cross-site check on encoded paths', () => {
  it.each(SPELLINGS)('refuses %s %s from another site', async (method, url, root) => {
    const response = await app.inject({
      method,
      url,
      headers: { ...crossSite, cookie: root ? rootCookie : cookie },
      payload:
        method === 'GET' || method === 'HEAD'
          ? undefined
          : { username: 'victim', password: 'x', display_name: 'pwned', key: 'SystemName', value: 'pwned' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.headers['set-cookie']).toBeUndefined();
  });

  it('left the victim signed in, unchanged, and the options as they were', async () => {
    const self = await asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' });
    expect(self.json().success).toBe(true);
    expect(self.json().data.display_name).toBe('victim');
    expect(app.ctx.options.get('SystemName')).not.toBe('pwned');
  });
});

describe('the cross-site check behind proxies', () => {
  it('accepts a same-origin browser write behind a proxy that rewrites Host', async () => {
    const response = await app.inject({
      method: 'PUT',
      url: '/api/user/self',
      headers: { host: '127.0.0.1:3000', origin: 'http://localhost:5173', 'sec-fetch-site': 'same-origin', cookie },
      payload: { display_name: 'Via proxy' },
    });
    expect(response.json()).toEqual({ success: true, message: '' });
  });

  it('accepts a same-origin sign-in behind that proxy', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/user/login',
      headers: { host: '127.0.0.1:3000', origin: 'https://console.example', 'sec-fetch-site': 'same-origin' },
      payload: { username: 'victim', password: 'password-123' },
    });
    expect(response.json().success).toBe(true);
  });

  const forwarded = { host: '10.0.0.5:3000', origin: 'https://gw.example', 'x-forwarded-host': 'gw.example', 'x-forwarded-proto': 'https' };

  it('ignores X-Forwarded-Host without TRUSTED_PROXY (an Origin-only client is compared with Host)', async () => {
    const response = await app.inject({
      method: 'PUT',
      url: '/api/user/self',
      headers: { ...forwarded, cookie },
      payload: { display_name: 'forwarded' },
    });
    expect(response.statusCode).toBe(403);
  });

  it('honours X-Forwarded-Host and X-Forwarded-Proto under TRUSTED_PROXY', async () => {
    const trusted = await buildTestApp({ trustProxy: true });
    try {
      await register(trusted, 'behind');
      const session = await login(trusted, 'behind', 'password-123');
      const accepted = await trusted.inject({
        method: 'PUT',
        url: '/api/user/self',
        headers: { ...forwarded, cookie: session },
        payload: { display_name: 'forwarded' },
      });
      expect(accepted.json()).toEqual({ success: true, message: '' });
      const otherHost = await trusted.inject({
        method: 'PUT',
        url: '/api/user/self',
        headers: { ...forwarded, origin: 'https://evil.example', cookie: session },
        payload: {},
      });
      expect(otherHost.statusCode).toBe(403);
      const otherScheme = await trusted.inject({
        method: 'PUT',
        url: '/api/user/self',
        headers: { ...forwarded, origin: 'http://gw.example', cookie: session },
        payload: {},
      });
      expect(otherScheme.statusCode).toBe(403);
    } finally {
      await trusted.close();
    }
  });
});
