// Single sign-on against a real OpenID provider (oidc-provider, tests/support/oidcProvider.ts), the
// gateway listening on loopback and called over real HTTP as the console calls it: the start, the
// provider's redirects, the callback. Covers discovery, first-time provisioning, linking by verified
// e-mail, roles from the groups claim, and the refusals: a tampered state, a replayed answer, an ID
// token for another audience, an expired or forged one, a disabled user, and OidcOnly.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OptionKey } from '../../common/options';
import { createOrganization } from '../../server/repositories/organizations';
import { buildTestApp, ROOT_PASSWORD } from '../support/app';
import { followProviderTo, startOidcProvider, type IdTokenTamper, type RunningOidcProvider } from '../support/oidcProvider';

let app: FastifyInstance;
let base: string;
let provider: RunningOidcProvider;

async function setOptions(values: Partial<Record<OptionKey, string>>) {
  for (const [key, value] of Object.entries(values)) await app.ctx.options.set(key as OptionKey, value);
}

/** A response whose JSON body the test reads as it likes. */
type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

/** A same-origin call from the console, with these cookies. */
function call(path: string, cookie = '', init: RequestInit = {}): Promise<JsonResponse> {
  return fetch(`${base}${path}`, {
    ...init,
    headers: { 'sec-fetch-site': 'same-origin', 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
  });
}

/** The `name=value` pair of a cookie the response sets, or '' when it sets none with a value. */
function cookieOf(response: JsonResponse, name: string): string {
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));
  const pair = cookie?.split(';')[0] ?? '';
  return pair === `${name}=` ? '' : pair;
}

/** Starts single sign-on: the provider's URL and the pending-sign-in cookie. */
async function start() {
  const response = await call('/api/oauth/oidc/start');
  const body = await response.json();
  expect(body).toMatchObject({ success: true });
  return { url: String(body.data), pending: cookieOf(response, 'oidc_pending'), setCookie: response.headers.getSetCookie().join('\n') };
}

/** The whole flow as `subject`: the callback's answer, its session cookie and what was sent to it. */
async function signInAs(subject: string, tamper?: IdTokenTamper) {
  provider.signInAs(subject);
  provider.tamperIdToken(tamper);
  try {
    const { url, pending } = await start();
    const back = await followProviderTo(url, `${base}/oauth/oidc`);
    const response = await call(`/api/oauth/oidc${back.search}`, pending);
    return { body: await response.json(), session: cookieOf(response, 'session'), back, pending };
  } finally {
    provider.tamperIdToken(undefined);
  }
}

const userRow = (id: number) => app.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const linkOf = (subject: string) => app.ctx.db.selectFrom('oidc_identities').selectAll().where('subject', '=', subject).executeTakeFirst();

async function register(username: string, email = '') {
  const response = await call('/api/user/register', '', {
    method: 'POST',
    body: JSON.stringify({ username, password: 'password-123', password2: 'password-123' }),
  });
  expect((await response.json()).success).toBe(true);
  const row = await app.ctx.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow();
  if (email) await app.ctx.db.updateTable('users').set({ email }).where('id', '=', row.id).execute();
  return Number(row.id);
}

function passwordLogin(username: string, password: string) {
  return call('/api/user/login', '', { method: 'POST', body: JSON.stringify({ username, password }) });
}

beforeAll(async () => {
  app = await buildTestApp();
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  provider = await startOidcProvider([`${base}/oauth/oidc`]);
  await setOptions({
    OidcWellKnown: provider.wellKnown,
    OidcClientId: provider.clientId,
    OidcClientSecret: provider.clientSecret,
    OidcRoleMapping: '{"gw-admins": 10}',
    OidcEnabled: 'true',
  });
});
afterAll(async () => {
  await app.close();
  await provider.close();
});

