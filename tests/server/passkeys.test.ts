// Passkeys over real HTTP on loopback, on SQLite and MariaDB: registration in
// personal settings, sign-in with a passkey alone and as the second step after
// a password, and every refusal — a cloned key's counter, a removed passkey,
// another user's credential, an expired or reused challenge, a disabled user —
// plus the requirement of a second factor and root's reset. The browser and its
// authenticator are played by tests/support/softwareAuthenticator.ts; the
// relying party is http://localhost:<port>, as a browser on this machine sees it.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { SoftwareAuthenticator } from '../support/softwareAuthenticator';

const targets = await databaseTargets('passkeys', { besideSqlite: 'mysql' });
const PASSWORD = 'password-123';

/** A same-origin browser: its Host header, its session cookie. */
class Browser {
  cookie = '';
  constructor(
    private readonly port: number,
    private readonly host = `localhost:${port}`,
  ) {}

  async call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await request(`http://127.0.0.1:${this.port}${path}`, {
      method,
      headers: {
        host: this.host,
        'sec-fetch-site': 'same-origin',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const pair = line.split(';')[0];
      if (pair.startsWith('session=')) this.cookie = pair === 'session=' ? '' : pair;
    }
    return {
      status: response.statusCode,
      body: (await response.body.json()) as { success: boolean; message: string; code?: string; data?: any },
    };
  }
}

for (const target of targets) {
  describe.runIf(target.available)(`passkeys on ${target.name}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let port: number;
    let origin: string;

    const signUp = async (username: string) => {
      const browser = new Browser(port);
      expect((await browser.call('POST', '/api/user/register', { username, password: PASSWORD, password2: PASSWORD })).body.success).toBe(
        true,
      );
      return browser;
    };
    const passwordStep = async (browser: Browser, username: string, password = PASSWORD) =>
      (await browser.call('POST', '/api/user/login', { username, password })).body;
    const signedIn = async (username: string, password = PASSWORD) => {
      const browser = new Browser(port);
      expect((await passwordStep(browser, username, password)).success).toBe(true);
      return browser;
    };
    /** Registers a passkey on `authenticator` for the browser's user; the answer to the verify step. */
    const addPasskey = async (browser: Browser, authenticator: SoftwareAuthenticator, name: string) => {
      const options = await browser.call('POST', '/api/user/passkey/register/options');
      expect(options.body.success).toBe(true);
      return (
        await browser.call('POST', '/api/user/passkey/register/verify', { name, credential: authenticator.create(options.body.data) })
      ).body;
    };
    /** Options and the authenticator's answer, sent back: the verify step's answer. */
    const passkeyStep = async (browser: Browser, authenticator: SoftwareAuthenticator, choices = {}) => {
      const options = await browser.call('POST', '/api/passkey/login/options');
      expect(options.body.success).toBe(true);
      return browser.call('POST', '/api/passkey/login/verify', { credential: authenticator.get(options.body.data, choices) });
    };
    const whoAmI = async (browser: Browser) => (await browser.call('GET', '/api/user/self')).body.data?.username;

    beforeAll(async () => {
      database = await target.create();
      app = await buildTestApp({}, database.config);
      await app.listen({ port: 0, host: '127.0.0.1' });
      port = (app.server.address() as AddressInfo).port;
      origin = `http://localhost:${port}`;
    });
    afterAll(async () => {
      await app?.close();
      await database?.drop();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('registers a named passkey in personal settings and lists it; a passkey alone then signs in', async () => {
      const ada = await signUp('ada');
      expect((await passwordStep(ada, 'ada')).success).toBe(true);
      const phone = new SoftwareAuthenticator(origin);
      const options = (await ada.call('POST', '/api/user/passkey/register/options')).body.data;
      expect(options).toMatchObject({ rp: { id: 'localhost' }, user: { name: 'ada' }, attestation: 'none' });
      expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required' });
      const added = await ada.call('POST', '/api/user/passkey/register/verify', {
        name: '  Work laptop ',
        credential: phone.create(options),
      });
      expect(added.body).toMatchObject({ success: true, data: [{ name: 'Work laptop', last_used_at: 0, backed_up: false }] });
      const listed = (await ada.call('GET', '/api/user/passkey')).body.data;
      expect(listed).toHaveLength(1);
      expect(listed[0].created_at).toBeGreaterThan(Date.now() / 1000 - 60);

      // a new browser, no password: the discoverable credential names the account
      const fresh = new Browser(port);
      const loginOptions = (await fresh.call('POST', '/api/passkey/login/options')).body.data;
      expect(loginOptions).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [] });
      const signIn = await fresh.call('POST', '/api/passkey/login/verify', { credential: phone.get(loginOptions) });
      expect(signIn.body).toMatchObject({ success: true, data: { username: 'ada' } });
      expect(await whoAmI(fresh)).toBe('ada');
      expect((await fresh.call('GET', '/api/user/passkey')).body.data[0].last_used_at).toBeGreaterThan(0);

      // a passkey needs a name; a registration answer is good once
      expect((await addPasskey(ada, phone, '')).message).toBe('give the passkey a name');
      const again = await ada.call('POST', '/api/user/passkey/register/verify', { name: 'Again', credential: phone.create(options) });
      expect(again.body).toEqual({ success: false, message: 'the passkey request expired or was already used: try again' });
    });

