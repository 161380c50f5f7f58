// Organisations through the console API: site admins create, page, search,
// edit and delete them; the owner and admins manage members without being
// site admins; members see the organisations they belong to.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
const cookies: Record<string, string> = {};
const ids: Record<string, number> = {};

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = async (who: string, method: Method, url: string, payload?: unknown) =>
  (await asBrowser(app, cookies[who], { method, url, ...(payload === undefined ? {} : { payload: payload as never }) })).json();

beforeAll(async () => {
  app = await buildTestApp();
  for (const name of ['olivia', 'adam', 'mia', 'nora', 'oscar']) {
    await register(app, name);
    cookies[name] = await login(app, name, 'password-123');
    ids[name] = Number((await call(name, 'GET', '/api/user/self')).data.id);
  }
  cookies.root = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app.close();
});

describe('organisations', () => {
  let orgId: number;

  it('a site admin creates an organisation with an owner, who sees it as theirs', async () => {
    const created = await call('root', 'POST', '/api/organization/', { name: ' Acme ', owner: 'olivia' });
    expect(created).toMatchObject({ success: true, data: { name: 'Acme', status: 1, owner_username: 'olivia', member_count: 1 } });
    orgId = created.data.id;
    expect((await call('root', 'POST', '/api/organization/', { name: 'Acme', owner: 'adam' })).message).toMatch(/already taken/);
    expect((await call('root', 'POST', '/api/organization/', { name: 'Nobody Inc', owner: 'no-such-user' })).code).toBe('user_not_found');
    expect((await call('root', 'POST', '/api/organization/', { name: '', owner: 'olivia' })).message).toMatch(/length must be 1-64/);
    const mine = await call('olivia', 'GET', '/api/organization/self');
    expect(mine.data).toEqual([expect.objectContaining({ id: orgId, name: 'Acme', role: 'owner' })]);
    expect((await call('olivia', 'GET', `/api/organization/${orgId}`)).data).toMatchObject({ id: orgId, role: 'owner' });
  });

  it('pages and searches the organisations for site admins', async () => {
    for (const name of ['Beta', 'Gamma'])
      expect((await call('root', 'POST', '/api/organization/', { name, owner: 'oscar' })).success).toBe(true);
    const first = await call('root', 'GET', '/api/organization/?p=0&page_size=10');
    expect(first.data.map((row: { name: string }) => row.name)).toEqual(['Gamma', 'Beta', 'Acme']);
    const paged = await call('root', 'GET', '/api/organization/?p=1&page_size=10');
    expect(paged.data).toEqual([]);
    const found = await call('root', 'GET', '/api/organization/search?keyword=Ga');
    expect(found.data.map((row: { name: string }) => row.name)).toEqual(['Gamma']);
    expect((await call('root', 'GET', `/api/organization/search?keyword=${orgId}`)).data[0].name).toBe('Acme');
  });

  it('lets the owner add members and admins, and an admin add members only', async () => {
    expect((await call('olivia', 'POST', `/api/organization/${orgId}/member`, { username: 'adam', role: 'admin' })).success).toBe(true);
    expect((await call('adam', 'POST', `/api/organization/${orgId}/member`, { username: 'mia' })).success).toBe(true);
    const refused = await call('adam', 'POST', `/api/organization/${orgId}/member`, { username: 'nora', role: 'admin' });
    expect(refused).toMatchObject({ success: false, code: 'permission_denied' });
    expect((await call('adam', 'POST', `/api/organization/${orgId}/member`, { username: 'mia' })).message).toMatch(/already a member/);
    const members = await call('adam', 'GET', `/api/organization/${orgId}/member?p=0`);
    expect(members.data.map((row: { username: string; role: string }) => [row.username, row.role])).toEqual([
      ['olivia', 'owner'],
      ['adam', 'admin'],
      ['mia', 'member'],
    ]);
    // a member sees the organisation but not its members
    expect((await call('mia', 'GET', `/api/organization/${orgId}/member`)).code).toBe('permission_denied');
    expect((await call('mia', 'GET', '/api/organization/self')).data).toEqual([expect.objectContaining({ id: orgId, role: 'member' })]);
  });

  it("shows the owner and admins their organisation's own audit rows, and nobody else", async () => {
    const rows = (await call('olivia', 'GET', `/api/organization/${orgId}/audit?p=0`)).data as Array<Record<string, unknown>>;
    // the calls made under /api/organization/:id, newest first: the three additions above, one of them refused
    const additions = rows.filter((row) => row.route === '/api/organization/:id/member' && row.method === 'POST');
    expect(additions.map((row) => [row.username, row.success])).toEqual([
      ['adam', false],
      ['adam', false],
      ['adam', true],
      ['olivia', true],
    ]);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.organization_id === orgId)).toBe(true);
    // the other organisations' creation (POST /api/organization/, no :id) is not among them
    expect(rows.some((row) => row.route === '/api/organization/')).toBe(false);
    expect((await call('adam', 'GET', `/api/organization/${orgId}/audit?p=0`)).data).toEqual(rows);
    expect((await call('mia', 'GET', `/api/organization/${orgId}/audit?p=0`)).code).toBe('permission_denied');
    expect((await call('nora', 'GET', `/api/organization/${orgId}/audit?p=0`)).code).toBe('not_found');
  });

  it('keeps the owner until ownership is transferred', async () => {
    const demote = await call('adam', 'PUT', `/api/organization/${orgId}/member`, { user_id: ids.olivia, role: 'member' });
    expect(demote).toMatchObject({ success: false, code: 'permission_denied' });
    const remove = await call('adam', 'DELETE', `/api/organization/${orgId}/member/${ids.olivia}`);
    expect(remove).toMatchObject({ success: false, code: 'permission_denied' });
    expect((await call('olivia', 'DELETE', `/api/organization/${orgId}/member/${ids.olivia}`)).message).toMatch(/transfer ownership/);
    // the owner hands over to the admin and stays on as an admin
    expect((await call('olivia', 'PUT', `/api/organization/${orgId}/member`, { user_id: ids.adam, role: 'owner' })).success).toBe(true);
    const roles = (await call('adam', 'GET', `/api/organization/${orgId}/member`)).data.map((row: { username: string; role: string }) => [
      row.username,
      row.role,
    ]);
    expect(roles).toEqual([
      ['adam', 'owner'],
      ['olivia', 'admin'],
      ['mia', 'member'],
    ]);
    expect((await call('root', 'GET', `/api/organization/${orgId}`)).data).toMatchObject({ owner_username: 'adam', member_count: 3 });
  });

  it('changes and removes members below the actor’s role; a member may leave', async () => {
    expect((await call('olivia', 'PUT', `/api/organization/${orgId}/member`, { user_id: ids.mia, role: 'admin' })).code).toBe(
      'permission_denied',
    );
    expect((await call('adam', 'PUT', `/api/organization/${orgId}/member`, { user_id: ids.mia, role: 'admin' })).success).toBe(true);
    expect((await call('adam', 'PUT', `/api/organization/${orgId}/member`, { user_id: ids.nora, role: 'admin' })).code).toBe('not_found');
    expect((await call('mia', 'DELETE', `/api/organization/${orgId}/member/${ids.olivia}`)).code).toBe('permission_denied');
    expect((await call('mia', 'DELETE', `/api/organization/${orgId}/member/${ids.mia}`)).success).toBe(true);
    expect((await call('mia', 'GET', '/api/organization/self')).data).toEqual([]);
    expect((await call('mia', 'GET', `/api/organization/${orgId}`)).code).toBe('not_found');
  });

  it('lets a site admin rename, disable and re-own an organisation; a disabled one is read-only to its members', async () => {
    const edited = await call('root', 'PUT', '/api/organization/', { id: orgId, name: 'Acme Ltd', status: 2, owner: 'nora' });
    expect(edited.data).toMatchObject({ name: 'Acme Ltd', status: 2, owner_username: 'nora' });
    expect((await call('nora', 'POST', `/api/organization/${orgId}/member`, { username: 'mia' })).code).toBe('permission_denied');
    expect((await call('nora', 'GET', `/api/organization/${orgId}`)).data).toMatchObject({ status: 2, role: 'owner' });
    expect((await call('root', 'PUT', '/api/organization/', { id: orgId, status: 1 })).data.status).toBe(1);
    expect((await call('nora', 'POST', `/api/organization/${orgId}/member`, { username: 'mia' })).success).toBe(true);
    expect((await call('root', 'PUT', '/api/organization/', { id: orgId, name: 'Beta' })).message).toMatch(/already taken/);
  });

  it('deletes an organisation and its memberships', async () => {
    expect((await call('root', 'DELETE', `/api/organization/${orgId}`)).success).toBe(true);
    expect((await call('root', 'GET', `/api/organization/${orgId}`)).code).toBe('not_found');
    expect((await call('nora', 'GET', '/api/organization/self')).data).toEqual([]);
    const left = await app.ctx.db.selectFrom('organization_members').select('user_id').where('organization_id', '=', orgId).execute();
    expect(left).toEqual([]);
  });

  it('forgets the memberships of a deleted user', async () => {
    const gamma = (await call('root', 'GET', '/api/organization/search?keyword=Gamma')).data[0];
    expect((await call('oscar', 'POST', `/api/organization/${gamma.id}/member`, { username: 'mia' })).success).toBe(true);
    expect((await call('root', 'DELETE', `/api/user/${ids.mia}/`)).success).toBe(true);
    expect((await call('root', 'GET', `/api/organization/${gamma.id}`)).data.member_count).toBe(1);
  });
});
