// Sign-in and binding through GitHub (OAuth with a checked `state`, the
// numeric GitHub id as identity) and through the WeChat bridge server.
// Reference: https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { request as undiciRequest } from 'undici';
import { fail, ok } from '../../../common/envelope';
import { LogType, Role, UserStatus } from '../../../common/roles';
import { callerOf, requireRole } from '../../plugins/auth';
import { rateLimit } from '../../plugins/rateLimit';
import type { AppContext } from '../../plugins/context';
import { SESSION_COOKIE, sessionIsLive } from '../../services/session';
import { SSO_REQUIRED, ssoOnly } from '../../services/oidc';
import { insertLog } from '../../repositories/logs';
import { bindIdentity, createUser, emailTaken, findUserById, findUserByIdentity, type UserRow } from '../../repositories/users';
import { randomAlphanumeric } from '../../secrets';
import { githubSchema, wechatSchema } from './inputSchemas';
import { finishFirstFactor } from './twoFactor';

const STATE_COOKIE = 'oauth_state';
const STATE_TTL_SECONDS = 10 * 60;
const HTTP_TIMEOUT_MS = 8_000;

type Identity = { id: string; displayName: string; email: string } | { error: string };

/** The state cookie's signature, so a state the server did not hand out is refused. */
function signState(secret: Buffer, state: string): string {
  return createHmac('sha256', secret).update(`oauth:${state}`).digest('base64url');
}

/** The session user, if the request carries a valid session cookie (bind vs. login). */
async function sessionUser({ db, sessions }: AppContext, request: FastifyRequest): Promise<UserRow | undefined> {
  const claims = sessions.decode(request.cookies[SESSION_COOKIE]);
  if (!claims) return undefined;
  const user = await findUserById(db, claims.uid);
  return user &&
    Number(user.session_version) === claims.ver &&
    Number(user.status) === UserStatus.enabled &&
    (await sessionIsLive(db, claims))
    ? user
    : undefined;
}

/** Signs in the user found by identity, creating one when registration is open. */
async function signInWith(
  { db, dialect, options }: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  column: 'github_id' | 'wechat_id',
  identity: { id: string; displayName: string; email: string },
  prefix: string,
) {
  let user = await findUserByIdentity(db, column, identity.id);
  // as for a password: the account tried is the target of a refused sign-in; finishFirstFactor names the actor once it goes through
  if (user) request.audit({ targetId: Number(user.id) });
  if (ssoOnly(options) && !(user && Number(user.role) >= Role.root)) return fail(SSO_REQUIRED, 'sso_required');
  if (!user) {
    if (!options.bool('RegisterEnabled')) return fail('registration is closed');
    const quota = options.number('QuotaForNewUser');
    const username = `${prefix}_${randomAlphanumeric(6).toLowerCase()}`;
    const emailFree = identity.email && !(await emailTaken(db, identity.email));
    const id = await createUser(db, dialect, {
      username,
      displayName: identity.displayName.slice(0, 20) || username,
      // no password: no password sign-in (bcrypt matches nothing against ''), and setting one needs no current password
      passwordHash: '',
      quota,
      email: emailFree ? identity.email : '',
    });
    await bindIdentity(db, id, column, identity.id);
    if (quota > 0) await insertLog(db, { userId: id, username, type: LogType.system, content: `new-user gift: ${quota} quota`, quota });
    user = (await findUserById(db, id))!;
  }
  if (Number(user.status) !== UserStatus.enabled) return fail('user is banned');
  // an account with two-factor sign-in gets the code step here too
  return finishFirstFactor(request, reply, user);
}

/** Binds the identity to the signed-in user, unless another user holds it. */
async function bindTo(db: AppContext['db'], user: UserRow, column: 'github_id' | 'wechat_id', id: string) {
  const holder = await findUserByIdentity(db, column, id);
  if (holder && Number(holder.id) !== Number(user.id)) return fail('this account is already bound to another user');
  await bindIdentity(db, Number(user.id), column, id);
  return { success: true, message: 'bind' };
}