describe('status and discovery', () => {
  it("shows one-api's oidc fields on /api/status", async () => {
    await setOptions({ OidcTokenEndpoint: `${provider.issuer}/token` });
    try {
      const status = (await (await call('/api/status')).json()).data;
      expect(status).toMatchObject({
        oidc: true,
        oidc_client_id: provider.clientId,
        oidc_well_known: provider.wellKnown,
        oidc_authorization_endpoint: '',
        oidc_token_endpoint: `${provider.issuer}/token`,
        oidc_userinfo_endpoint: '',
        oidc_only: false,
      });
      expect(JSON.stringify(status)).not.toContain(provider.clientSecret);
    } finally {
      await setOptions({ OidcTokenEndpoint: '' });
    }
  });

  it('starts at the discovered authorization endpoint with state, nonce and PKCE, kept in a sealed HttpOnly cookie', async () => {
    const { url, pending, setCookie } = await start();
    const authorization = new URL(url);
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${provider.issuer}/auth`);
    const params = Object.fromEntries(authorization.searchParams);
    expect(params).toMatchObject({
      client_id: provider.clientId,
      redirect_uri: `${base}/oauth/oidc`,
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(params.state.length).toBeGreaterThanOrEqual(32);
    expect(params.nonce.length).toBeGreaterThanOrEqual(32);
    expect(params.code_challenge).toMatch(/^[\w-]{43}$/);
    expect(setCookie).toMatch(/oidc_pending=.*HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\/api\/oauth/);
    // the cookie is sealed: neither the state nor the PKCE verifier can be read from it
    expect(decodeURIComponent(pending)).not.toContain(params.state);
  });

  it('refuses while single sign-on is off, and a provider reached over plain HTTP elsewhere than loopback', async () => {
    await setOptions({ OidcEnabled: 'false' });
    expect(await (await call('/api/oauth/oidc/start')).json()).toMatchObject({ success: false, message: 'single sign-on is not enabled' });
    expect((await (await call('/api/status')).json()).data.oidc).toBe(false);
    await setOptions({ OidcEnabled: 'true', OidcWellKnown: 'http://sso.example.com/.well-known/openid-configuration' });
    try {
      expect((await (await call('/api/oauth/oidc/start')).json()).message).toMatch(/must be an https:\/\/ address/);
    } finally {
      await setOptions({ OidcWellKnown: provider.wellKnown });
    }
  });
});

describe('settings', () => {
  it('turns on only once the discovery URL and client id are in, and maps groups to user or admin only', async () => {
    const root = cookieOf(await passwordLogin('root', ROOT_PASSWORD), 'session');
    const put = async (key: OptionKey, value: string) =>
      (await call('/api/option/', root, { method: 'PUT', body: JSON.stringify({ key, value }) })).json();
    await setOptions({ OidcEnabled: 'false', OidcClientId: '' });
    try {
      expect(await put('OidcEnabled', 'true')).toMatchObject({
        success: false,
        message: 'fill in the single sign-on discovery URL and client id first',
      });
      expect(await put('OidcRoleMapping', '{"gw-admins": 100}')).toMatchObject({
        success: false,
        message: 'OIDC role mapping is not a valid JSON string',
      });
      expect(await put('OidcRoleMapping', '{"gw-admins": 10, "staff": 1}')).toMatchObject({ success: true });
      expect(await put('OidcOrganizationMapping', '{"staff": 3}')).toMatchObject({
        success: false,
        message: 'OIDC organization mapping is not a valid JSON string',
      });
    } finally {
      await setOptions({ OidcClientId: provider.clientId, OidcEnabled: 'true', OidcRoleMapping: '{"gw-admins": 10}' });
    }
  });
});

describe('signing in', () => {
  it('creates the account at the first sign-in and signs in to it afterwards', async () => {
    const first = await signInAs('sub-alice');
    expect(first.body).toMatchObject({ success: true, data: { username: 'alice', display_name: 'Alice Example', role: 1, status: 1 } });
    expect(first.back.searchParams.get('iss')).toBe(provider.issuer);
    const row = await userRow(first.body.data.id);
    expect(row).toMatchObject({ email: 'alice@example.com', password_hash: '' });
    expect(await linkOf('sub-alice')).toMatchObject({ issuer: provider.issuer, user_id: first.body.data.id });
    const self = await (await call('/api/user/self', first.session)).json();
    expect(self.data).toMatchObject({ id: first.body.data.id, username: 'alice' });

    const countBefore = (await app.ctx.db.selectFrom('users').select('id').execute()).length;
    const again = await signInAs('sub-alice');
    expect(again.body.data.id).toBe(first.body.data.id);
    expect((await app.ctx.db.selectFrom('users').select('id').execute()).length).toBe(countBefore);
  });

  it('gives the role OidcRoleMapping names for a value of the groups claim', async () => {
    const dave = await signInAs('sub-dave');
    expect(dave.body).toMatchObject({ success: true, data: { username: 'dave', role: 10 } });
  });

  it('joins the organisations OidcOrganizationMapping names for the groups, at every sign-in, existing ones only', async () => {
    const staffTeam = await createOrganization(app.ctx.db, app.ctx.dialect, { name: 'Staff team', ownerId: 1 });
    const admins = await createOrganization(app.ctx.db, app.ctx.dialect, { name: 'Gateway admins', ownerId: 1 });
    const members = (organizationId: number) =>
      app.ctx.db.selectFrom('organization_members').selectAll().where('organization_id', '=', organizationId).execute();
    await setOptions({ OidcOrganizationMapping: '{"staff": "Staff team", "gw-admins": "Gateway admins", "nobody": "No such team"}' });
    try {
      // alice's groups: staff; dave's: staff and gw-admins
      const alice = await signInAs('sub-alice');
      expect(alice.body).toMatchObject({ success: true });
      const dave = await signInAs('sub-dave');
      expect(dave.body).toMatchObject({ success: true });
      await signInAs('sub-alice');
      const staff = await members(staffTeam);
      expect(staff.map((row) => [Number(row.user_id), row.role]).sort()).toEqual(
        [
          [1, 'owner'],
          [alice.body.data.id, 'member'],
          [dave.body.data.id, 'member'],
        ].sort(),
      );
      expect((await members(admins)).map((row) => Number(row.user_id)).sort()).toEqual([1, dave.body.data.id].sort());
      expect(
        await app.ctx.db.selectFrom('organizations').select('id').where('name', '=', 'No such team').executeTakeFirst(),
      ).toBeUndefined();

      // a member whose role an organisation admin raised keeps it at the next sign-in
      await app.ctx.db
        .updateTable('organization_members')
        .set({ role: 'admin' })
        .where('organization_id', '=', staffTeam)
        .where('user_id', '=', alice.body.data.id)
        .execute();
      await signInAs('sub-alice');
      expect((await members(staffTeam)).find((row) => Number(row.user_id) === alice.body.data.id)?.role).toBe('admin');
    } finally {
      await setOptions({ OidcOrganizationMapping: '{}' });
    }
  });

  it('links to the account with the same verified e-mail when OidcLinkByEmail is on', async () => {
    const carolId = await register('carol', 'carol@example.com');
    await setOptions({ OidcLinkByEmail: 'true' });
    try {
      const carol = await signInAs('sub-carol');
      expect(carol.body).toMatchObject({ success: true, data: { id: carolId, username: 'carol' } });
      expect(await linkOf('sub-carol')).toMatchObject({ user_id: carolId });
      // the same address unverified links nothing: a new account, a free username, no e-mail
      await register('mallory');
      const mallory = await signInAs('sub-mallory');
      expect(mallory.body.success).toBe(true);
      expect(mallory.body.data.id).not.toBe(carolId);
      expect(mallory.body.data.username).toMatch(/^mallory_\d{4}$/);
      expect((await userRow(mallory.body.data.id)).email).toBe('');
    } finally {
      await setOptions({ OidcLinkByEmail: 'false' });
    }
  });

  it('refuses a disabled user', async () => {
    const erin = await signInAs('sub-erin');
    expect(erin.body.success).toBe(true);
    await app.ctx.db.updateTable('users').set({ status: 2 }).where('id', '=', erin.body.data.id).execute();
    const refused = await signInAs('sub-erin');
    expect(refused.body).toMatchObject({ success: false, message: 'user is banned', code: 'user_banned' });
    expect(refused.session).toBe('');
  });

  it('creates no account while registration is closed', async () => {
    await setOptions({ RegisterEnabled: 'false' });
    try {
      const refused = await signInAs('sub-frank');
      expect(refused.body).toMatchObject({ success: false, code: 'registration_closed' });
    } finally {
      await setOptions({ RegisterEnabled: 'true' });
    }
  });
});

describe('refusals', () => {
  it('refuses a tampered state, an answer without the pending cookie, and a replayed answer', async () => {
    provider.signInAs('sub-alice');
    const { url, pending } = await start();
    const back = await followProviderTo(url, `${base}/oauth/oidc`);
    const tampered = new URLSearchParams(back.search);
    tampered.set('state', `${tampered.get('state')}x`);
    const stale = /the sign-in link is invalid or has expired/;
    expect((await (await call(`/api/oauth/oidc?${tampered.toString()}`, pending)).json()).message).toMatch(stale);
    expect((await (await call(`/api/oauth/oidc${back.search}`)).json()).message).toMatch(stale);
    const finished = await call(`/api/oauth/oidc${back.search}`, pending);
    expect((await finished.json()).success).toBe(true);
    // the cookie is cleared, and a copy of it brings a code the provider will not take twice
    const replay = await (await call(`/api/oauth/oidc${back.search}`, pending)).json();
    expect(replay.success).toBe(false);
  });

  it('refuses an ID token issued for another client', async () => {
    const refused = await signInAs('sub-alice', 'audience');
    expect(refused.body.success).toBe(false);
    expect(refused.body.message).toMatch(/"aud"/);
    expect(refused.session).toBe('');
  });

  it('refuses an expired ID token', async () => {
    const refused = await signInAs('sub-alice', 'expired');
    expect(refused.body.success).toBe(false);
    expect(refused.body.message).toMatch(/"exp"/);
    expect(refused.session).toBe('');
  });

  it('refuses an ID token whose signature does not match its claims', async () => {
    const refused = await signInAs('sub-alice', 'signature');
    expect(refused.body.success).toBe(false);
    expect(refused.body.message).toMatch(/signature/i);
    expect(refused.session).toBe('');
  });
});

describe('OidcOnly', () => {
  it('refuses password sign-in and registration to everyone but root, who keeps the password', async () => {
    await setOptions({ OidcOnly: 'true' });
    try {
      const status = (await (await call('/api/status')).json()).data;
      expect(status).toMatchObject({ oidc_only: true, register_enabled: false });
      expect(await (await passwordLogin('carol', 'password-123')).json()).toMatchObject({ success: false, code: 'sso_required' });
      // a wrong password gets the same answer, so it tells nobody which names are root's
      expect(await (await passwordLogin('root', 'not-the-password')).json()).toMatchObject({ success: false, code: 'sso_required' });
      const root = await passwordLogin('root', ROOT_PASSWORD);
      expect(await root.json()).toMatchObject({ success: true, data: { username: 'root' } });
      const registration = await call('/api/user/register', '', {
        method: 'POST',
        body: JSON.stringify({ username: 'newcomer', password: 'password-123', password2: 'password-123' }),
      });
      expect(await registration.json()).toMatchObject({ success: false, code: 'sso_required' });
      expect((await signInAs('sub-alice')).body).toMatchObject({ success: true, data: { username: 'alice' } });
    } finally {
      await setOptions({ OidcOnly: 'false' });
    }
    expect(await (await passwordLogin('carol', 'password-123')).json()).toMatchObject({ success: true });
  });
});
