// An organisation's keys and balance through the console API: members make
// and see their own keys, the owner and admins every key, site admins top the
// balance up and set its budget; the account that holds the balance is no
// person (never listed, never signs in).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogType, TokenStatus } from '../../common/roles';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
const cookies: Record<string, string> = {};
let orgId = 0;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = async (who: string, method: Method, url: string, payload?: unknown) =>
  (await asBrowser(app, cookies[who], { method, url, ...(payload === undefined ? {} : { payload: payload as never }) })).json();

beforeAll(async () => {
  app = await buildTestApp();
  cookies.root = await login(app, 'root', ROOT_PASSWORD);
  for (const name of ['kate', 'liam', 'maya']) {
    await register(app, name);
    cookies[name] = await login(app, name, 'password-123');
  }
  orgId = (await call('root', 'POST', '/api/organization/', { name: 'Keys Co', owner: 'kate' })).data.id;
  expect((await call('kate', 'POST', `/api/organization/${orgId}/member`, { username: 'liam' })).success).toBe(true);
  expect((await call('kate', 'POST', `/api/organization/${orgId}/member`, { username: 'maya' })).success).toBe(true);
});
afterAll(async () => {
  await app.close();
});

describe("an organisation's keys", () => {
  let liamKey = 0;

  it('lets members make keys of their own and shows each member only theirs', async () => {
    const made = await call('liam', 'POST', `/api/organization/${orgId}/token`, { name: 'liam key', remain_quota: 5000 });
    expect(made).toMatchObject({ success: true, data: { name: 'liam key', member_username: 'liam', remain_quota: 5000 } });
    expect(made.data.key).toMatch(/^[A-Za-z0-9]{24,64}$/);
    liamKey = made.data.id;
    // as the token form's "Spends" sends it: the organisation's id rides along in the body
    expect((await call('maya', 'POST', `/api/organization/${orgId}/token`, { name: 'maya key', organization_id: orgId })).success).toBe(
      true,
    );
    const liamSees = (await call('liam', 'GET', `/api/organization/${orgId}/token`)).data;
    expect(liamSees.map((key: { name: string }) => key.name)).toEqual(['liam key']);
    // listed keys are masked; the secret has its own route, for its holder and the organisation's admins
    expect(liamSees[0].key).not.toBe(made.data.key);
    expect((await call('liam', 'GET', `/api/organization/${orgId}/token/${liamKey}/key`)).data).toBe(made.data.key);
    expect((await call('maya', 'GET', `/api/organization/${orgId}/token/${liamKey}/key`)).code).toBe('token_not_found');
    expect((await call('kate', 'GET', `/api/organization/${orgId}/token/${liamKey}/key`)).data).toBe(made.data.key);
    const kateSees = (await call('kate', 'GET', `/api/organization/${orgId}/token`)).data;
    expect(kateSees.map((key: { name: string }) => key.name)).toEqual(['maya key', 'liam key']);
  });

  it('keeps service keys and other members’ keys to the owner and admins', async () => {
    expect((await call('liam', 'POST', `/api/organization/${orgId}/token`, { name: 'svc', service: true })).code).toBe('permission_denied');
    const service = await call('kate', 'POST', `/api/organization/${orgId}/token`, { name: 'svc', service: true });
    expect(service.data).toMatchObject({ member_user_id: 0, member_username: '' });
    expect((await call('maya', 'PUT', `/api/organization/${orgId}/token`, { id: liamKey, status: TokenStatus.disabled })).code).toBe(
      'token_not_found',
    );
    expect((await call('maya', 'DELETE', `/api/organization/${orgId}/token/${liamKey}`)).code).toBe('token_not_found');
    const disabled = await call('kate', 'PUT', `/api/organization/${orgId}/token`, { id: liamKey, status: TokenStatus.disabled });
    expect(disabled.data.status).toBe(TokenStatus.disabled);
    expect((await call('liam', 'PUT', `/api/organization/${orgId}/token`, { id: liamKey, status: TokenStatus.enabled })).data.status).toBe(
      TokenStatus.enabled,
    );
    expect((await call('root', 'POST', `/api/organization/${orgId}/token`, { name: 'root own' })).message).toMatch(/only members/);
    expect((await call('root', 'POST', `/api/organization/${orgId}/token`, { name: 'root svc', service: true })).success).toBe(true);
  });

  it('tops the balance up as a logged top-up, and sets its budget', async () => {
    expect((await call('root', 'POST', `/api/organization/${orgId}/topup`, { quota: 0 })).success).toBe(false);
    expect((await call('root', 'POST', `/api/organization/${orgId}/topup`, { quota: 2500 })).data).toBe(2500);
    expect((await call('root', 'POST', `/api/organization/${orgId}/topup`, { quota: 500 })).data).toBe(3000);
    const logs = await app.ctx.db.selectFrom('logs').select(['quota', 'username']).where('type', '=', LogType.topup).execute();
    expect(logs.map((log) => [Number(log.quota), log.username])).toEqual([
      [2500, `org:${orgId}`],
      [500, `org:${orgId}`],
    ]);
    const budget = await call('root', 'PUT', '/api/organization/', { id: orgId, budget_period: 'month', budget_quota: 1000 });
    expect(budget.data).toMatchObject({ quota: 3000, budget_period: 'month', budget_quota: 1000 });
    expect((await call('root', 'PUT', '/api/organization/', { id: orgId, budget_period: 'year' })).success).toBe(false);
    expect((await call('kate', 'GET', '/api/organization/self')).data[0]).toMatchObject({ quota: 3000 });
  });

  it('keeps the account out of the users list and counts, and out of sign-in', async () => {
    const listed = (await call('root', 'GET', '/api/user/?p=0&page_size=100')).data.map((user: { username: string }) => user.username);
    expect(listed).not.toContain(`org:${orgId}`);
    expect(listed).toContain('kate');
    expect((await call('root', 'GET', `/api/user/search?keyword=org`)).data).toEqual([]);
    const signIn = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: `org:${orgId}`, password: '' } });
    expect(signIn.json().success).toBe(false);
    expect((await call('root', 'POST', '/api/organization/999999/topup', { quota: 1 })).code).toBe('not_found');
    // nor is it a user an admin edits (a quota edit there would bypass the logged top-up)
    const account = await app.ctx.db.selectFrom('users').select('id').where('organization_id', '=', orgId).executeTakeFirstOrThrow();
    expect((await call('root', 'GET', `/api/user/${account.id}`)).code).toBe('user_not_found');
    expect((await call('root', 'PUT', '/api/user/', { id: account.id, quota: 1 })).code).toBe('user_not_found');
    expect((await call('root', 'POST', '/api/user/manage', { username: `org:${orgId}`, action: 'disable' })).code).toBe('user_not_found');
  });

  it('disables an organisation’s account with it, and deletes its keys with it', async () => {
    await call('root', 'PUT', '/api/organization/', { id: orgId, status: 2 });
    const account = () => app.ctx.db.selectFrom('users').select(['id', 'status']).where('organization_id', '=', orgId).executeTakeFirst();
    expect(Number((await account())!.status)).toBe(2);
    expect((await call('liam', 'POST', `/api/organization/${orgId}/token`, { name: 'late' })).message).toMatch(/disabled/);
    expect((await call('root', 'PUT', '/api/organization/', { id: orgId, status: 1 })).success).toBe(true);
    expect(Number((await account())!.status)).toBe(1);
    const accountId = Number((await account())!.id);
    expect((await call('root', 'DELETE', `/api/organization/${orgId}`)).success).toBe(true);
    expect(await account()).toBeUndefined();
    expect(await app.ctx.db.selectFrom('tokens').select('id').where('user_id', '=', accountId).execute()).toEqual([]);
    // the money's history stays
    expect((await app.ctx.db.selectFrom('logs').select('id').where('user_id', '=', accountId).execute()).length).toBe(2);
  });
});
