// Cross-tenant: the admin of organisation A (not a site admin) calls every
// organisation route against B's ids, and the site's own routes against
// other people's records. The test reports each call that got through (see
// reached()) or whose answer named anything of B's, and asserts there are
// none; then it compares every table B's data lives in, row for row, before
// and after.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../server/db/database';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
const cookies: Record<string, string> = {};
const ids: Record<string, number> = {};
let alpha: number;
let bravo: number;
let bravoKey = '';
let bravoTokenId = 0;
/** A key spending B's money, held by B's member. */
let bravoOrgKey = { id: 0, key: '' };

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = async (who: string, method: Method, url: string, payload?: unknown) =>
  asBrowser(app, cookies[who], { method, url, ...(payload === undefined ? {} : { payload: payload as never }) });

/** Every row of the tables that hold B's organisation, people, keys and the site's settings. */
async function snapshot(db: Kysely<Database>) {
  return {
    organizations: await db.selectFrom('organizations').selectAll().orderBy('id').execute(),
    members: await db.selectFrom('organization_members').selectAll().orderBy('organization_id').orderBy('user_id').execute(),
    users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
    tokens: await db.selectFrom('tokens').selectAll().orderBy('id').execute(),
    channels: await db.selectFrom('channels').selectAll().orderBy('id').execute(),
    options: await db.selectFrom('options').selectAll().orderBy('key').execute(),
  };
}

beforeAll(async () => {
  app = await buildTestApp();
  cookies.root = await login(app, 'root', ROOT_PASSWORD);
  for (const name of ['alpha-owner', 'alpha-admin', 'bravo-owner', 'bravo-member', 'bystander']) {
    await register(app, name);
    cookies[name] = await login(app, name, 'password-123');
    ids[name] = Number((await call(name, 'GET', '/api/user/self')).json().data.id);
  }
  alpha = (await call('root', 'POST', '/api/organization/', { name: 'alpha-org', owner: 'alpha-owner' })).json().data.id;
  bravo = (await call('root', 'POST', '/api/organization/', { name: 'bravo-org', owner: 'bravo-owner' })).json().data.id;
  expect(
    (await call('alpha-owner', 'POST', `/api/organization/${alpha}/member`, { username: 'alpha-admin', role: 'admin' })).json().success,
  ).toBe(true);
  expect((await call('bravo-owner', 'POST', `/api/organization/${bravo}/member`, { username: 'bravo-member' })).json().success).toBe(true);
  const token = (await call('bravo-owner', 'POST', '/api/token/', { name: 'bravo-key' })).json().data;
  bravoTokenId = token.id;
  bravoKey = String(token.key).replace(/^sk-/, '');
  const orgKey = (await call('bravo-member', 'POST', `/api/organization/${bravo}/token`, { name: 'bravo-org-key' })).json().data;
  bravoOrgKey = { id: orgKey.id, key: orgKey.key };
});
afterAll(async () => {
  await app.close();
});