    it('asks for the passkey after a password, accepts only the account’s own, and refuses a user without one', async () => {
      const bea = await signUp('bea');
      const cat = await signUp('cat');
      await passwordStep(bea, 'bea');
      await passwordStep(cat, 'cat');
      const beaKey = new SoftwareAuthenticator(origin);
      const catKey = new SoftwareAuthenticator(origin);
      expect((await addPasskey(bea, beaKey, 'Bea key')).success).toBe(true);
      expect((await addPasskey(cat, catKey, 'Cat key')).success).toBe(true);

      const half = new Browser(port);
      expect(await passwordStep(half, 'bea')).toMatchObject({
        success: false,
        code: 'two_factor_required',
        data: { second_factors: ['passkey'] },
      });
      expect((await half.call('GET', '/api/user/self')).status).toBe(401);
      const options = (await half.call('POST', '/api/passkey/login/options')).body.data;
      expect(options.allowCredentials.map((descriptor: { id: string }) => descriptor.id)).toEqual([beaKey.credentials[0].id]);
      // cat's credential, even signed well, does not finish bea's sign-in
      const catAnswer = catKey.get({ ...options, allowCredentials: [] });
      expect((await half.call('POST', '/api/passkey/login/verify', { credential: catAnswer })).body).toMatchObject({
        success: false,
        code: 'passkey_refused',
      });
      expect((await half.call('GET', '/api/user/self')).status).toBe(401);
      const own = await passkeyStep(half, beaKey);
      expect(own.body).toMatchObject({ success: true, data: { username: 'bea' } });
      expect(await whoAmI(half)).toBe('bea');

      // an account with TOTP alone: its second step is unchanged, and no passkey can finish it
      const dan = await signUp('dan');
      await passwordStep(dan, 'dan');
      const secret = (await dan.call('POST', '/api/user/2fa/enrol')).body.data.secret as string;
      const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
      expect((await dan.call('POST', '/api/user/2fa/confirm', { code: totp.generate() })).body.success).toBe(true);
      const danHalf = new Browser(port);
      expect(await passwordStep(danHalf, 'dan')).toEqual({
        success: false,
        code: 'two_factor_required',
        message: 'enter the code from your authenticator app (or a recovery code) to finish signing in',
      });
      expect((await danHalf.call('POST', '/api/passkey/login/options')).body).toMatchObject({ success: false, code: 'passkey_refused' });
    });

    it('refuses a cloned key whose counter goes back, and notes it in the account’s log', async () => {
      const eve = await signUp('eve');
      await passwordStep(eve, 'eve');
      const key = new SoftwareAuthenticator(origin);
      await addPasskey(eve, key, 'YubiKey');
      expect((await passkeyStep(new Browser(port), key, { counter: 5 })).body.success).toBe(true);
      expect((await passkeyStep(new Browser(port), key, { counter: 6 })).body.success).toBe(true);

      const clone = new Browser(port);
      const refused = await passkeyStep(clone, key, { counter: 3 });
      expect(refused.body).toMatchObject({ success: false, code: 'passkey_refused' });
      expect(clone.cookie).toBe('');
      // an equal counter is a copy too
      expect((await passkeyStep(new Browser(port), key, { counter: 6 })).body.success).toBe(false);
      const logs = (await eve.call('GET', '/api/log/self/?p=0')).body.data as Array<{ content: string }>;
      expect(logs.map((log) => log.content)).toContain(
        'passkey "YubiKey" refused: its signature counter went back (3 after 6), a sign of a copied key',
      );
      // the real key, further on, still works
      expect((await passkeyStep(new Browser(port), key, { counter: 7 })).body.success).toBe(true);
    });

