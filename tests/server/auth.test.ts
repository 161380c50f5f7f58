// Sign-in, sessions and bootstrap against the real app on in-memory SQLite.
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../server/config';
import { hashAccessToken } from '../../server/secrets';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  vi.restoreAllMocks();
});

describe('root bootstrap', () => {
  it('creates root with INITIAL_ROOT_PASSWORD', async () => {
    app = await buildTestApp();
    const cookie = await login(app, 'root', ROOT_PASSWORD);
    const self = (await asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' })).json();
    expect(self.data).toMatchObject({ username: 'root', role: 100, status: 1, quota: 100_000_000 });
  });

  it('without it, prints a strong random password once and never uses 123456', async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void printed.push(parts.join(' ')));
    app = await buildTestApp({ initialRootPassword: undefined });
    const banner = printed.join('\n');
    const password = banner.match(/password: (\S+)/)?.[1];
    expect(password).toBeDefined();
    expect(password!.length).toBeGreaterThanOrEqual(16);
    expect(
      (await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: '123456' } })).json().success,
    ).toBe(false);
    await login(app, 'root', password!);
  });
});

describe('password hashing cost', () => {
  it('is bcrypt cost 10 unless the operator sets PASSWORD_HASH_COST, and a stored hash keeps its own cost', async () => {
    // the suites run at cost 4 (tests/support/app.ts); here the gateway's own default
    const defaults = loadConfig({ SQLITE_PATH: ':memory:', SESSION_SECRET: 'x'.repeat(32) });
    expect(defaults.passwordHashCost).toBe(10);
    expect(loadConfig({ SQLITE_PATH: ':memory:', SESSION_SECRET: 'x'.repeat(32), PASSWORD_HASH_COST: '12' }).passwordHashCost).toBe(12);
    for (const wrong of ['3', '32', '9.5', 'ten']) {
      expect(() => loadConfig({ SQLITE_PATH: ':memory:', SESSION_SECRET: 'x'.repeat(32), PASSWORD_HASH_COST: wrong })).toThrow(
        /PASSWORD_HASH_COST must be a whole number from 4 to 31/,
      );
    }
    app = await buildTestApp({ passwordHashCost: defaults.passwordHashCost });
    const root = await app.ctx.db.selectFrom('users').select('password_hash').where('username', '=', 'root').executeTakeFirstOrThrow();
    expect(root.password_hash).toMatch(/^\$2[aby]\$10\$/);
    await register(app, 'carol', 'password-123');
    const carol = await app.ctx.db.selectFrom('users').select('password_hash').where('username', '=', 'carol').executeTakeFirstOrThrow();
    expect(carol.password_hash).toMatch(/^\$2[aby]\$10\$/);
    await app.close();
    // under a cheaper setting a hash made at 10 still verifies (it carries its cost), and new ones are made at 4
    app = await buildTestApp({ passwordHashCost: 4 });
    await app.ctx.db.updateTable('users').set({ password_hash: carol.password_hash }).where('username', '=', 'root').execute();
    await login(app, 'root', 'password-123');
    await register(app, 'dave', 'password-123');
    const dave = await app.ctx.db.selectFrom('users').select('password_hash').where('username', '=', 'dave').executeTakeFirstOrThrow();
    expect(dave.password_hash).toMatch(/^\$2[aby]\$04\$/);
  });
});

