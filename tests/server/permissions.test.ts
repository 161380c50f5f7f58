// Every console route, called as guest, user, admin and root. The table is the
// contract: the minimum role each route needs. "Allowed" means the auth layer
// let the call through (HTTP 200 with an envelope); the handler may still say no.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

type Who = 'guest' | 'user' | 'admin' | 'root';
const RANK: Record<Who, number> = { guest: 0, user: 1, admin: 10, root: 100 };

// rest: a resource in ra-data-simple-rest's convention (routes/api/simpleRest.ts): allowed calls answer
// with a real status and no envelope, a signed-in caller below the minimum gets 403 (not 200) with the envelope
const MATRIX: Array<{ method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; minimum: Who; payload?: unknown; rest?: true }> = [
  // method  url                         minimum role
  { method: 'GET', url: '/api/status', minimum: 'guest' },
  { method: 'GET', url: '/api/notice', minimum: 'guest' },
  { method: 'GET', url: '/api/about', minimum: 'guest' },
  { method: 'GET', url: '/api/home_page_content', minimum: 'guest' },
  { method: 'GET', url: '/api/user/self', minimum: 'user' },
  { method: 'PUT', url: '/api/user/self', minimum: 'user', payload: {} },
  { method: 'GET', url: '/api/option/', minimum: 'admin' },
  { method: 'PUT', url: '/api/option/', minimum: 'admin', payload: { key: 'Notice', value: 'hello' } },
  { method: 'PUT', url: '/api/option/', minimum: 'root', payload: { key: 'TopUpLink', value: 'https://shop.example.com' } },
  { method: 'POST', url: '/api/option/test_email', minimum: 'root' },
  { method: 'GET', url: '/api/release/latest', minimum: 'admin' },
  { method: 'GET', url: '/api/user/aff', minimum: 'user' },
  { method: 'POST', url: '/api/user/topup', minimum: 'user', payload: { key: 'no-such-code' } },
  { method: 'GET', url: '/api/token/?p=0', minimum: 'user' },
  { method: 'GET', url: '/api/token/search?keyword=a', minimum: 'user' },
  { method: 'GET', url: '/api/token/999', minimum: 'user' },
  { method: 'GET', url: '/api/token/999/key', minimum: 'user' },
  { method: 'POST', url: '/api/token/', minimum: 'user', payload: { name: 'matrix' } },
  { method: 'PUT', url: '/api/token/', minimum: 'user', payload: { id: 999, name: 'x' } },
  { method: 'PUT', url: '/api/token/?status_only=true', minimum: 'user', payload: { id: 999, status: 2 } },
  { method: 'DELETE', url: '/api/token/999/', minimum: 'user' },
  { method: 'GET', url: '/api/user/?p=0', minimum: 'admin' },
  { method: 'GET', url: '/api/user/search?keyword=a', minimum: 'admin' },
  { method: 'GET', url: '/api/user/2', minimum: 'admin' },
  { method: 'POST', url: '/api/user/', minimum: 'admin', payload: { username: '', password: '' } },
  { method: 'PUT', url: '/api/user/', minimum: 'admin', payload: { id: 999 } },
  { method: 'POST', url: '/api/user/manage', minimum: 'admin', payload: { username: 'nobody', action: 'enable' } },
  { method: 'DELETE', url: '/api/user/999/', minimum: 'admin' },
  { method: 'GET', url: '/api/redemption/?p=0', minimum: 'admin' },
  { method: 'GET', url: '/api/redemption/search?keyword=a', minimum: 'admin' },
  { method: 'GET', url: '/api/redemption/999', minimum: 'admin' },
  { method: 'GET', url: '/api/redemption/999/key', minimum: 'admin' },
  { method: 'POST', url: '/api/redemption/', minimum: 'admin', payload: { name: 'matrix', quota: 1, count: 1 } },
  { method: 'PUT', url: '/api/redemption/', minimum: 'admin', payload: { id: 999, name: 'x' } },
  { method: 'DELETE', url: '/api/redemption/999/', minimum: 'admin' },
  { method: 'GET', url: '/api/oauth/state', minimum: 'guest' },
  { method: 'GET', url: '/api/oauth/github?code=x&state=y', minimum: 'guest' },
  { method: 'GET', url: '/api/oauth/oidc/start', minimum: 'guest' },
  { method: 'GET', url: '/api/oauth/oidc?code=x&state=y', minimum: 'guest' },
  { method: 'GET', url: '/api/oauth/wechat?code=x', minimum: 'guest' },
  { method: 'GET', url: '/api/oauth/wechat/bind?code=x', minimum: 'user' },
  { method: 'GET', url: '/api/oauth/email/bind?email=a@b.co&code=1', minimum: 'user' },
  { method: 'GET', url: '/api/verification?email=not-an-email', minimum: 'guest' },
  { method: 'GET', url: '/api/reset_password?email=not-an-email', minimum: 'guest' },
  { method: 'POST', url: '/api/user/reset', minimum: 'guest', payload: { email: 'a@b.co', token: 'x' } },
  { method: 'GET', url: '/api/channel/?p=0', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/search?keyword=a', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/999', minimum: 'admin' },
  { method: 'POST', url: '/api/channel/', minimum: 'admin', payload: { name: '' } },
  { method: 'PUT', url: '/api/channel/', minimum: 'admin', payload: { id: 999, status: 2 } },
  { method: 'DELETE', url: '/api/channel/999/', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/test/999', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/test', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/update_balance/999', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/update_balance', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/jobs/no-such-job', minimum: 'admin' },
  { method: 'POST', url: '/api/channel/bulk', minimum: 'admin', payload: { ids: [999], action: 'disable' } },
  { method: 'GET', url: '/api/channel/999/keys', minimum: 'admin' },
  { method: 'POST', url: '/api/channel/999/keys', minimum: 'admin', payload: { keys: 'sk-matrix-key' } },
  { method: 'PUT', url: '/api/channel/999/keys/1', minimum: 'admin', payload: { status: 2 } },
  { method: 'DELETE', url: '/api/channel/999/keys/1', minimum: 'admin' },
  { method: 'GET', url: '/api/channel/999/keys/1/test', minimum: 'admin' },
  { method: 'POST', url: '/api/redemption/bulk', minimum: 'admin', payload: { ids: [999], action: 'disable' } },
  { method: 'POST', url: '/api/token/bulk', minimum: 'user', payload: { ids: [999], action: 'disable' } },
  { method: 'GET', url: '/api/group/', minimum: 'admin' },
  { method: 'GET', url: '/api/log/self/?p=0', minimum: 'user' },
  { method: 'GET', url: '/api/log/self/stat', minimum: 'user' },
  { method: 'GET', url: '/api/log/self/search?keyword=1', minimum: 'user' },
  { method: 'GET', url: '/api/log/?p=0', minimum: 'admin' },
  { method: 'GET', url: '/api/log/stat', minimum: 'admin' },
  { method: 'GET', url: '/api/log/search?keyword=1', minimum: 'admin' },
  // asynchronous tasks (videos, batches): a user's own, everyone's for admins
  { method: 'GET', url: '/api/task/self?p=0', minimum: 'user' },
  { method: 'GET', url: '/api/task/?p=0', minimum: 'admin' },
  // one task's bytes, files and cancel (the owner or an admin; taskActions.test.ts): real statuses, 404 for an unknown task
  { method: 'GET', url: '/api/task/video_none/content', minimum: 'user', rest: true },
  { method: 'GET', url: '/api/task/batch_none/files/output', minimum: 'user', rest: true },
  { method: 'POST', url: '/api/task/batch_none/cancel', minimum: 'user', rest: true },
  { method: 'GET', url: '/api/import/', minimum: 'root' },
  { method: 'POST', url: '/api/import/', minimum: 'root', payload: { source: '/no/such/one-api.db' } },
  { method: 'GET', url: '/api/retention/', minimum: 'admin' },
  // every kind is kept forever here: past the role check the handler refuses, as the envelope says
  { method: 'POST', url: '/api/retention/prune', minimum: 'admin' },
  { method: 'GET', url: '/api/webhook?sort=["id","DESC"]&range=[0,9]&filter={}', minimum: 'admin', rest: true },
  { method: 'GET', url: '/api/webhook/999', minimum: 'admin', rest: true },
  {
    method: 'POST',
    url: '/api/webhook',
    minimum: 'admin',
    rest: true,
    payload: { name: 'matrix', url: 'http://127.0.0.1:9/', events: ['token.exhausted'] },
  },
  { method: 'PUT', url: '/api/webhook/999', minimum: 'admin', rest: true, payload: { name: 'x' } },
  { method: 'DELETE', url: '/api/webhook/999', minimum: 'admin', rest: true },
  { method: 'POST', url: '/api/webhook/999/test', minimum: 'admin', rest: true },
  { method: 'GET', url: '/api/webhook_delivery?range=[0,9]', minimum: 'admin', rest: true },
  { method: 'GET', url: '/api/webhook_delivery/999', minimum: 'admin', rest: true },
  { method: 'POST', url: '/api/webhook_delivery/999/redeliver', minimum: 'admin', rest: true },
  // 'user' while PublicPricingEnabled is off (the default); the test below turns it on
  { method: 'GET', url: '/api/pricing', minimum: 'user' },
  { method: 'PUT', url: '/api/option/', minimum: 'admin', payload: { key: 'PublicPricingEnabled', value: 'false' } },
  { method: 'GET', url: '/api/pricing/defaults', minimum: 'admin' },
  { method: 'GET', url: '/api/user/2fa', minimum: 'user' },
  { method: 'POST', url: '/api/user/2fa/enrol', minimum: 'user' },
  { method: 'POST', url: '/api/user/2fa/confirm', minimum: 'user', payload: { code: '000000' } },
  { method: 'POST', url: '/api/user/2fa/disable', minimum: 'user', payload: { code: '000000' } },
  { method: 'GET', url: '/api/user/2/2fa', minimum: 'root' },
  { method: 'POST', url: '/api/user/999/2fa/reset', minimum: 'root' },
  { method: 'GET', url: '/api/user/passkey', minimum: 'user' },
  { method: 'POST', url: '/api/user/passkey/register/options', minimum: 'user' },
  {
    method: 'POST',
    url: '/api/user/passkey/register/verify',
    minimum: 'user',
    payload: { name: 'matrix', credential: { id: 'x', rawId: 'x', type: 'public-key', response: {} } },
  },
  { method: 'DELETE', url: '/api/user/passkey/999', minimum: 'user' },
  { method: 'POST', url: '/api/passkey/login/options', minimum: 'guest' },
  {
    method: 'POST',
    url: '/api/passkey/login/verify',
    minimum: 'guest',
    payload: { credential: { id: 'x', rawId: 'x', type: 'public-key', response: {} } },
  },
  { method: 'GET', url: '/api/setup/checklist', minimum: 'root' },
  { method: 'POST', url: '/api/setup/checklist/dismiss', minimum: 'root' },
  // the audit log (its CSV export, which answers without an envelope, is checked in audit.test.ts)
  { method: 'GET', url: '/api/audit/?p=0', minimum: 'admin' },
  { method: 'GET', url: '/api/audit/search?keyword=a', minimum: 'admin' },
  { method: 'GET', url: '/api/audit/verify', minimum: 'admin' },
  // organisations: site admins manage them all; the member routes open to any signed-in user and then ask
  // the caller's standing in the organisation (common/organizations.ts, tests/server/organizationTenancy.test.ts)
  { method: 'GET', url: '/api/organization/?p=0', minimum: 'admin' },
  { method: 'GET', url: '/api/organization/search?keyword=a', minimum: 'admin' },
  { method: 'POST', url: '/api/organization/', minimum: 'admin', payload: { name: '', owner: 'nobody' } },
  { method: 'PUT', url: '/api/organization/', minimum: 'admin', payload: { id: 999, name: 'x' } },
  { method: 'DELETE', url: '/api/organization/999', minimum: 'admin' },
  { method: 'GET', url: '/api/organization/self', minimum: 'user' },
  { method: 'GET', url: '/api/organization/999', minimum: 'user' },
  { method: 'GET', url: '/api/organization/999/member?p=0', minimum: 'user' },
  { method: 'GET', url: '/api/organization/999/audit?p=0', minimum: 'user' },
  { method: 'GET', url: '/api/organization/999/usage', minimum: 'user' },
  { method: 'POST', url: '/api/organization/999/member', minimum: 'user', payload: { username: 'nobody' } },
  { method: 'PUT', url: '/api/organization/999/member', minimum: 'user', payload: { user_id: 1, role: 'member' } },
  { method: 'DELETE', url: '/api/organization/999/member/1', minimum: 'user' },
  { method: 'GET', url: '/api/organization/999/token?p=0', minimum: 'user' },
  { method: 'GET', url: '/api/organization/999/token/1/key', minimum: 'user' },
  { method: 'POST', url: '/api/organization/999/token', minimum: 'user', payload: { name: 'matrix' } },
  { method: 'PUT', url: '/api/organization/999/token', minimum: 'user', payload: { id: 1, status: 2 } },
  { method: 'DELETE', url: '/api/organization/999/token/1', minimum: 'user' },
  { method: 'POST', url: '/api/organization/999/topup', minimum: 'admin', payload: { quota: 1 } },
];

let app: FastifyInstance;
const cookies: Partial<Record<Who, string>> = {};

beforeAll(async () => {
  app = await buildTestApp();
  await register(app, 'someuser');
  await register(app, 'someadmin');
  await app.ctx.db.updateTable('users').set({ role: 10 }).where('username', '=', 'someadmin').execute();
  cookies.user = await login(app, 'someuser', 'password-123');
  cookies.admin = await login(app, 'someadmin', 'password-123');
  cookies.root = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app.close();
});

describe('role matrix', () => {
  for (const who of ['guest', 'user', 'admin', 'root'] as Who[]) {
    for (const route of MATRIX) {
      const allowed = RANK[who] >= RANK[route.minimum];
      it(`${who} ${allowed ? 'may' : 'may not'} ${route.method} ${route.url}`, async () => {
        const response = await asBrowser(app, cookies[who], { method: route.method, url: route.url, payload: route.payload as never });
        if (allowed && route.rest) {
          // past the role check: the record, the list, or the route's own 404
          expect([200, 201, 404]).toContain(response.statusCode);
          if (response.statusCode === 404) expect(response.json().message).toMatch(/not found/);
        } else if (allowed) {
          expect(response.statusCode).toBe(200);
          expect(typeof response.json().success).toBe('boolean');
        } else if (route.rest) {
          expect(response.statusCode).toBe(who === 'guest' ? 401 : 403);
          expect(response.json()).toMatchObject({ success: false, message: who === 'guest' ? 'not logged in' : 'insufficient permission' });
        } else {
          // one-api's clients: 401 only when nobody is signed in, else 200 with success false
          expect(response.statusCode).toBe(who === 'guest' ? 401 : 200);
          expect(response.json().success).toBe(false);
          expect(response.json().message).toMatch(/not logged in|insufficient permission|only the super admin/);
        }
      });
    }
  }

  it("GET /api/user/token rotates the caller's access token for any signed-in user, never for a guest", async () => {
    expect((await asBrowser(app, undefined, { method: 'GET', url: '/api/user/token' })).statusCode).toBe(401);
    for (const who of ['user', 'admin', 'root'] as const) {
      const response = await asBrowser(app, cookies[who], { method: 'GET', url: '/api/user/token' });
      expect(response.json().data).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  it('POST /api/user/login/2fa opens only for a session waiting for its second factor: 401 to guests and full sessions alike', async () => {
    for (const who of ['guest', 'user', 'admin', 'root'] as const) {
      const response = await asBrowser(app, cookies[who], { method: 'POST', url: '/api/user/login/2fa', payload: { code: '000000' } });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ success: false, code: 'session_expired' });
    }
  });

  it('GET /api/pricing opens to guests only while the operator publishes prices (PublicPricingEnabled)', async () => {
    const publish = (value: string) =>
      asBrowser(app, cookies.admin, { method: 'PUT', url: '/api/option/', payload: { key: 'PublicPricingEnabled', value } });
    expect((await publish('true')).json().success).toBe(true);
    try {
      for (const who of ['guest', 'user', 'admin', 'root'] as const) {
        const response = await asBrowser(app, cookies[who], { method: 'GET', url: '/api/pricing' });
        expect(response.statusCode).toBe(200);
        expect(response.json().success).toBe(true);
      }
    } finally {
      expect((await publish('false')).json().success).toBe(true);
    }
    expect((await asBrowser(app, undefined, { method: 'GET', url: '/api/pricing' })).statusCode).toBe(401);
  });

  it('DELETE /api/user/self needs a signed-in user (and is refused for root)', async () => {
    expect((await asBrowser(app, undefined, { method: 'DELETE', url: '/api/user/self' })).statusCode).toBe(401);
    expect((await asBrowser(app, cookies.root, { method: 'DELETE', url: '/api/user/self' })).json().success).toBe(false);
  });
});
