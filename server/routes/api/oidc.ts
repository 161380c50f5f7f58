// Single sign-on through an OpenID Connect provider, the way GitHub's works:
// the console asks /api/oauth/oidc/start for the provider's URL (the state,
// nonce and PKCE verifier stay behind in a sealed HttpOnly cookie bound to
// this browser) and sends the browser there; the provider sends it back to
// the console's /oauth/oidc page, which passes the answer to /api/oauth/oidc.
// Reference: https://openid.net/specs/openid-connect-core-1_0.html
import { timingSafeEqual } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { UserStatus } from '../../../common/roles';
import { rateLimit } from '../../plugins/rateLimit';
import type { AppContext } from '../../plugins/context';
import { deriveKey, openSecret, sealSecret } from '../../secrets';
import { OidcClient, OidcError, PENDING_TTL_SECONDS, type PendingSignIn } from '../../services/oidc';
import { accountFor, personOf, type OidcPerson } from '../../services/oidcAccounts';
import { oidcCallbackSchema } from './inputSchemas';
import { finishFirstFactor } from './twoFactor';

const PENDING_COOKIE = 'oidc_pending';
const COOKIE_PATH = '/api/oauth';
const NOT_ENABLED = 'single sign-on is not enabled';
const STALE = 'the sign-in link is invalid or has expired, please start again';

/** The console page the provider sends the browser back to; register it with the provider as the redirect URI. */
function redirectUriOf({ options }: AppContext, request: FastifyRequest): string {
  const base = options.get('ServerAddress').trim() || `${request.protocol}://${request.host}`;
  return `${base.replace(/\/+$/, '')}/oauth/oidc`;
}

function cookieOptions(request: FastifyRequest) {
  return { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax' as const, secure: request.protocol === 'https' };
}

/** The pending sign-in this browser started, if its cookie opens with our key, is fresh and names this state. */
function pendingOf(request: FastifyRequest, key: Buffer, state: string): PendingSignIn | undefined {
  const sealed = request.cookies[PENDING_COOKIE];
  const opened = sealed ? openSecret(sealed, key) : undefined;
  if (!opened || !state) return undefined;
  let pending: PendingSignIn;
  try {
    pending = JSON.parse(opened) as PendingSignIn;
  } catch {
    return undefined;
  }
  const fresh = Number(pending.createdAt) + PENDING_TTL_SECONDS >= Math.floor(Date.now() / 1000);
  const given = Buffer.from(state);
  const expected = Buffer.from(String(pending.state));
  return fresh && given.length === expected.length && timingSafeEqual(given, expected) ? pending : undefined;
}

/** An OidcError is the person's to read (and the operator's, in the log); anything else is the server's own failure. */
function refusal(request: FastifyRequest, error: unknown) {
  if (!(error instanceof OidcError)) throw error;
  request.log.warn({ reason: error.message }, 'single sign-on refused');
  return fail(error.message);
}

export function oidcRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { options, config } = app.ctx;
  const oidc = new OidcClient(options);
  const key = deriveKey(config.sessionSecret, 'oidc-pending-sign-in');

  app.get('/api/oauth/oidc/start', { preHandler: rateLimit('critical') }, async (request, reply) => {
    if (!options.bool('OidcEnabled')) return fail(NOT_ENABLED);
    try {
      const { url, pending } = await oidc.start(redirectUriOf(app.ctx, request), options.get('OidcScopes'));
      reply.setCookie(PENDING_COOKIE, sealSecret(JSON.stringify(pending), key), { ...cookieOptions(request), maxAge: PENDING_TTL_SECONDS });
      return ok(url);
    } catch (error) {
      return refusal(request, error);
    }
  });

  app.get('/api/oauth/oidc', { preHandler: rateLimit('critical'), schema: oidcCallbackSchema }, async (request, reply) => {
    if (!options.bool('OidcEnabled')) return fail(NOT_ENABLED);
    const pending = pendingOf(request, key, request.query.state ?? '');
    if (!pending) return fail(STALE);
    // one answer per start: the browser drops the cookie, and the provider takes a code only once
    reply.clearCookie(PENDING_COOKIE, cookieOptions(request));
    try {
      const verified = await oidc.finish(pending, request.query);
      return await signIn(app.ctx, request, reply, personOf(verified, options));
    } catch (error) {
      return refusal(request, error);
    }
  });
  return Promise.resolve();
}

/** Signs in to the account the identity maps to, as a password sign-in would (two-factor step included). */
async function signIn(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, person: OidcPerson) {
  const outcome = await accountFor(ctx, person);
  if ('error' in outcome) return fail(outcome.error, outcome.code);
  if (Number(outcome.user.status) !== UserStatus.enabled) return fail('user is banned', 'user_banned');
  if (outcome.created) request.log.info({ userId: Number(outcome.user.id), issuer: person.issuer }, 'account created by single sign-on');
  return finishFirstFactor(request, reply, outcome.user);
}
