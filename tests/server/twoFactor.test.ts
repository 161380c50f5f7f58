// Two-factor sign-in on every database: enrolment with a QR code and a
// confirming code, sign-in in two steps, wrong and replayed codes refused,
// recovery codes good once, disabling with a code, the requirement for admins,
// root's reset, and a half-signed-in session refused by every other route.
// The clock (Date only; timers stay real for the database drivers) is frozen
// in the middle of a 30-second step, so a code never changes step mid-test.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD, sessionCookieOf } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { deriveKey, openSecret, sealSecret } from '../../server/secrets';

const targets = await databaseTargets('two-factor sign-in', { besideSqlite: 'postgres' });
const STEP_MS = 30_000;

function codeAt(secret: string, stepOffset = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: Date.now() + stepOffset * STEP_MS,
  });
}

/** Moves the frozen clock `steps` time steps on, to the middle of that step. */
function advanceSteps(steps: number): void {
  vi.setSystemTime(Math.floor(Date.now() / STEP_MS) * STEP_MS + steps * STEP_MS + STEP_MS / 2);
}

const api = (app: FastifyInstance, cookie: string | undefined, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  asBrowser(app, cookie, { method, url, ...(payload === undefined ? {} : { payload: payload as never }) });

/** Password step: the answer and the (partial or full) session cookie it set. */
async function passwordStep(
  app: FastifyInstance,
  username: string,
  password = 'password-123',
): Promise<{ response: LightMyRequestResponse; cookie: string }> {
  const response = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username, password } });
  return { response, cookie: sessionCookieOf(response) };
}

/** Enrols the signed-in user; the confirming code is the previous step's, so this step's and the next are still unspent. */
async function enrol(app: FastifyInstance, cookie: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = (await api(app, cookie, 'POST', '/api/user/2fa/enrol')).json();
  expect(started.success).toBe(true);
  const confirmed = (await api(app, cookie, 'POST', '/api/user/2fa/confirm', { code: codeAt(started.data.secret, -1) })).json();
  expect(confirmed.success).toBe(true);
  return { secret: started.data.secret, recoveryCodes: confirmed.data.recovery_codes };
}

/** The console's routes, read off Fastify's own route tree: [method, path] for every /api route. */
function apiRoutes(app: FastifyInstance): Array<[string, string]> {
  const routes: Array<[string, string]> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    stack.length = depth;
    stack.push(match[2]);
    const path = stack.join('');
    if (!match[3] || !path.startsWith('/api')) continue;
    for (const method of match[3].split(', ')) if (method !== 'HEAD') routes.push([method, path]);
  }
  return routes;
}

/** Routes anyone may call, signed in or not (a partial session is no one to them). */
const PUBLIC_ROUTES = new Set([
  'GET /api/status',
  'GET /api/notice',
  'GET /api/about',
  'GET /api/home_page_content',
  'GET /api/reset_password',
  'GET /api/verification',
  'POST /api/user/register',
  'POST /api/user/reset',
  'POST /api/user/login',
  'POST /api/user/login/2fa',
  'POST /api/passkey/login/options',
  'POST /api/passkey/login/verify',
  'GET /api/user/logout',
  'GET /api/oauth/state',
  'GET /api/oauth/github',
  'GET /api/oauth/wechat',
  'GET /api/oauth/oidc/start',
  'GET /api/oauth/oidc',
]);

