// GET/PUT /api/option/: every key, secrets write-only, invalid values never
// saved, who may write what, and the guard that keeps a way for root to sign in.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTION_KEYS, OPTION_SPECS } from '../../common/options';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

let app: FastifyInstance;
let root: string;
beforeAll(async () => {
  app = await buildTestApp();
  root = await login(app, 'root', ROOT_PASSWORD);
});
afterAll(async () => {
  await app.close();
});

const put = (key: string, value: unknown, cookie = root) =>
  asBrowser(app, cookie, { method: 'PUT', url: '/api/option/', payload: { key, value } }).then((response) => response.json());
const list = async (cookie = root) => {
  const response = await asBrowser(app, cookie, { method: 'GET', url: '/api/option' });
  return response.json().data as Array<{ key: string; value: string; set?: boolean }>;
};

describe('options', () => {
  it('lists every option key with its default', async () => {
    const entries = await list();
    expect(entries.map((entry) => entry.key).sort()).toEqual([...OPTION_KEYS].sort());
    expect(entries.find((entry) => entry.key === 'QuotaPerUnit')?.value).toBe('500000');
    expect(entries.find((entry) => entry.key === 'GroupRatio')?.value).toBe(OPTION_SPECS.GroupRatio.default);
  });

  it('never returns secrets, only whether they are set', async () => {
    for (const key of ['SMTPToken', 'GitHubClientSecret', 'WeChatServerToken', 'TurnstileSecretKey']) {
      expect(await put(key, `secret-value-of-${key}`)).toEqual({ success: true, message: '' });
    }
    const response = await asBrowser(app, root, { method: 'GET', url: '/api/option/' });
    expect(response.body).not.toContain('secret-value-of');
    const entries = response.json().data as Array<{ key: string; value: string; set?: boolean }>;
    expect(entries.find((entry) => entry.key === 'TurnstileSecretKey')).toEqual({ key: 'TurnstileSecretKey', value: '', set: true });
    expect(await put('SMTPToken', '')).toEqual({ success: true, message: '' });
    expect(app.ctx.options.get('SMTPToken')).toBe('secret-value-of-SMTPToken');
  });

  it('refuses invalid ratio JSON and saves nothing', async () => {
    const before = app.ctx.options.get('ModelRatio');
    expect(await put('ModelRatio', '{"gpt-4": 15,')).toEqual({ success: false, message: 'model ratio is not a valid JSON string' });
    expect(await put('GroupRatio', '[1,2]')).toEqual({ success: false, message: 'group ratio is not a valid JSON string' });
    expect(await put('GroupRatio', '{"vip": "two"}')).toEqual({ success: false, message: 'group ratio is not a valid JSON string' });
    expect((await list()).find((entry) => entry.key === 'ModelRatio')?.value).toBe(before);
    const stored = await app.ctx.db.selectFrom('options').select('value').where('key', '=', 'ModelRatio').executeTakeFirst();
    expect(stored).toBeUndefined();
    expect(await put('GroupRatio', '{"default":1,"vip":2}')).toEqual({ success: true, message: '' });
    expect(app.ctx.options.json('GroupRatio')).toEqual({ default: 1, vip: 2 });
  });

  it('stores toggles and numbers, stringifying scalars, and refuses bad ones', async () => {
    expect(await put('LogConsumeEnabled', false)).toEqual({ success: true, message: '' });
    expect((await list()).find((entry) => entry.key === 'LogConsumeEnabled')?.value).toBe('false');
    expect(await put('RetryTimes', 3)).toEqual({ success: true, message: '' });
    expect((await put('RetryTimes', 'many')).success).toBe(false);
    expect((await put('LogConsumeEnabled', 'yes')).success).toBe(false);
    expect((await put('NoSuchOption', 'x')).message).toBe('unknown option: NoSuchOption');
  });

  it('checks prerequisites before enabling a login method', async () => {
    expect(await put('GitHubOAuthEnabled', 'true')).toEqual({ success: false, message: 'fill in the GitHub client id and secret first' });
    expect(await put('GitHubClientId', 'client-id')).toEqual({ success: true, message: '' });
    expect(await put('TurnstileCheckEnabled', 'true')).toEqual({
      success: false,
      message: 'fill in the Turnstile site key and secret first',
    });
    expect(app.ctx.options.bool('GitHubOAuthEnabled')).toBe(false);
  });

  it('refuses links that are not http(s) or a site path', async () => {
    for (const key of ['ChatLink', 'TopUpLink', 'Logo', 'ServerAddress']) {
      expect((await put(key, 'javascript:alert(1)')).success).toBe(false);
    }
    expect((await put('ChatLink', ' https://chat.example.com/?k=1 ')).success).toBe(true);
    expect(app.ctx.options.get('ChatLink')).toBe('https://chat.example.com/?k=1');
    expect((await put('Logo', '/logo.png')).success).toBe(true);
    expect((await put('ChatLink', '')).success).toBe(true);
  });

  describe('the last way to sign in', () => {
    const rootRow = () => app.ctx.db.updateTable('users').where('username', '=', 'root');

    it('refuses to turn password login off while neither GitHub nor WeChat login is on', async () => {
      const answer = await put('PasswordLoginEnabled', 'false');
      expect(answer.success).toBe(false);
      expect(answer.message).toMatch(/password login is the last way the super admin can sign in/);
      expect(app.ctx.options.bool('PasswordLoginEnabled')).toBe(true);
    });

    it('refuses while GitHub login is on but no root account has GitHub bound', async () => {
      expect(await put('GitHubOAuthEnabled', 'true')).toEqual({ success: true, message: '' });
      expect((await put('PasswordLoginEnabled', 'false')).success).toBe(false);
    });

    it('allows it once root can sign in with GitHub, and then refuses to turn GitHub off', async () => {
      await rootRow().set({ github_id: 'root-on-github' }).execute();
      expect(await put('PasswordLoginEnabled', 'false')).toEqual({ success: true, message: '' });
      const answer = await put('GitHubOAuthEnabled', 'false');
      expect(answer.success).toBe(false);
      expect(answer.message).toMatch(/GitHub login is the last way/);
      expect(app.ctx.options.bool('GitHubOAuthEnabled')).toBe(true);
    });

    it('does not count a banned root', async () => {
      await put('PasswordLoginEnabled', 'true');
      await rootRow().set({ status: 2 }).execute();
      try {
        expect((await put('PasswordLoginEnabled', 'false')).success).toBe(false);
      } finally {
        await rootRow().set({ status: 1, github_id: '' }).execute();
        await put('GitHubOAuthEnabled', 'false');
      }
      expect(app.ctx.options.bool('PasswordLoginEnabled')).toBe(true);
      expect(app.ctx.options.bool('GitHubOAuthEnabled')).toBe(false);
    });
  });

  it('reflects changes in /api/status at once', async () => {
    expect(await put('SystemName', 'Acme AI')).toEqual({ success: true, message: '' });
    const status = (await app.inject({ method: 'GET', url: '/api/status' })).json();
    expect(status.data.system_name).toBe('Acme AI');
  });

  describe('who may write', () => {
    let adminCookie: string;
    let userCookie: string;
    beforeAll(async () => {
      await register(app, 'plain');
      await register(app, 'boss');
      await app.ctx.db.updateTable('users').set({ role: 10 }).where('username', '=', 'boss').execute();
      userCookie = await login(app, 'plain', 'password-123');
      adminCookie = await login(app, 'boss', 'password-123');
    });

    it('refuses ordinary users, to read or to write', async () => {
      expect((await asBrowser(app, userCookie, { method: 'GET', url: '/api/option/' })).json()).toEqual({
        success: false,
        message: 'insufficient permission',
        code: 'permission_denied',
      });
      const response = await asBrowser(app, userCookie, { method: 'PUT', url: '/api/option/', payload: { key: 'SystemName', value: 'x' } });
      expect(response.statusCode).toBe(200);
      expect(response.json().success).toBe(false);
      expect(app.ctx.options.get('SystemName')).toBe('Acme AI');
    });

    it('lets an admin read every option, secrets still hidden', async () => {
      const entries = await list(adminCookie);
      expect(entries.map((entry) => entry.key).sort()).toEqual([...OPTION_KEYS].sort());
      expect(entries.find((entry) => entry.key === 'SMTPToken')).toEqual({ key: 'SMTPToken', value: '', set: true });
    });

    it('lets an admin change operation and content settings', async () => {
      expect(await put('SystemName', 'Boss AI', adminCookie)).toEqual({ success: true, message: '' });
      expect(await put('GroupRatio', '{"default":1,"vip":3}', adminCookie)).toEqual({ success: true, message: '' });
      expect(app.ctx.options.get('SystemName')).toBe('Boss AI');
    });

    it('keeps the top-up link and the System tab for root', async () => {
      for (const [key, value] of [
        ['TopUpLink', 'https://shop.example.com'],
        ['SMTPServer', 'smtp.evil.example'],
        ['ServerAddress', 'https://evil.example'],
        ['PasswordLoginEnabled', 'false'],
        ['SMTPToken', 'x'],
      ]) {
        const response = await asBrowser(app, adminCookie, { method: 'PUT', url: '/api/option/', payload: { key, value } });
        expect(response.statusCode, key).toBe(200);
        expect(response.json()).toEqual({ success: false, message: 'only the super admin may change this setting', code: 'root_only' });
      }
      expect(app.ctx.options.get('TopUpLink')).toBe('');
      expect(app.ctx.options.get('SMTPToken')).toBe('secret-value-of-SMTPToken');
      expect(await put('TopUpLink', 'https://shop.example.com')).toEqual({ success: true, message: '' });
    });
  });
});
