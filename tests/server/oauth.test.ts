// GitHub sign-in and binding against a local fake of GitHub's OAuth endpoints,
// with the `state` checked; WeChat through a local fake bridge, its sign-ins
// in the audit log.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStatus } from '../../common/roles';
import { asBrowser, buildTestApp, login, register } from '../support/app';

let fake: Server;
let fakeUrl: string;
let app: FastifyInstance;
const githubUsers: Record<string, { id: number; login: string; name: string; email: string }> = {
  'code-octo': { id: 583231, login: 'octocat', name: 'The Octocat', email: 'octo@example.com' },
  'code-hubot': { id: 9919, login: 'hubot', name: 'Hubot', email: '' },
};

beforeAll(async () => {
  fake = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/login/oauth/access_token') {
        const { code, client_secret: secret } = JSON.parse(body) as { code: string; client_secret: string };
        if (secret !== 'gh-secret' || !githubUsers[code])
          return response.end(
            JSON.stringify({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' }),
          );
        return response.end(JSON.stringify({ access_token: `token-${code}`, token_type: 'bearer', scope: 'user:email' }));
      }
      if (request.url === '/user') {
        const code = String(request.headers.authorization ?? '').replace('Bearer token-', '');
        return response.end(JSON.stringify(githubUsers[code] ?? {}));
      }
      if (request.url?.startsWith('/api/wechat/user')) {
        const code = new URL(request.url, 'http://x').searchParams.get('code');
        if (request.headers.authorization !== 'wechat-token') return response.end(JSON.stringify({ success: false, message: 'bad token' }));
        return response.end(JSON.stringify({ success: true, message: '', data: code === '123456' ? 'wx-openid-1' : '' }));
      }
      response.statusCode = 404;
      response.end('{}');
    });
  });
  await new Promise<void>((resolveListen) => fake.listen(0, '127.0.0.1', () => resolveListen()));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  app = await buildTestApp({ githubOAuthUrl: fakeUrl, githubApiUrl: fakeUrl });
  await app.ctx.options.set('GitHubClientId', 'gh-client');
  await app.ctx.options.set('GitHubClientSecret', 'gh-secret');
  await app.ctx.options.set('GitHubOAuthEnabled', 'true');
  await app.ctx.options.set('WeChatServerAddress', `${fakeUrl}/`);
  await app.ctx.options.set('WeChatServerToken', 'wechat-token');
  await app.ctx.options.set('WeChatAuthEnabled', 'true');
});
afterAll(async () => {
  await app.close();
  await new Promise<void>((resolveClose) => fake.close(() => resolveClose()));
});

/** Starts a flow: the state and the cookie that carries it. */
async function begin(cookie?: string) {
  const response = await asBrowser(app, cookie, { method: 'GET', url: '/api/oauth/state' });
  const stateCookie = String(response.headers['set-cookie']).split(';')[0];
  return { state: response.json().data as string, cookie: [cookie, stateCookie].filter(Boolean).join('; ') };
}

