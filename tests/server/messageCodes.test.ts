// The stable `code` on the refusals the console translates: sign-in failures,
// validation, permission refusals, not found. `message` stays English and
// every field one-api clients read (success, message, data) is still there.
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MESSAGE_CODES } from '../../common/messageCodes';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('message codes', () => {
  it('marks sign-in failures', async () => {
    app = await buildTestApp();
    const wrong = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: 'not-the-password' } });
    expect(wrong.json()).toEqual({ success: false, message: 'username or password is wrong', code: 'wrong_credentials' });
    const empty = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: '' } });
    expect(empty.json()).toEqual({ success: false, message: 'username and password are required', code: 'credentials_required' });
    const anonymous = await app.inject({ method: 'GET', url: '/api/user/self' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ success: false, message: 'not logged in', code: 'not_logged_in' });
  });

  it('marks validation refusals', async () => {
    app = await buildTestApp();
    const mismatch = await app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: { username: 'dave', password: 'password-1', password2: 'password-2' },
    });
    expect(mismatch.json()).toMatchObject({ success: false, code: 'passwords_mismatch' });
    await register(app, 'erin');
    const taken = await app.inject({ method: 'POST', url: '/api/user/register', payload: { username: 'erin', password: 'password-1' } });
    expect(taken.json()).toEqual({ success: false, message: 'username already taken', code: 'username_taken' });
  });

  it('marks permission refusals and what is not found', async () => {
    app = await buildTestApp();
    await register(app, 'frank');
    const user = await login(app, 'frank', 'password-123');
    expect((await asBrowser(app, user, { method: 'GET', url: '/api/channel/?p=0' })).json()).toEqual({
      success: false,
      message: 'insufficient permission',
      code: 'permission_denied',
    });
    const root = await login(app, 'root', ROOT_PASSWORD);
    const rootId = (await asBrowser(app, root, { method: 'GET', url: '/api/user/self' })).json().data.id;
    expect((await asBrowser(app, root, { method: 'DELETE', url: `/api/user/${rootId}/` })).json()).toMatchObject({
      success: false,
      code: 'root_protected',
    });
    expect((await asBrowser(app, root, { method: 'GET', url: '/api/token/424242' })).json()).toEqual({
      success: false,
      message: 'token not found',
      code: 'token_not_found',
    });
    expect((await asBrowser(app, root, { method: 'GET', url: '/api/redemption/424242' })).json()).toMatchObject({
      code: 'redemption_not_found',
    });
    expect((await asBrowser(app, root, { method: 'GET', url: '/api/user/424242' })).json()).toMatchObject({ code: 'user_not_found' });
    const missing = await asBrowser(app, root, { method: 'GET', url: '/api/no-such-route' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ success: false, code: 'not_found' });
  });

  it('leaves successes and uncoded refusals as they were', async () => {
    app = await buildTestApp();
    const ok = await app.inject({ method: 'GET', url: '/api/status' });
    expect(ok.json()).not.toHaveProperty('code');
    expect(new Set(MESSAGE_CODES).size).toBe(MESSAGE_CODES.length);
  });
});
