// Console authentication: the session cookie, or a user's access token in the
// Authorization header. The user row is re-read on every request; roles are
// checked on the server for every route (user >= 1, admin >= 10, root >= 100).
//
// Statuses as one-api's clients expect them: 401 only when nobody is signed in
// (no credential, or a session that ended: its console then goes to the login
// page); every other refusal, to a caller who is known (a role too low, a
// banned account behind an access token, an access token that matches no one),
// is HTTP 200 with `success: false` and the reason, which is what its console
// and scripts read (an HTTP 403 left its console waiting on a loading page).
//
// Two-factor sign-in: a session still waiting for its second factor opens no
// route here (401 `two_factor_required`; only POST /api/user/login/2fa and the
// passkey sign-in read it). When root requires a second factor (TOTP or a
// passkey) for admins or for everyone, an account without one is refused
// everywhere (`two_factor_enrolment_required`) but on the routes that enrol.
//
// The plugin decorates every request with `caller` (null until requireRole()
// sets it); routes put requireRole(...) in their preHandler.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { fail } from '../../common/envelope';
import type { MessageCode } from '../../common/messageCodes';
import { Role, UserStatus } from '../../common/roles';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { hasPasskey } from '../repositories/passkeys';
import { hasTwoFactor } from '../repositories/twoFactor';
import { findUserByAccessTokenHash, findUserById, type UserRow } from '../repositories/users';
import { hashAccessToken } from '../secrets';
import { clearSessionCookie, SESSION_COOKIE, sessionStage } from '../services/session';
import type { OptionStore } from '../services/optionStore';

type Resolution = { user: UserRow } | { status: 200 | 401; message: string; code?: MessageCode; clearCookie?: boolean } | undefined;

async function resolveCaller(request: FastifyRequest): Promise<Resolution> {
  const { db, sessions } = request.server.ctx;
  const cookie = request.cookies[SESSION_COOKIE];
  if (cookie) {
    const claims = sessions.decode(cookie);
    const user = claims ? await findUserById(db, claims.uid) : undefined;
    const stage = claims && user && Number(user.session_version) === claims.ver ? await sessionStage(db, claims) : undefined;
    if (!claims || !user || !stage) {
      return { status: 401, message: 'your login has expired, please log in again', code: 'session_expired', clearCookie: true };
    }
    if (stage === 'partial')
      return { status: 401, message: 'enter your two-factor code to finish signing in', code: 'two_factor_required' };
    if (Number(user.status) !== UserStatus.enabled)
      return { status: 401, message: 'user is banned', code: 'user_banned', clearCookie: true };
    return { user };
  }
  const header = request.headers.authorization?.trim();
  if (header) {
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : header;
    const user = token ? await findUserByAccessTokenHash(db, hashAccessToken(token)) : undefined;
    if (!user) return { status: 200, message: 'access token invalid' };
    if (Number(user.status) !== UserStatus.enabled) return { status: 200, message: 'user is banned', code: 'user_banned' };
    return { user };
  }
  return undefined;
}

/** Whether the user's role must have a second factor: everyone's (SecondFactorRequired), or admins' (TwoFactorRequiredForAdmins). */
export function secondFactorRequiredFor(options: OptionStore, user: { role: number }): boolean {
  return options.bool('SecondFactorRequired') || (Number(user.role) >= Role.admin && options.bool('TwoFactorRequiredForAdmins'));
}

/** A second factor: TOTP turned on, or a passkey. */
export async function hasSecondFactor(db: Kysely<Database>, userId: number): Promise<boolean> {
  return (await hasTwoFactor(db, userId)) || (await hasPasskey(db, userId));
}

/** True when the user must set up a second factor (TOTP or a passkey) before doing anything else. */
export async function mustEnrolTwoFactor(request: FastifyRequest, user: UserRow): Promise<boolean> {
  const { db, options } = request.server.ctx;
  return secondFactorRequiredFor(options, user) && !(await hasSecondFactor(db, Number(user.id)));
}

export interface RoleOptions {
  /** The route stays open to an admin who must still enrol in two-factor sign-in (the enrolment routes). */
  openDuringEnrolment?: boolean;
  /**
   * one-api's routes refuse a known caller with HTTP 200 and `success: false`;
   * the simple-rest resources (routes/api/simpleRest.ts) pass 403, since their
   * clients read the status, not an envelope.
   */
  refusalStatus?: 200 | 403;
}

/** A preHandler admitting callers whose current role is at least `minimumRole`. */
export function requireRole(
  minimumRole: number,
  { openDuringEnrolment = false, refusalStatus = 200 }: RoleOptions = {},
): preHandlerAsyncHookHandler {
  return async function checkRole(request: FastifyRequest, reply: FastifyReply) {
    const resolution = await resolveCaller(request);
    if (!resolution) return reply.code(401).send(fail('not logged in', 'not_logged_in'));
    if ('status' in resolution) {
      if (resolution.clearCookie) clearSessionCookie(request, reply);
      return reply.code(resolution.status === 200 ? refusalStatus : resolution.status).send(fail(resolution.message, resolution.code));
    }
    if (Number(resolution.user.role) < minimumRole)
      return reply.code(refusalStatus).send(fail('insufficient permission', 'permission_denied'));
    if (!openDuringEnrolment && (await mustEnrolTwoFactor(request, resolution.user))) {
      return reply
        .code(refusalStatus)
        .send(fail('two-factor sign-in is required for your account: set it up first', 'two_factor_enrolment_required'));
    }
    request.caller = resolution.user;
    // the request's later log lines (its "request completed" too) say who asked
    request.log = reply.log = request.log.child({ userId: Number(resolution.user.id) });
  };
}

/** The caller set by requireRole(); routes behind it may rely on it. */
export function callerOf(request: FastifyRequest): UserRow {
  if (!request.caller) throw new Error('route is missing requireRole()');
  return request.caller;
}

export const authPlugin = fp(
  (app) => {
    app.decorateRequest('caller', null);
    return Promise.resolve();
  },
  { name: 'switchboard-auth', dependencies: ['@fastify/cookie', 'switchboard-services'] },
);