/** What A's admin tries: [method, url, body]. */
function attempts(): Array<[Method, string, unknown?]> {
  const b = `/api/organization/${bravo}`;
  return [
    // B's organisation through the organisation routes
    ['GET', b],
    ['GET', `${b}/member`],
    ['GET', `${b}/member?p=0&page_size=100`],
    ['GET', `${b}/audit?p=0`],
    ['GET', `${b}/usage`],
    ['POST', `${b}/member`, { username: 'bystander' }],
    ['POST', `${b}/member`, { username: 'alpha-admin', role: 'owner' }],
    ['PUT', `${b}/member`, { user_id: ids['bravo-member'], role: 'admin' }],
    ['PUT', `${b}/member`, { user_id: ids['bravo-owner'], role: 'member' }],
    ['PUT', `${b}/member`, { user_id: ids['alpha-admin'], role: 'owner' }],
    ['DELETE', `${b}/member/${ids['bravo-member']}`],
    ['DELETE', `${b}/member/${ids['bravo-owner']}`],
    ['GET', `${b}/token`],
    ['GET', `${b}/token/${bravoOrgKey.id}/key`],
    ['POST', `${b}/token`, { name: 'spend-bravo' }],
    ['POST', `${b}/token`, { name: 'spend-bravo', service: true }],
    ['PUT', `${b}/token`, { id: bravoOrgKey.id, status: 2 }],
    ['DELETE', `${b}/token/${bravoOrgKey.id}`],
    ['POST', `${b}/topup`, { quota: 1000 }],
    // B's people through A's own organisation
    ['PUT', `/api/organization/${alpha}/member`, { user_id: ids['bravo-member'], role: 'admin' }],
    ['DELETE', `/api/organization/${alpha}/member/${ids['bravo-owner']}`],
    ['GET', `/api/organization/${alpha}/token/${bravoOrgKey.id}/key`],
    ['PUT', `/api/organization/${alpha}/token`, { id: bravoOrgKey.id, status: 2 }],
    ['DELETE', `/api/organization/${alpha}/token/${bravoOrgKey.id}`],
    ['POST', `/api/organization/${alpha}/topup`, { quota: 1000 }],
    // the site admins' organisation routes
    ['GET', '/api/organization/?p=0'],
    ['GET', '/api/organization/search?keyword=bravo'],
    ['POST', '/api/organization/', { name: 'gamma-org', owner: 'alpha-admin' }],
    ['PUT', '/api/organization/', { id: bravo, name: 'taken-over' }],
    ['PUT', '/api/organization/', { id: alpha, owner: 'alpha-admin' }],
    ['DELETE', b],
    ['DELETE', `/api/organization/${alpha}`],
    // the site's routes: people, keys, channels, settings, logs
    ['GET', '/api/user/?p=0'],
    ['GET', '/api/user/search?keyword=bravo'],
    ['GET', `/api/user/${ids['bravo-owner']}`],
    ['PUT', '/api/user/', { id: ids['bravo-owner'], quota: 1 }],
    ['POST', '/api/user/manage', { username: 'bravo-owner', action: 'disable' }],
    ['DELETE', `/api/user/${ids['bravo-owner']}/`],
    ['GET', `/api/token/${bravoTokenId}`],
    ['GET', `/api/token/${bravoTokenId}/key`],
    ['GET', `/api/token/search?keyword=sk-${bravoKey}`],
    ['PUT', '/api/token/', { id: bravoTokenId, name: 'mine-now' }],
    ['PUT', '/api/token/?status_only=true', { id: bravoTokenId, status: 2 }],
    ['POST', '/api/token/bulk', { ids: [bravoTokenId], action: 'delete' }],
    ['DELETE', `/api/token/${bravoTokenId}/`],
    ['GET', `/api/token/${bravoOrgKey.id}/key`],
    ['PUT', '/api/token/?status_only=true', { id: bravoOrgKey.id, status: 2 }],
    ['DELETE', `/api/token/${bravoOrgKey.id}/`],
    ['GET', '/api/channel/?p=0'],
    ['POST', '/api/channel/', { name: 'x', type: 1, key: 'sk-x', models: 'gpt-4o' }],
    ['GET', '/api/option/'],
    ['PUT', '/api/option/', { key: 'Notice', value: 'owned' }],
    ['GET', '/api/log/?p=0'],
    ['GET', '/api/log/search?keyword=bravo'],
    ['GET', '/api/log/stat'],
    ['GET', '/api/audit/?p=0'],
    ['GET', '/api/audit/search?keyword=bravo'],
  ];
}

type Answer = { success?: boolean; data?: unknown };

/**
 * Whether a call got through: a change that succeeded, or a read that
 * answered rows. A bulk answer is a success listing what failed, so it counts
 * only when something was done; a search of the caller's own keys may answer
 * success with nothing in it.
 */
function reached(method: Method, url: string, answer: Answer): boolean {
  if (answer.success === false) return false;
  if (url.endsWith('/bulk')) return ((answer.data as { done?: unknown[] } | undefined)?.done ?? []).length > 0;
  if (method !== 'GET') return true;
  return !(Array.isArray(answer.data) && answer.data.length === 0);
}

/** Words only B's records contain: an answer naming one reached them. */
const bravoWords = () => ['bravo-org', 'bravo-owner', 'bravo-member', 'bravo-key', bravoKey, bravoOrgKey.key];

describe('organisation tenancy', () => {
  it("lets A's admin reach and change none of B's rows, nor the site's", async () => {
    const before = await snapshot(app.ctx.db);
    const leaks: string[] = [];
    const tried = attempts();
    for (const [method, url, payload] of tried) {
      const response = await call('alpha-admin', method, url, payload);
      const text = response.body;
      if (reached(method, url, JSON.parse(text) as Answer)) leaks.push(`${method} ${url}: answered success`);
      const named = bravoWords().filter((word) => text.includes(word));
      if (named.length) leaks.push(`${method} ${url}: named ${named.join(', ')}`);
    }
    const after = await snapshot(app.ctx.db);
    const changed = Object.keys(before).filter(
      (table) => JSON.stringify(before[table as keyof typeof before]) !== JSON.stringify(after[table as keyof typeof after]),
    );
    console.info(`organisation tenancy: ${tried.length} calls by A's admin; leaks: ${leaks.length}; tables changed: ${changed.length}`);
    expect(leaks).toEqual([]);
    expect(changed).toEqual([]);
  });

  it("still lets A's admin manage A (the refusals above are not a broken route)", async () => {
    expect((await call('alpha-admin', 'GET', `/api/organization/${alpha}/member`)).json().data).toHaveLength(2);
    expect((await call('alpha-admin', 'POST', `/api/organization/${alpha}/member`, { username: 'bystander' })).json().success).toBe(true);
    expect((await call('alpha-admin', 'DELETE', `/api/organization/${alpha}/member/${ids.bystander}`)).json().success).toBe(true);
    expect((await call('bravo-owner', 'GET', `/api/organization/${bravo}/member`)).json().data).toHaveLength(2);
    expect((await call('alpha-admin', 'POST', `/api/organization/${alpha}/token`, { name: 'alpha key' })).json().success).toBe(true);
    expect((await call('bravo-owner', 'GET', `/api/organization/${bravo}/token`)).json().data).toHaveLength(1);
  });
});