describe('GitHub', () => {
  it('signs in a new user identified by the numeric GitHub id', async () => {
    const { state, cookie } = await begin();
    const response = await asBrowser(app, cookie, { method: 'GET', url: `/api/oauth/github?code=code-octo&state=${state}` });
    const body = response.json();
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({ role: 1, status: 1, display_name: 'The Octocat' });
    expect(String(response.headers['set-cookie'])).toMatch(/session=/);
    const row = await app.ctx.db.selectFrom('users').selectAll().where('id', '=', body.data.id).executeTakeFirstOrThrow();
    expect(row.github_id).toBe('583231');
    expect(row.email).toBe('octo@example.com');
    // signing in again finds the same account
    const again = await begin();
    const second = await asBrowser(app, again.cookie, { method: 'GET', url: `/api/oauth/github?code=code-octo&state=${again.state}` });
    expect(second.json().data.id).toBe(body.data.id);
  });

  it('refuses a missing, forged or replayed state', async () => {
    const { state, cookie } = await begin();
    expect(
      (await asBrowser(app, undefined, { method: 'GET', url: `/api/oauth/github?code=code-octo&state=${state}` })).json().success,
    ).toBe(false);
    expect(
      (await asBrowser(app, cookie, { method: 'GET', url: '/api/oauth/github?code=code-octo&state=someone-elses' })).json().success,
    ).toBe(false);
    const forged = cookie.replace(/\.[^.;]+$/, '.forged');
    expect((await asBrowser(app, forged, { method: 'GET', url: `/api/oauth/github?code=code-octo&state=${state}` })).json().success).toBe(
      false,
    );
    expect(
      (
        await app.inject({
          method: 'GET',
          url: `/api/oauth/github?code=code-octo&state=${state}`,
          headers: { cookie, 'sec-fetch-site': 'cross-site' },
        })
      ).statusCode,
    ).toBe(403);
  });

  it('binds GitHub to the signed-in user with the message "bind", once', async () => {
    await register(app, 'binder');
    const session = await login(app, 'binder', 'password-123');
    const { state, cookie } = await begin(session);
    const bound = await asBrowser(app, cookie, { method: 'GET', url: `/api/oauth/github?code=code-hubot&state=${state}` });
    expect(bound.json()).toEqual({ success: true, message: 'bind' });
    const row = await app.ctx.db.selectFrom('users').select('github_id').where('username', '=', 'binder').executeTakeFirstOrThrow();
    expect(row.github_id).toBe('9919');
    await register(app, 'other');
    const otherSession = await login(app, 'other', 'password-123');
    const second = await begin(otherSession);
    const taken = await asBrowser(app, second.cookie, { method: 'GET', url: `/api/oauth/github?code=code-hubot&state=${second.state}` });
    expect(taken.json()).toEqual({ success: false, message: 'this account is already bound to another user' });
  });

  it('reports a code GitHub refuses', async () => {
    const { state, cookie } = await begin();
    const response = await asBrowser(app, cookie, { method: 'GET', url: `/api/oauth/github?code=nope&state=${state}` });
    expect(response.json().message).toMatch(/GitHub refused the sign-in/);
  });
});

describe('WeChat', () => {
  it('signs in through the bridge and binds to a signed-in user', async () => {
    const signIn = (await app.inject({ method: 'GET', url: '/api/oauth/wechat?code=123456' })).json();
    expect(signIn.success).toBe(true);
    expect(signIn.data.display_name).toBe('WeChat User');
    expect((await app.inject({ method: 'GET', url: '/api/oauth/wechat?code=999999' })).json().message).toBe(
      'the verification code is wrong or has expired',
    );
    await register(app, 'wxuser');
    const session = await login(app, 'wxuser', 'password-123');
    const taken = await asBrowser(app, session, { method: 'GET', url: '/api/oauth/wechat/bind?code=123456' });
    expect(taken.json().message).toBe('this account is already bound to another user');
  });

  it('records who signed in through WeChat in the audit log, and a failed sign-in as a failed row', async () => {
    const rowOf = (response: { headers: Record<string, unknown> }) =>
      app.ctx.db
        .selectFrom('audit_log')
        .select(['action', 'user_id', 'username', 'target_type', 'target_id', 'success'])
        .where('request_id', '=', String(response.headers['x-request-id']))
        .executeTakeFirstOrThrow();
    const signedIn = await app.inject({ method: 'GET', url: '/api/oauth/wechat?code=123456' });
    const user = signedIn.json().data as { id: number; username: string };
    expect(user.username).toMatch(/^wechat_/);
    expect(await rowOf(signedIn)).toEqual({
      action: 'user.login_wechat',
      user_id: user.id,
      username: user.username,
      target_type: 'user',
      target_id: String(user.id),
      success: 1,
    });
    const wrongCode = await app.inject({ method: 'GET', url: '/api/oauth/wechat?code=999999' });
    expect(wrongCode.json().success).toBe(false);
    expect(await rowOf(wrongCode)).toEqual({
      action: 'user.login_wechat',
      user_id: null,
      username: '',
      target_type: 'user',
      target_id: '',
      success: 0,
    });
    // a known WeChat identity whose account is banned: refused, the account tried as the target, no actor
    await app.ctx.db.updateTable('users').set({ status: UserStatus.disabled }).where('id', '=', user.id).execute();
    const banned = await app.inject({ method: 'GET', url: '/api/oauth/wechat?code=123456' });
    expect(banned.json().message).toBe('user is banned');
    expect(await rowOf(banned)).toMatchObject({ user_id: null, target_id: String(user.id), success: 0 });
    await app.ctx.db.updateTable('users').set({ status: UserStatus.enabled }).where('id', '=', user.id).execute();
  });

  it('is refused when turned off', async () => {
    await app.ctx.options.set('WeChatAuthEnabled', 'false');
    expect((await app.inject({ method: 'GET', url: '/api/oauth/wechat?code=123456' })).json().message).toBe(
      'WeChat sign-in is not enabled',
    );
  });
});
