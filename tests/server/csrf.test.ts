// Cross-site requests that change state are refused even with a valid cookie.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, login, register } from '../support/app';

let app: FastifyInstance;
let cookie: string;
beforeAll(async () => {
  app = await buildTestApp();
  await register(app, 'victim');
  cookie = await login(app, 'victim', 'password-123');
});
afterAll(async () => {
  await app.close();
});

const crossSite = { host: 'localhost:3000', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };

describe('CSRF protection', () => {
  it('refuses a cross-site POST with a valid cookie, and it has no effect', async () => {
    const response = await app.inject({
      method: 'PUT',
      url: '/api/user/self',
      headers: { ...crossSite, cookie },
      payload: { display_name: 'pwned' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: 'cross-site request refused', code: 'cross_site_refused' });
    const self = await app.inject({
      method: 'GET',
      url: '/api/user/self',
      headers: { cookie, host: 'localhost:3000', 'sec-fetch-site': 'same-origin' },
    });
    expect(self.json().data.display_name).toBe('victim');
  });

  it('refuses a cross-site POST identified only by its Origin', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/user/register',
      headers: { host: 'localhost:3000', origin: 'http://attacker.test' },
      payload: { username: 'sneaky', password: 'password-123' },
    });
    expect(response.statusCode).toBe(403);
    expect(await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'sneaky').executeTakeFirst()).toBeUndefined();
  });

  it('refuses cross-site state-changing GETs (logout, token rotation, a channel key test)', async () => {
    for (const url of [
      '/api/user/logout',
      '/api/user/token',
      '/api/user/logout/',
      '/api/channel/1/keys/1/test',
      '/api/channel/1/keys/1/test/',
    ]) {
      const response = await app.inject({ method: 'GET', url, headers: { ...crossSite, cookie } });
      expect(response.statusCode, url).toBe(403);
      expect(response.headers['set-cookie'], url).toBeUndefined();
    }
  });

  it('refuses a same-site (sibling subdomain) state change too', async () => {
    const response = await app.inject({
      method: 'PUT',
      url: '/api/user/self',
      headers: { host: 'localhost:3000', 'sec-fetch-site': 'same-site', cookie },
      payload: {},
    });
    expect(response.statusCode).toBe(403);
  });

  it('lets cross-site reads of public data through', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/status', headers: crossSite });
    expect(response.statusCode).toBe(200);
  });

  it('lets same-origin browser calls and non-browser clients through', async () => {
    const sameOrigin = await app.inject({
      method: 'PUT',
      url: '/api/user/self',
      headers: { host: 'localhost:3000', origin: 'http://localhost:3000', 'sec-fetch-site': 'same-origin', cookie },
      payload: { display_name: 'Victim V' },
    });
    expect(sameOrigin.json()).toEqual({ success: true, message: '' });
    const script = await app.inject({ method: 'GET', url: '/api/user/logout' });
    expect(script.statusCode).toBe(200);
  });
});