describe('login and sessions', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and returns the session user', async () => {
    app = await buildTestApp();
    const response = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: ROOT_PASSWORD } });
    const body = response.json();
    expect(body).toEqual({
      success: true,
      message: '',
      data: { id: 1, username: 'root', display_name: 'Root User', role: 100, status: 1 },
    });
    const cookie = String(response.headers['set-cookie']);
    expect(cookie).toMatch(/^session=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Max-Age=2592000/);
  });

  it('refuses a wrong password and an unknown user with one message', async () => {
    app = await buildTestApp();
    const wrong = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: 'nope-nope-nope' } });
    const unknown = await app.inject({
      method: 'POST',
      url: '/api/user/login',
      payload: { username: 'ghost', password: 'nope-nope-nope' },
    });
    expect(wrong.json()).toEqual({ success: false, message: 'username or password is wrong', code: 'wrong_credentials' });
    expect(unknown.json()).toEqual(wrong.json());
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('rejects a forged cookie', async () => {
    app = await buildTestApp();
    const cookie = await login(app, 'root', ROOT_PASSWORD);
    const [payload] = cookie.slice('session='.length).split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), uid: 2 })).toString(
      'base64url',
    );
    const response = await asBrowser(app, `session=${forged}.${cookie.split('.')[1]}`, { method: 'GET', url: '/api/user/self' });
    expect(response.statusCode).toBe(401);
  });

  it("stops a banned user's existing session on the very next request", async () => {
    app = await buildTestApp();
    await register(app, 'alice');
    const cookie = await login(app, 'alice', 'password-123');
    expect((await asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(200);
    await app.ctx.db.updateTable('users').set({ status: 2 }).where('username', '=', 'alice').execute();
    const after = await asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ success: false, message: 'user is banned', code: 'user_banned' });
    expect(String(after.headers['set-cookie'])).toMatch(/session=;/);
    const relogin = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'alice', password: 'password-123' } });
    expect(relogin.json()).toEqual({ success: false, message: 'user is banned', code: 'user_banned' });
  });

  it('applies a demotion at once', async () => {
    app = await buildTestApp();
    await register(app, 'bob');
    await app.ctx.db.updateTable('users').set({ role: 100 }).where('username', '=', 'bob').execute();
    const cookie = await login(app, 'bob', 'password-123');
    expect((await asBrowser(app, cookie, { method: 'GET', url: '/api/option/' })).statusCode).toBe(200);
    await app.ctx.db.updateTable('users').set({ role: 1 }).where('username', '=', 'bob').execute();
    const refused = await asBrowser(app, cookie, { method: 'GET', url: '/api/option/' });
    expect(refused.statusCode).toBe(200);
    expect(refused.json()).toEqual({ success: false, message: 'insufficient permission', code: 'permission_denied' });
  });

  it('revokes other sessions when the password changes, keeping the caller signed in', async () => {
    app = await buildTestApp();
    await register(app, 'carol');
    const first = await login(app, 'carol', 'password-123');
    const second = await login(app, 'carol', 'password-123');
    const change = await asBrowser(app, first, {
      method: 'PUT',
      url: '/api/user/self',
      payload: { password: 'new-password-1', original_password: 'password-123' },
    });
    expect(change.json().success).toBe(true);
    const renewed = String(change.headers['set-cookie']).split(';')[0];
    expect((await asBrowser(app, renewed, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(200);
    expect((await asBrowser(app, second, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(401);
  });

  it('authenticates with an access token in Authorization, hashed at rest', async () => {
    app = await buildTestApp();
    await app.ctx.db
      .updateTable('users')
      .set({ access_token_hash: hashAccessToken('tok-123') })
      .where('username', '=', 'root')
      .execute();
    const plain = await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: 'tok-123' } });
    expect(plain.json().data.username).toBe('root');
    const bearer = await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: 'Bearer tok-123' } });
    expect(bearer.json().data.username).toBe('root');
    expect(JSON.stringify(bearer.json())).not.toContain('tok-123');
    const wrong = await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: 'tok-999' } });
    // as one-api answers a script with a wrong access token: a refusal in the envelope, not a 401
    expect(wrong.statusCode).toBe(200);
    expect(wrong.json()).toEqual({ success: false, message: 'access token invalid' });
  });

  it('logs out by clearing the cookie', async () => {
    app = await buildTestApp();
    const cookie = await login(app, 'root', ROOT_PASSWORD);
    const response = await asBrowser(app, cookie, { method: 'GET', url: '/api/user/logout' });
    expect(response.json()).toEqual({ success: true, message: '' });
    expect(String(response.headers['set-cookie'])).toMatch(/session=;/);
  });
});

