// The request-error catalogue (a message per status), handled in one place.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { MESSAGE_CODES } from '../../common/messageCodes';
import { httpClient, setUnauthorizedHandler } from '../../src/dataProvider/httpClient';
import { i18nProvider } from '../../src/i18n';
import { messages } from './messages';
import { server } from './setup';

const answer = (status: number, body: unknown = { success: false, message: 'nope' }) =>
  server.use(http.get('*/api/thing', () => HttpResponse.json(body as never, { status })));

describe('httpClient error catalogue', () => {
  it('keeps 401 recognisable for the auth provider and tells the unauthorized handler', async () => {
    let told = 0;
    setUnauthorizedHandler(() => (told += 1));
    answer(401, { success: false, message: 'not logged in' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 401, message: 'not logged in' });
    expect(told).toBe(1);
    answer(403, { success: false, message: 'insufficient permission' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 403 });
    expect(told).toBe(1);
    setUnauthorizedHandler(() => undefined);
  });

  it('maps 429, 500 and 405 to their fixed messages', async () => {
    answer(429);
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 429, message: 'app.errors.too_many_requests' });
    answer(500);
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 500, message: 'app.errors.internal' });
    answer(405);
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 405, message: 'app.errors.demo_only' });
  });

  it('prefixes other statuses with "Error: "', async () => {
    answer(403, { success: false, message: 'insufficient permission' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 403, message: 'Error: insufficient permission' });
  });

  it('reports a network failure with a message of its own, in either language, not the browser\'s "Failed to fetch"', async () => {
    server.use(http.get('*/api/thing', () => HttpResponse.error()));
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 0, message: 'app.errors.network' });
    await i18nProvider.changeLocale('zh');
    expect(i18nProvider.translate('app.errors.network')).toBe('无法连接到服务器，请检查网络后重试');
    await i18nProvider.changeLocale('en');
    expect(i18nProvider.translate('app.errors.network')).toBe('cannot reach the server: check the connection and try again');
  });

  it('unwraps a successful envelope and passes envelope-less bodies through as data', async () => {
    answer(200, { success: true, message: '', data: [1, 2] });
    expect(await httpClient('/api/thing')).toEqual({ success: true, message: '', data: [1, 2] });
    answer(200, { object: 'list', data: [{ id: 'gpt-4' }] });
    expect((await httpClient('/api/thing')).data).toEqual({ object: 'list', data: [{ id: 'gpt-4' }] });
  });

  it('turns a known server code into a message key, translated in Chinese', async () => {
    answer(200, { success: false, message: 'username or password is wrong', code: 'wrong_credentials' });
    const refused = await httpClient('/api/thing').catch((error: Error) => error);
    expect(refused).toMatchObject({ message: 'app.server_message.wrong_credentials', body: { message: 'username or password is wrong' } });
    await i18nProvider.changeLocale('zh');
    expect(i18nProvider.translate((refused as Error).message)).toBe('用户名或密码错误');
    await i18nProvider.changeLocale('en');
    expect(i18nProvider.translate((refused as Error).message)).toBe('username or password is wrong');
    // a coded 403 and 404 likewise, ahead of the "Error: " prefix
    answer(403, { success: false, message: 'insufficient permission', code: 'permission_denied' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 403, message: 'app.server_message.permission_denied' });
    answer(404, { success: false, message: 'not found: GET /api/thing', code: 'not_found' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 404, message: 'app.server_message.not_found' });
  });

  it('keeps the server text for an unknown code', async () => {
    answer(200, { success: false, message: 'something new', code: 'from_a_newer_server' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ message: 'something new' });
  });

  it('has both languages for every code the server sends', () => {
    for (const locale of ['en', 'zh'] as const) {
      const bundle = (messages[locale] as any).app.server_message;
      expect(MESSAGE_CODES.filter((code) => typeof bundle[code] !== 'string' || bundle[code] === '')).toEqual([]);
    }
  });
});