    it('refuses a removed passkey, and another user cannot remove one', async () => {
      const fay = await signUp('fay');
      await passwordStep(fay, 'fay');
      const gus = await signUp('gus');
      await passwordStep(gus, 'gus');
      const key = new SoftwareAuthenticator(origin);
      const [passkey] = (await addPasskey(fay, key, 'Phone')).data;
      expect((await gus.call('DELETE', `/api/user/passkey/${passkey.id}`)).body).toMatchObject({ success: false, code: 'not_found' });
      expect((await fay.call('DELETE', `/api/user/passkey/${passkey.id}`)).body.success).toBe(true);
      expect((await fay.call('GET', '/api/user/passkey')).body.data).toEqual([]);
      expect((await passkeyStep(new Browser(port), key)).body).toMatchObject({ success: false, code: 'passkey_refused' });
      // and the password alone signs in again
      expect((await passwordStep(new Browser(port), 'fay')).success).toBe(true);
    });

    it('spends a challenge once, and refuses one past its five minutes', async () => {
      const hal = await signUp('hal');
      await passwordStep(hal, 'hal');
      const key = new SoftwareAuthenticator(origin);
      await addPasskey(hal, key, 'Laptop');

      const browser = new Browser(port);
      const options = (await browser.call('POST', '/api/passkey/login/options')).body.data;
      const answer = key.get(options);
      expect((await browser.call('POST', '/api/passkey/login/verify', { credential: answer })).body.success).toBe(true);
      const replay = new Browser(port);
      expect((await replay.call('POST', '/api/passkey/login/verify', { credential: answer })).body.code).toBe('passkey_refused');
      // a fresh answer (a higher counter) to the spent challenge is refused as well
      expect((await replay.call('POST', '/api/passkey/login/verify', { credential: key.get(options) })).body.code).toBe('passkey_refused');

      const late = new Browser(port);
      const lateOptions = (await late.call('POST', '/api/passkey/login/options')).body.data;
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 5 * 60_000 + 2_000 });
      expect((await late.call('POST', '/api/passkey/login/verify', { credential: key.get(lateOptions) })).body.code).toBe(
        'passkey_refused',
      );
      vi.useRealTimers();