/** The GitHub account behind an OAuth code: the code exchanged for a token, the token for the profile. */
async function githubIdentity({ config, options }: AppContext, code: string): Promise<Identity> {
  try {
    const exchange = await undiciRequest(`${config.githubOAuthUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ client_id: options.get('GitHubClientId'), client_secret: options.get('GitHubClientSecret'), code }),
      headersTimeout: HTTP_TIMEOUT_MS,
      bodyTimeout: HTTP_TIMEOUT_MS,
    });
    const tokenBody = (await exchange.body.json()) as { access_token?: string; error_description?: string };
    if (!tokenBody.access_token) return { error: `GitHub refused the sign-in: ${tokenBody.error_description ?? 'no access token'}` };
    const profile = await undiciRequest(`${config.githubApiUrl}/user`, {
      headers: { authorization: `Bearer ${tokenBody.access_token}`, accept: 'application/json', 'user-agent': 'Switchboard' },
      headersTimeout: HTTP_TIMEOUT_MS,
      bodyTimeout: HTTP_TIMEOUT_MS,
    });
    const user = (await profile.body.json()) as { id?: number; login?: string; name?: string; email?: string };
    if (!Number.isSafeInteger(user.id)) return { error: 'GitHub returned no user id' };
    return { id: String(user.id), displayName: user.name || user.login || 'GitHub User', email: (user.email ?? '').toLowerCase() };
  } catch {
    return { error: 'cannot reach GitHub, please retry later' };
  }
}

/** The WeChat account behind a code, as the bridge server reads it. */
async function wechatIdentity(options: AppContext['options'], code: string): Promise<Identity> {
  const base = options.get('WeChatServerAddress').replace(/\/+$/, '');
  try {
    const response = await undiciRequest(`${base}/api/wechat/user?code=${encodeURIComponent(code)}`, {
      headers: { authorization: options.get('WeChatServerToken') },
      headersTimeout: HTTP_TIMEOUT_MS,
      bodyTimeout: HTTP_TIMEOUT_MS,
    });
    const body = (await response.body.json()) as { success?: boolean; message?: string; data?: string };
    if (!body.success) return { error: body.message || 'the WeChat server refused the code' };
    if (!body.data) return { error: 'the verification code is wrong or has expired' };
    return { id: String(body.data), displayName: 'WeChat User', email: '' };
  } catch {
    return { error: 'cannot reach the WeChat server, please retry later' };
  }
}

export function oauthRoutes(fastify: FastifyInstance): Promise<void> {
  githubRoutes(fastify);
  wechatRoutes(fastify);
  return Promise.resolve();
}

/** The OAuth state cookie, and sign-in or binding through GitHub. */
function githubRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options, config } = app.ctx;

  app.get('/api/oauth/state', async (_request, reply) => {
    const state = randomBytes(16).toString('hex');
    reply.setCookie(STATE_COOKIE, `${state}.${signState(config.sessionSecret, state)}`, {
      path: '/api/oauth',
      httpOnly: true,
      sameSite: 'lax',
      maxAge: STATE_TTL_SECONDS,
    });
    return ok(state);
  });

  app.get('/api/oauth/github', { preHandler: rateLimit('critical'), schema: githubSchema }, async (request, reply) => {
    if (!options.bool('GitHubOAuthEnabled')) return fail('GitHub sign-in is not enabled');
    const query = request.query;
    const code = String(query.code ?? '');
    const state = String(query.state ?? '');
    const [stored, signature] = String(request.cookies[STATE_COOKIE] ?? '').split('.');
    const expected = stored ? signState(config.sessionSecret, stored) : '';
    const stateValid =
      Boolean(code) &&
      Boolean(state) &&
      stored === state &&
      Boolean(signature) &&
      signature.length === expected.length &&
      timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
    if (!stateValid) return fail('the sign-in link is invalid or has expired, please start again');
    reply.clearCookie(STATE_COOKIE, { path: '/api/oauth' });
    const identity = await githubIdentity(app.ctx, code);
    if ('error' in identity) return fail(identity.error);
    const current = await sessionUser(app.ctx, request);
    if (current) return bindTo(db, current, 'github_id', identity.id);
    return signInWith(app.ctx, request, reply, 'github_id', identity, 'github');
  });
}

/** Sign-in and binding through the WeChat bridge server. */
function wechatRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const signedIn = requireRole(Role.user);

  app.get('/api/oauth/wechat', { preHandler: rateLimit('critical'), schema: wechatSchema }, async (request, reply) => {
    if (!options.bool('WeChatAuthEnabled')) return fail('WeChat sign-in is not enabled');
    const code = (request.query.code ?? '').trim();
    if (!code) return fail('please enter the verification code');
    const identity = await wechatIdentity(options, code);
    if ('error' in identity) return fail(identity.error);
    return signInWith(app.ctx, request, reply, 'wechat_id', identity, 'wechat');
  });

  app.get('/api/oauth/wechat/bind', { preHandler: [rateLimit('critical'), signedIn], schema: wechatSchema }, async (request) => {
    if (!options.bool('WeChatAuthEnabled')) return fail('WeChat sign-in is not enabled');
    const code = (request.query.code ?? '').trim();
    if (!code) return fail('please enter the verification code');
    const identity = await wechatIdentity(options, code);
    if ('error' in identity) return fail(identity.error);
    const result = await bindTo(db, callerOf(request), 'wechat_id', identity.id);
    return result.success ? ok() : result;
  });
}