/** Bodies that pass each route's input schema, so the refusal seen is the auth layer's, not a 400. */
const BODIES: Record<string, unknown> = {
  'POST /api/user/2fa/confirm': { code: '000000' },
  'POST /api/user/2fa/disable': { code: '000000' },
  'POST /api/user/passkey/register/verify': { name: 'x', credential: { id: 'x', rawId: 'x', type: 'public-key', response: {} } },
  'POST /api/user/': { username: 'x', password: 'password-123' },
  'PUT /api/user/': { id: 999 },
  'POST /api/user/manage': { username: 'nobody', action: 'enable' },
  'POST /api/user/topup': { key: 'no-such-code' },
  'PUT /api/option/': { key: 'Notice', value: 'x' },
  'POST /api/token/': { name: 'x' },
  'PUT /api/token/': { id: 999, name: 'x' },
  'POST /api/redemption/': { name: 'x', quota: 1, count: 1 },
  'PUT /api/redemption/': { id: 999, name: 'x' },
  'POST /api/channel/': { name: 'x' },
  'PUT /api/channel/': { id: 999 },
  'POST /api/channel/:id/keys': { keys: 'sk-x' },
  'PUT /api/channel/:id/keys/:keyId': { status: 1 },
  'POST /api/token/bulk': { ids: [999], action: 'disable' },
  'POST /api/redemption/bulk': { ids: [999], action: 'disable' },
  'POST /api/channel/bulk': { ids: [999], action: 'disable' },
  'POST /api/import': { source: '/no/such/one-api.db' },
  'POST /api/webhook': { name: 'x', url: 'http://127.0.0.1:9/', events: ['token.exhausted'] },
  'PUT /api/webhook/:id': { name: 'x' },
};

// every test of the file: Date frozen mid-step (timers stay real)
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  advanceSteps(0);
});
afterEach(() => {
  vi.useRealTimers();
});

