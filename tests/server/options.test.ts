// GET/PUT /api/option/: every key, secrets write-only, invalid values never saved.
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

  it('checks prerequisites before enabling a login method, and keeps one way to sign in', async () => {
    expect(await put('GitHubOAuthEnabled', 'true')).toEqual({ success: false, message: 'fill in the GitHub client id and secret first' });
    expect((await put('PasswordLoginEnabled', 'false')).success).toBe(false);
    expect(app.ctx.options.bool('PasswordLoginEnabled')).toBe(true);
  });

  it('reflects changes in /api/status at once', async () => {
    expect(await put('SystemName', 'Acme AI')).toEqual({ success: true, message: '' });
    const status = (await app.inject({ method: 'GET', url: '/api/status' })).json();
    expect(status.data.system_name).toBe('Acme AI');
  });

  it('refuses non-root callers', async () => {
    await register(app, 'plain');
    const user = await login(app, 'plain', 'password-123');
    await app.ctx.db.updateTable('users').set({ role: 10 }).where('username', '=', 'plain').execute();
    const response = await asBrowser(app, user, { method: 'PUT', url: '/api/option/', payload: { key: 'SystemName', value: 'x' } });
    expect(response.statusCode).toBe(403);
    expect(app.ctx.options.get('SystemName')).toBe('Acme AI');
  });
});