      // a registration challenge is its own: it signs nobody in
      const registration = (await hal.call('POST', '/api/user/passkey/register/options')).body.data;
      const crossed = key.get({ challenge: registration.challenge, rpId: 'localhost', allowCredentials: [] });
      expect((await new Browser(port).call('POST', '/api/passkey/login/verify', { credential: crossed })).body.code).toBe(
        'passkey_refused',
      );
    });

    it('refuses a disabled user, and a passkey-alone answer without user verification', async () => {
      const ivy = await signUp('ivy');
      await passwordStep(ivy, 'ivy');
      const key = new SoftwareAuthenticator(origin);
      await addPasskey(ivy, key, 'Phone');
      expect((await passkeyStep(new Browser(port), key, { userVerified: false })).body.code).toBe('passkey_refused');
      const root = await signedIn('root', ROOT_PASSWORD);
      expect((await root.call('POST', '/api/user/manage', { username: 'ivy', action: 'disable' })).body.success).toBe(true);
      const banned = new Browser(port);
      expect((await passkeyStep(banned, key)).body).toMatchObject({ success: false, code: 'user_banned' });
      expect(banned.cookie).toBe('');
      expect((await root.call('POST', '/api/user/manage', { username: 'ivy', action: 'enable' })).body.success).toBe(true);
      expect((await passkeyStep(new Browser(port), key)).body.success).toBe(true);
    });

    it('is no way round single sign-on only: an account but root is refused as at the password form', async () => {
      const uma = await signUp('uma');
      await passwordStep(uma, 'uma');
      const key = new SoftwareAuthenticator(origin);
      await addPasskey(uma, key, 'Phone');
      await app.ctx.options.set('OidcEnabled', 'true');
      await app.ctx.options.set('OidcOnly', 'true');
      try {
        const outsider = new Browser(port);
        expect((await passkeyStep(outsider, key)).body).toMatchObject({ success: false, code: 'sso_required' });
        expect(outsider.cookie).toBe('');
      } finally {
        await app.ctx.options.set('OidcOnly', 'false');
        await app.ctx.options.set('OidcEnabled', 'false');
      }
      expect((await passkeyStep(new Browser(port), key)).body.success).toBe(true);
    });

    it('takes the relying party from the server address, and refuses an IP address or a foreign host without one', async () => {
      const jon = await signUp('jon');
      await passwordStep(jon, 'jon');
      const byAddress = new Browser(port, `127.0.0.1:${port}`);
      expect((await byAddress.call('POST', '/api/passkey/login/options')).body.message).toMatch(/open the console at http:\/\/localhost/);
      const foreign = new Browser(port, 'gateway.example.com');
      expect((await foreign.call('POST', '/api/passkey/login/options')).body.message).toMatch(/need the server address/);
      await app.ctx.options.set('ServerAddress', 'https://gateway.example.com/');
      try {
        const options = (await foreign.call('POST', '/api/passkey/login/options')).body.data;
        expect(options.rpId).toBe('gateway.example.com');
        // a key answering for localhost does not fit the configured site
        const local = new SoftwareAuthenticator(origin);
        expect(await addPasskey(jon, local, 'Wrong site')).toEqual({ success: false, message: 'the passkey could not be verified' });
        expect((await jon.call('GET', '/api/user/passkey')).body.data).toEqual([]);
        const remote = new SoftwareAuthenticator('https://gateway.example.com');
        expect((await addPasskey(jon, remote, 'Right site')).success).toBe(true);
      } finally {
        await app.ctx.options.set('ServerAddress', '');
      }
    });

    it('refuses the state-changing calls from another site', async () => {
      const kim = await signUp('kim');
      await passwordStep(kim, 'kim');
      for (const [method, path] of [
        ['POST', '/api/user/passkey/register/options'],
        ['POST', '/api/passkey/login/options'],
        ['DELETE', '/api/user/passkey/1'],
      ] as const) {
        const response = await kim.call(method, path, undefined, { 'sec-fetch-site': 'cross-site' });
        expect({ path, status: response.status, code: response.body.code }).toEqual({ path, status: 403, code: 'cross_site_refused' });
      }
    });

    it('requires a second factor of everyone once root turns it on; root’s reset clears passkeys', async () => {
      const root = await signedIn('root', ROOT_PASSWORD);
      expect((await root.call('PUT', '/api/option/', { key: 'SecondFactorRequired', value: 'true' })).body.success).toBe(false);
      const rootKey = new SoftwareAuthenticator(origin);
      expect((await addPasskey(root, rootKey, 'Root key')).success).toBe(true);
      expect((await root.call('PUT', '/api/option/', { key: 'SecondFactorRequired', value: 'true' })).body.success).toBe(true);
      try {
        const lea = await signUp('lea');
        const first = await passwordStep(lea, 'lea');
        expect(first).toMatchObject({ success: true, data: { username: 'lea', two_factor_enrolment_required: true } });
        expect((await lea.call('GET', '/api/token/?p=0')).body.code).toBe('two_factor_enrolment_required');
        expect((await lea.call('GET', '/api/user/2fa')).body.data).toMatchObject({ enabled: false, required: true });
        const key = new SoftwareAuthenticator(origin);
        const [passkey] = (await addPasskey(lea, key, 'Phone')).data;
        expect((await lea.call('GET', '/api/token/?p=0')).body.success).toBe(true);
        // the last second factor stays while one is required
        expect((await lea.call('DELETE', `/api/user/passkey/${passkey.id}`)).body.code).toBe('two_factor_enrolment_required');

        // root recovers a user who lost the passkey: every second factor goes, and the user sets one up again
        const leaId = (await lea.call('GET', '/api/user/self')).body.data.id;
        expect((await root.call('GET', `/api/user/${leaId}/2fa`)).body.data).toEqual({
          enabled: false,
          recovery_codes_left: 0,
          passkeys: 1,
        });
        expect((await root.call('POST', `/api/user/${leaId}/2fa/reset`)).body.data).toEqual({ removed: true });
        expect((await passkeyStep(new Browser(port), key)).body.code).toBe('passkey_refused');
        expect((await passwordStep(new Browser(port), 'lea')).data.two_factor_enrolment_required).toBe(true);
      } finally {
        expect((await root.call('PUT', '/api/option/', { key: 'SecondFactorRequired', value: 'false' })).body.success).toBe(true);
      }
    });
  });
}