for (const target of targets) {
  describe.runIf(target.available)(`two-factor sign-in on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let root: string;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      root = await login(app, 'root', ROOT_PASSWORD);
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });

    it('enrols with a QR code and the secret as text, and is on only once a code confirms it', async () => {
      await register(app, 'erin');
      const cookie = await login(app, 'erin', 'password-123');
      expect((await api(app, cookie, 'GET', '/api/user/2fa')).json().data).toEqual({
        enabled: false,
        pending: false,
        recovery_codes_left: 0,
        required: false,
      });

      const started = (await api(app, cookie, 'POST', '/api/user/2fa/enrol')).json();
      expect(started.data.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(started.data.otpauth_url).toMatch(/^otpauth:\/\/totp\/Switchboard:erin\?/);
      expect(started.data.otpauth_url).toContain(`secret=${started.data.secret}`);
      expect(Buffer.from(started.data.qr_code.replace('data:image/svg+xml;base64,', ''), 'base64').toString()).toMatch(/^<svg[\s\S]*<path/);
      // kept sealed: the stored value is not the secret
      const stored = await app.ctx.db
        .selectFrom('two_factor')
        .selectAll()
        .where('user_id', '=', (await api(app, cookie, 'GET', '/api/user/self')).json().data.id)
        .executeTakeFirstOrThrow();
      expect(stored.secret_sealed).not.toContain(started.data.secret);
      expect(stored.secret_sealed).toMatch(/^v1\./);
      expect((await api(app, cookie, 'GET', '/api/user/2fa')).json().data).toMatchObject({ enabled: false, pending: true });
      // pending is not on: the password alone still signs in
      expect((await passwordStep(app, 'erin')).response.json().success).toBe(true);

      const wrong = (await api(app, cookie, 'POST', '/api/user/2fa/confirm', { code: codeAt(started.data.secret, 3) })).json();
      expect(wrong).toMatchObject({ success: false, code: 'wrong_two_factor_code' });
      const confirmed = (await api(app, cookie, 'POST', '/api/user/2fa/confirm', { code: codeAt(started.data.secret) })).json();
      expect(confirmed.success).toBe(true);
      const codes: string[] = confirmed.data.recovery_codes;
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
      const hashes = await app.ctx.db
        .selectFrom('two_factor_recovery_codes')
        .select('code_hash')
        .where('user_id', '=', Number(stored.user_id))
        .execute();
      expect(hashes).toHaveLength(10);
      for (const { code_hash } of hashes) expect(codes.some((code) => code_hash.includes(code.replace('-', '')))).toBe(false);

      expect((await api(app, cookie, 'GET', '/api/user/2fa')).json().data).toEqual({
        enabled: true,
        pending: false,
        recovery_codes_left: 10,
        required: false,
      });
      // the secret is never shown again: a new enrolment is refused while one is on
      expect((await api(app, cookie, 'POST', '/api/user/2fa/enrol')).json().success).toBe(false);
      expect((await passwordStep(app, 'erin')).response.json()).toMatchObject({ success: false, code: 'two_factor_required' });
    });

    it('signs in in two steps; wrong, replayed and stale codes are refused', async () => {
      await register(app, 'fay');
      const { secret } = await enrol(app, await login(app, 'fay', 'password-123'));

      const first = await passwordStep(app, 'fay');
      expect(first.response.json()).toEqual({
        success: false,
        code: 'two_factor_required',
        message: 'enter the code from your authenticator app (or a recovery code) to finish signing in',
      });
      const selfAsPartial = await api(app, first.cookie, 'GET', '/api/user/self');
      expect(selfAsPartial.statusCode).toBe(401);
      expect(selfAsPartial.json().code).toBe('two_factor_required');

      expect(
        (await api(app, first.cookie, 'POST', '/api/user/login/2fa', { code: '123456' === codeAt(secret) ? '654321' : '123456' })).json(),
      ).toMatchObject({
        success: false,
        code: 'wrong_two_factor_code',
      });
      // a code two steps old is outside the window
      expect((await api(app, first.cookie, 'POST', '/api/user/login/2fa', { code: codeAt(secret, -2) })).json().success).toBe(false);

      const code = codeAt(secret);
      const second = await api(app, first.cookie, 'POST', '/api/user/login/2fa', { code });
      expect(second.json()).toMatchObject({ success: true, data: { username: 'fay', role: 1 } });
      const full = sessionCookieOf(second);
      expect(full).not.toBe(first.cookie);
      expect((await api(app, full, 'GET', '/api/user/self')).json().data.username).toBe('fay');
      // the partial session is spent
      expect((await api(app, first.cookie, 'POST', '/api/user/login/2fa', { code: codeAt(secret, 1) })).statusCode).toBe(401);

      // replay: the same code, on a new password step, is refused; and so is the previous step's
      const again = await passwordStep(app, 'fay');
      expect((await api(app, again.cookie, 'POST', '/api/user/login/2fa', { code })).json()).toMatchObject({
        success: false,
        code: 'wrong_two_factor_code',
      });
      expect((await api(app, again.cookie, 'POST', '/api/user/login/2fa', { code: codeAt(secret, -1) })).json().success).toBe(false);
      // the next step's code (one step of drift) is accepted
      expect((await api(app, again.cookie, 'POST', '/api/user/login/2fa', { code: codeAt(secret, 1) })).json().success).toBe(true);
    });

    it('accepts each recovery code once, and disables with a code', async () => {
      await register(app, 'gus');
      const cookie = await login(app, 'gus', 'password-123');
      const elsewhere = await login(app, 'gus', 'password-123');
      const { secret, recoveryCodes } = await enrol(app, cookie);
      // turning it on ends the other sessions, signed in with the password alone; the enrolling one stays
      expect((await api(app, elsewhere, 'GET', '/api/user/self')).statusCode).toBe(401);
      expect((await api(app, cookie, 'GET', '/api/user/self')).statusCode).toBe(200);

      const first = await passwordStep(app, 'gus');
      // typed loosely: upper case, no dash
      const signedIn = (
        await api(app, first.cookie, 'POST', '/api/user/login/2fa', { code: recoveryCodes[0].replace('-', '').toUpperCase() })
      ).json();
      expect(signedIn).toMatchObject({ success: true, data: { username: 'gus', recovery_codes_left: 9 } });
      const again = await passwordStep(app, 'gus');
      expect((await api(app, again.cookie, 'POST', '/api/user/login/2fa', { code: recoveryCodes[0] })).json()).toMatchObject({
        success: false,
        code: 'wrong_two_factor_code',
      });
      expect((await api(app, again.cookie, 'POST', '/api/user/login/2fa', { code: 'abcde-fghjk' })).json().success).toBe(false);

      const full = sessionCookieOf(await api(app, again.cookie, 'POST', '/api/user/login/2fa', { code: codeAt(secret) }));
      expect((await api(app, full, 'POST', '/api/user/2fa/disable', { code: recoveryCodes[0] })).json()).toMatchObject({
        success: false,
        code: 'wrong_two_factor_code',
      });
      expect((await api(app, full, 'POST', '/api/user/2fa/disable', { code: codeAt(secret) })).json().success).toBe(false);
      expect((await api(app, full, 'POST', '/api/user/2fa/disable', { code: recoveryCodes[1] })).json().success).toBe(true);
      expect((await api(app, full, 'GET', '/api/user/2fa')).json().data).toMatchObject({
        enabled: false,
        pending: false,
        recovery_codes_left: 0,
      });
      expect((await passwordStep(app, 'gus')).response.json().success).toBe(true);
    });

    it('refuses a half-signed-in session on every route but the code step', async () => {
      await register(app, 'hal');
      await app.ctx.db.updateTable('users').set({ role: 100 }).where('username', '=', 'hal').execute();
      const { secret } = await enrol(app, await login(app, 'hal', 'password-123'));
      const partial = (await passwordStep(app, 'hal')).cookie;

      const routes = apiRoutes(app);
      expect(routes.length).toBeGreaterThan(60);
      for (const [method, path] of routes) {
        const route = `${method} ${path}`;
        if (PUBLIC_ROUTES.has(route)) continue;
        const url = path.replace(/:\w+/g, '999');
        const response = await api(
          app,
          partial,
          method as 'GET',
          url,
          BODIES[route] ?? (method === 'GET' || method === 'DELETE' ? undefined : {}),
        );
        expect({ route, status: response.statusCode, code: response.json().code }).toEqual({
          route,
          status: 401,
          code: 'two_factor_required',
        });
      }
      // every route outside the list above was checked; the list holds only routes open to guests
      for (const route of PUBLIC_ROUTES)
        expect(
          routes.some(([method, path]) => `${method} ${path}` === route),
          route,
        ).toBe(true);
      // the partial session survived all that, and the code step still opens it
      expect((await api(app, partial, 'POST', '/api/user/login/2fa', { code: codeAt(secret) })).json().success).toBe(true);
    });

    it('requires two-factor sign-in for admins when root turns it on; root can reset it', async () => {
      await register(app, 'ivy');
      await register(app, 'jon');
      await app.ctx.db.updateTable('users').set({ role: 10 }).where('username', '=', 'ivy').execute();
      expect((await api(app, root, 'PUT', '/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'true' })).json()).toEqual({
        success: false,
        message: 'set up two-factor sign-in for your own account first (Setting → Personal)',
      });
      const rootTwoFactor = await enrol(app, root);
      expect((await api(app, root, 'PUT', '/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'true' })).json().success).toBe(true);
      try {
        const admin = await passwordStep(app, 'ivy');
        expect(admin.response.json()).toMatchObject({ success: true, data: { username: 'ivy', two_factor_enrolment_required: true } });
        for (const [method, url] of [
          ['GET', '/api/channel/?p=0'],
          ['GET', '/api/user/self'],
          ['GET', '/api/token/?p=0'],
          ['PUT', '/api/user/self'],
        ] as const) {
          const refused = await api(app, admin.cookie, method, url, method === 'PUT' ? {} : undefined);
          expect(refused.json(), url).toMatchObject({ success: false, code: 'two_factor_enrolment_required' });
        }
        expect((await api(app, admin.cookie, 'GET', '/api/user/2fa')).json().data).toMatchObject({ enabled: false, required: true });
        const { recoveryCodes } = await enrol(app, admin.cookie);
        expect((await api(app, admin.cookie, 'GET', '/api/channel/?p=0')).json().success).toBe(true);
        // it cannot be turned off while required
        expect((await api(app, admin.cookie, 'POST', '/api/user/2fa/disable', { code: recoveryCodes[0] })).json()).toMatchObject({
          success: false,
          code: 'two_factor_enrolment_required',
        });

        // an ordinary user is not concerned
        const user = await passwordStep(app, 'jon');
        expect(user.response.json().data.two_factor_enrolment_required).toBeUndefined();
        expect((await api(app, user.cookie, 'GET', '/api/token/?p=0')).json().success).toBe(true);

        // root's reset: only root, and the admin is back to enrolling
        const ivyId = (await api(app, admin.cookie, 'GET', '/api/user/self')).json().data.id;
        expect((await api(app, admin.cookie, 'POST', `/api/user/${ivyId}/2fa/reset`)).json()).toMatchObject({
          success: false,
          code: 'permission_denied',
        });
        expect((await api(app, root, 'GET', `/api/user/${ivyId}/2fa`)).json().data).toEqual({
          enabled: true,
          recovery_codes_left: 10,
          passkeys: 0,
        });
        expect((await api(app, root, 'POST', `/api/user/${ivyId}/2fa/reset`)).json()).toEqual({
          success: true,
          message: '',
          data: { removed: true },
        });
        expect((await api(app, root, 'GET', `/api/user/${ivyId}/2fa`)).json().data).toEqual({
          enabled: false,
          recovery_codes_left: 0,
          passkeys: 0,
        });
        expect((await passwordStep(app, 'ivy')).response.json().data.two_factor_enrolment_required).toBe(true);
        expect((await api(app, root, 'POST', '/api/user/999999/2fa/reset')).json().code).toBe('user_not_found');
      } finally {
        const rootNow = (await passwordStep(app, 'root', ROOT_PASSWORD)).cookie;
        root = sessionCookieOf(await api(app, rootNow, 'POST', '/api/user/login/2fa', { code: codeAt(rootTwoFactor.secret, 1) }));
        await api(app, root, 'PUT', '/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'false' });
      }
    });
  });
}

describe('two-factor guesses', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("stops an account's code step after too many wrong codes, even for the right one", async () => {
    const limited = await buildTestApp({
      loginLimits: { perAccount: { max: 3, windowSeconds: 600 }, perIp: { max: 100, windowSeconds: 600 } },
    });
    app = limited;
    await register(limited, 'kim');
    const { secret } = await enrol(limited, await login(limited, 'kim', 'password-123'));
    const partial = (await passwordStep(limited, 'kim')).cookie;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await api(limited, partial, 'POST', '/api/user/login/2fa', { code: 'zzzzz-zzzzz' })).json().code).toBe(
        'wrong_two_factor_code',
      );
    }
    const blocked = await api(limited, partial, 'POST', '/api/user/login/2fa', { code: codeAt(secret) });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().code).toBe('too_many_sign_ins');
  });

  it('shares the critical per-IP limit with sign-up and the other sensitive calls', async () => {
    const limited = await buildTestApp({ rateLimits: { critical: { max: 2, windowSeconds: 600 }, topUp: { max: 0, windowSeconds: 60 } } });
    app = limited;
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1)
      statuses.push((await api(limited, undefined, 'POST', '/api/user/login/2fa', { code: '123456' })).statusCode);
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe('sealed TOTP secrets', () => {
  it('open only with the key they were sealed with, and not once tampered with', () => {
    const key = deriveKey(randomBytes(32), 'two-factor');
    const sealed = sealSecret('JBSWY3DPEHPK3PXP', key);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(sealSecret('JBSWY3DPEHPK3PXP', key)).not.toBe(sealed);
    expect(openSecret(sealed, key)).toBe('JBSWY3DPEHPK3PXP');
    expect(openSecret(sealed, deriveKey(randomBytes(32), 'two-factor'))).toBeUndefined();
    const [version, iv, tag, ciphertext] = sealed.split('.');
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] ^= 1;
    expect(openSecret([version, iv, tag, flipped.toString('base64url')].join('.'), key)).toBeUndefined();
    expect(openSecret('not sealed', key)).toBeUndefined();
  });

  it('after SESSION_SECRET changes, TOTP codes fail but a recovery code still signs in (and can turn it off to enrol again)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'switchboard-2fa-'));
    const database = { dialect: 'sqlite' as const, path: join(folder, 'switchboard.db') };
    let app: FastifyInstance | undefined;
    try {
      app = await buildTestApp({ sessionSecret: randomBytes(32) }, database);
      await register(app, 'lee');
      const { secret, recoveryCodes } = await enrol(app, await login(app, 'lee', 'password-123'));
      await app.close();

      app = await buildTestApp({ sessionSecret: randomBytes(32) }, database);
      const partial = (await passwordStep(app, 'lee')).cookie;
      expect((await api(app, partial, 'POST', '/api/user/login/2fa', { code: codeAt(secret, 1) })).json().code).toBe(
        'wrong_two_factor_code',
      );
      const full = sessionCookieOf(await api(app, partial, 'POST', '/api/user/login/2fa', { code: recoveryCodes[0] }));
      expect((await api(app, full, 'POST', '/api/user/2fa/disable', { code: recoveryCodes[1] })).json().success).toBe(true);
    } finally {
      await app?.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
