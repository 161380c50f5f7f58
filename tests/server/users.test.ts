// User administration, the access token and the invite code.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
let root: string;
let admin: string;
let user: string;

beforeAll(async () => {
  app = await buildTestApp();
  root = await login(app, 'root', ROOT_PASSWORD);
  await register(app, 'admin1');
  await register(app, 'admin2');
  await register(app, 'user1');
  await app.ctx.db.updateTable('users').set({ role: 10 }).where('username', 'in', ['admin1', 'admin2']).execute();
  admin = await login(app, 'admin1', 'password-123');
  user = await login(app, 'user1', 'password-123');
});
afterAll(async () => {
  await app.close();
});

const call = (cookie: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  asBrowser(app, cookie, { method, url, payload: payload as never }).then((response) => response.json());
const idOf = async (username: string) =>
  Number((await app.ctx.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id);

describe('user administration', () => {
  it('lists users without password hashes or access tokens', async () => {
    await call(root, 'GET', '/api/user/token');
    const list = await call(admin, 'GET', '/api/user/?p=0');
    expect(list.data.map((row: { username: string }) => row.username)).toEqual(['user1', 'admin2', 'admin1', 'root']);
    const text = JSON.stringify(list);
    expect(text).not.toMatch(/password|access_token|session_version/);
    const search = await call(admin, 'GET', '/api/user/search?keyword=adm');
    expect(search.data.map((row: { username: string }) => row.username)).toEqual(['admin2', 'admin1']);
  });

  it('lets an admin manage common users but not peers or root', async () => {
    expect(await call(admin, 'POST', '/api/user/manage', { username: 'user1', action: 'disable' })).toEqual({
      success: true,
      message: '',
      data: { role: 1, status: 2 },
    });
    expect((await asBrowser(app, user, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(401);
    expect((await call(admin, 'POST', '/api/user/manage', { username: 'user1', action: 'enable' })).data).toEqual({ role: 1, status: 1 });
    expect((await call(admin, 'POST', '/api/user/manage', { username: 'admin2', action: 'disable' })).message).toBe(
      'cannot manage a user of the same or higher level',
    );
    expect((await call(admin, 'POST', '/api/user/manage', { username: 'root', action: 'delete' })).message).toBe(
      'cannot manage a user of the same or higher level',
    );
    expect((await call(admin, 'POST', '/api/user/manage', { username: 'user1', action: 'promote' })).message).toBe(
      'only the super admin can promote',
    );
    expect((await call(admin, 'GET', `/api/user/${await idOf('admin2')}`)).message).toBe('cannot read a user of the same or higher level');
    expect((await call(admin, 'POST', '/api/user/manage', { username: '', action: 'disable' })).message).toBe('user does not exist');
  });

  it('never lets root be demoted, banned or deleted, even by root', async () => {
    for (const action of ['demote', 'disable', 'delete']) {
      expect((await call(root, 'POST', '/api/user/manage', { username: 'root', action })).success).toBe(false);
    }
    expect((await call(root, 'POST', '/api/user/manage', { username: 'root', action: 'explode' })).message).toBe('unknown action');
  });

  it('lets root promote and demote', async () => {
    expect((await call(root, 'POST', '/api/user/manage', { username: 'user1', action: 'promote' })).data).toEqual({ role: 10, status: 1 });
    expect((await call(root, 'POST', '/api/user/manage', { username: 'user1', action: 'demote' })).data).toEqual({ role: 1, status: 1 });
  });

  it("edits only the form's fields, logs quota changes, and allows a quota of 0", async () => {
    const id = await idOf('user1');
    expect(await call(admin, 'PUT', '/api/user/', { id, quota: 250 })).toEqual({ success: true, message: '' });
    const edit = await call(admin, 'PUT', '/api/user/', {
      id,
      display_name: 'User One',
      quota: 0,
      group: 'vip',
      role: 100,
      used_quota: 999,
      access_token_hash: 'x',
    });
    expect(edit).toEqual({ success: true, message: '' });
    const row = await app.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ display_name: 'User One', quota: 0, group: 'vip', role: 1, used_quota: 0, access_token_hash: null });
    const logs = await app.ctx.db
      .selectFrom('logs')
      .select('content')
      .where('user_id', '=', id)
      .where('type', '=', 3)
      .orderBy('id', 'asc')
      .execute();
    expect(logs.map((log) => log.content)).toEqual(['admin1 changed the quota from 0 to 250', 'admin1 changed the quota from 250 to 0']);
    expect((await call(admin, 'PUT', '/api/user/', { id: await idOf('admin2'), quota: 1 })).message).toBe(
      'cannot update a user of the same or higher level',
    );
    expect((await call(admin, 'PUT', '/api/user/', { id: await idOf('admin1'), quota: 1_000_000 })).message).toBe(
      'cannot update a user of the same or higher level',
    );
    expect((await call(admin, 'PUT', '/api/user/', { id, quota: -1 })).success).toBe(false);
  });

  it('creates users with role 1 whatever the body says', async () => {
    expect(await call(admin, 'POST', '/api/user/', { username: 'made', password: 'password-9', display_name: 'Made', role: 100 })).toEqual({
      success: true,
      message: '',
    });
    const made = await app.ctx.db.selectFrom('users').selectAll().where('username', '=', 'made').executeTakeFirstOrThrow();
    expect(made).toMatchObject({ role: 1, status: 1, display_name: 'Made' });
    expect((await call(admin, 'POST', '/api/user/', { username: 'made', password: 'password-9' })).message).toBe('username already taken');
  });

  it('creates a user with the quota, group and budget the form set, in one step', async () => {
    expect((await call(root, 'PUT', '/api/option/', { key: 'GroupRatio', value: '{"default":1,"team":0.5}' })).success).toBe(true);
    const created = await call(admin, 'POST', '/api/user/', {
      username: 'funded',
      password: 'password-9',
      quota: 2_500_000,
      group: 'team',
      budget_period: 'month',
      budget_quota: 500_000,
    });
    expect(created).toEqual({ success: true, message: '' });
    const row = await app.ctx.db.selectFrom('users').selectAll().where('username', '=', 'funded').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ role: 1, quota: 2_500_000, group: 'team', budget_period: 'month', budget_quota: 500_000 });
    // what the list then says of the new user
    const listed = (await call(admin, 'GET', '/api/user/search?keyword=funded')).data[0];
    expect(listed).toMatchObject({ quota: 2_500_000, group: 'team', budget_period: 'month', budget_quota: 500_000 });
  });

  it('gives a new user the new-user quota, the default group and no budget when the body names none', async () => {
    expect((await call(root, 'PUT', '/api/option/', { key: 'QuotaForNewUser', value: '4321' })).success).toBe(true);
    expect((await call(admin, 'POST', '/api/user/', { username: 'plain', password: 'password-9', quota: null, group: '' })).success).toBe(
      true,
    );
    const row = await app.ctx.db.selectFrom('users').selectAll().where('username', '=', 'plain').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ quota: 4321, group: 'default', budget_period: '', budget_quota: 0 });
  });

  it('refuses a group that does not exist, a negative quota or a budget without an amount, and creates nothing', async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ group: 'nosuch' }, 'group "nosuch" does not exist: use "default" or a group the group ratios (GroupRatio) name'],
      [{ quota: -1 }, 'quota must be a whole number, 0 or more'],
      [{ quota: '-5' }, 'quota must be a whole number, 0 or more'],
      [{ budget_period: 'week' }, 'budget_quota must be a whole number of quota above 0 when a budget period is set'],
      [{ budget_period: 'year', budget_quota: 10 }, 'budget_period must be one of "", "day", "week" or "month"'],
    ];
    for (const [fields, message] of refusals) {
      expect(await call(admin, 'POST', '/api/user/', { username: 'refused', password: 'password-9', ...fields })).toEqual({
        success: false,
        message,
      });
    }
    const fractional = await asBrowser(app, admin, {
      method: 'POST',
      url: '/api/user/',
      payload: { username: 'refused', password: 'password-9', quota: 1.5 },
    });
    expect(fractional.json().success).toBe(false);
    expect(await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'refused').execute()).toEqual([]);
    // a common user may not create anyone, with or without an allowance
    expect((await call(user, 'POST', '/api/user/', { username: 'refused', password: 'password-9', quota: 5 })).success).toBe(false);
    expect(await app.ctx.db.selectFrom('users').select('id').where('username', '=', 'refused').execute()).toEqual([]);
  });

  it('deletes a user and their tokens', async () => {
    await register(app, 'leaver');
    const leaver = await login(app, 'leaver', 'password-123');
    await call(leaver, 'POST', '/api/token/', { name: 'mine' });
    const id = await idOf('leaver');
    expect((await call(admin, 'POST', '/api/user/manage', { username: 'leaver', action: 'delete' })).success).toBe(true);
    expect(await app.ctx.db.selectFrom('tokens').select('id').where('user_id', '=', id).execute()).toEqual([]);
    expect((await asBrowser(app, leaver, { method: 'GET', url: '/api/user/self' })).statusCode).toBe(401);
  });

  it("deletes by id (DELETE /api/user/{id}/, the console's Delete button) under the same rules", async () => {
    await register(app, 'gone');
    const id = await idOf('gone');
    expect(await call(admin, 'DELETE', `/api/user/${await idOf('admin2')}/`)).toEqual({
      success: false,
      message: 'cannot delete a user of the same or higher level',
      code: 'outranked',
    });
    expect(await call(root, 'DELETE', `/api/user/${await idOf('root')}/`)).toEqual({
      success: false,
      message: 'cannot delete the super admin',
      code: 'root_protected',
    });
    expect(await call(admin, 'DELETE', '/api/user/99999/')).toEqual({ success: false, message: 'user not found', code: 'user_not_found' });
    expect((await call(user, 'DELETE', `/api/user/${id}/`)).success).toBe(false);
    expect(await call(admin, 'DELETE', `/api/user/${id}/`)).toEqual({ success: true, message: '' });
    expect(await app.ctx.db.selectFrom('users').select('id').where('id', '=', id).execute()).toEqual([]);
  });
});

describe('access token and invite code', () => {
  it('issues an access token that works once shown and is stored hashed', async () => {
    const issued = await call(user, 'GET', '/api/user/token');
    expect(issued.data).toMatch(/^[0-9a-f]{32}$/);
    const row = await app.ctx.db.selectFrom('users').select('access_token_hash').where('username', '=', 'user1').executeTakeFirstOrThrow();
    expect(row.access_token_hash).not.toBe(issued.data);
    const viaToken = await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: issued.data } });
    expect(viaToken.json().data.username).toBe('user1');
    const rotated = await call(user, 'GET', '/api/user/token');
    expect((await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: issued.data } })).json()).toEqual({
      success: false,
      message: 'access token invalid',
    });
    expect((await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: rotated.data } })).statusCode).toBe(200);
  });

  it('creates an invite code once and keeps it', async () => {
    const first = await call(user, 'GET', '/api/user/aff');
    expect(first.data).toMatch(/^[0-9A-Za-z]{8}$/);
    expect((await call(user, 'GET', '/api/user/aff')).data).toBe(first.data);
  });
});