describe('registration', () => {
  const attempt = (instance: FastifyInstance, payload: Record<string, unknown>) =>
    instance.inject({ method: 'POST', url: '/api/user/register', payload }).then((response) => response.json());

  it("applies the spec's rules with their messages", async () => {
    app = await buildTestApp();
    expect(await attempt(app, { username: 'dave', password: 'short', password2: 'short' })).toEqual({
      success: false,
      message: 'password length must not be less than 8',
    });
    expect(await attempt(app, { username: 'dave', password: 'password-1', password2: 'password-2' })).toEqual({
      success: false,
      message: 'the two passwords entered do not match',
      code: 'passwords_mismatch',
    });
    expect((await attempt(app, { username: '', password: 'password-1' })).message).toBe('username is required');
    expect((await attempt(app, { username: 'a-name-far-too-long', password: 'password-1' })).message).toMatch(/at most 12/);
    expect((await attempt(app, { username: 'bad name', password: 'password-1' })).success).toBe(false);
    expect(await attempt(app, { username: 'dave', password: 'password-1', password2: 'password-1' })).toEqual({
      success: true,
      message: '',
    });
    expect(await attempt(app, { username: 'dave', password: 'password-1' })).toEqual({
      success: false,
      message: 'username already taken',
      code: 'username_taken',
    });
  });

  it('gives new users QuotaForNewUser, pays both invite bonuses and logs each gift', async () => {
    app = await buildTestApp();
    await app.ctx.options.set('QuotaForNewUser', '2500');
    await app.ctx.options.set('QuotaForInvitee', '300');
    await app.ctx.options.set('QuotaForInviter', '700');
    await app.ctx.db.updateTable('users').set({ aff_code: 'ROOT' }).where('username', '=', 'root').execute();
    expect((await attempt(app, { username: 'erin', password: 'password-1', aff_code: 'ROOT' })).success).toBe(true);
    const erin = await app.ctx.db.selectFrom('users').selectAll().where('username', '=', 'erin').executeTakeFirstOrThrow();
    expect(erin).toMatchObject({ quota: 2800, inviter_id: 1, role: 1, status: 1 });
    // hashed with bcrypt at the configured cost (the suites use 4; the default, 10, is checked above)
    expect(erin.password_hash).toMatch(/^\$2[aby]\$04\$/);
    const root = await app.ctx.db.selectFrom('users').select('quota').where('username', '=', 'root').executeTakeFirstOrThrow();
    expect(root.quota).toBe(100_000_000 + 700);
    const gifts = await app.ctx.db.selectFrom('logs').select(['username', 'quota']).where('type', '=', 4).orderBy('id', 'asc').execute();
    expect(gifts).toEqual([
      { username: 'erin', quota: 2500 },
      { username: 'erin', quota: 300 },
      { username: 'root', quota: 700 },
    ]);
    expect((await attempt(app, { username: 'fred', password: 'password-1', aff_code: 'nobody' })).success).toBe(true);
    const fred = await app.ctx.db.selectFrom('users').selectAll().where('username', '=', 'fred').executeTakeFirstOrThrow();
    expect(fred).toMatchObject({ quota: 2500, inviter_id: 0 });
  });

  it('refuses when registration is closed', async () => {
    app = await buildTestApp();
    await app.ctx.options.set('RegisterEnabled', 'false');
    expect(await attempt(app, { username: 'frank', password: 'password-1' })).toEqual({
      success: false,
      message: 'registration is closed',
      code: 'registration_closed',
    });
  });

  it('lets a user delete their account but never root', async () => {
    app = await buildTestApp();
    await register(app, 'gina');
    const cookie = await login(app, 'gina', 'password-123');
    expect((await asBrowser(app, cookie, { method: 'DELETE', url: '/api/user/self' })).json().success).toBe(true);
    expect((await asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(401);
    const root = await login(app, 'root', ROOT_PASSWORD);
    expect((await asBrowser(app, root, { method: 'DELETE', url: '/api/user/self' })).json()).toEqual({
      success: false,
      message: 'cannot delete the super admin',
      code: 'root_protected',
    });
  });

  it('never returns the password hash or access token from the self endpoint', async () => {
    app = await buildTestApp();
    const cookie = await login(app, 'root', ROOT_PASSWORD);
    const self = (await asBrowser(app, cookie, { method: 'GET', url: '/api/user/self' })).json().data;
    expect(Object.keys(self)).not.toContain('password_hash');
    expect(Object.keys(self)).not.toContain('access_token_hash');
    expect(Object.keys(self)).not.toContain('session_version');
  });
});
