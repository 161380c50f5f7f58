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
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { fail } from '../../common/envelope';
import type { MessageCode } from '../../common/messageCodes';
import { UserStatus } from '../../common/roles';
import { findUserByAccessTokenHash, findUserById, type UserRow } from '../repositories/users';
import { clearSessionCookie, SESSION_COOKIE, sessionIsLive } from './session';

export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

type Resolution = { user: UserRow } | { status: 200 | 401; message: string; code?: MessageCode; clearCookie?: boolean } | undefined;

async function resolveCaller(request: FastifyRequest): Promise<Resolution> {
  const { db, sessions } = request.server.ctx;
  const cookie = request.cookies[SESSION_COOKIE];
  if (cookie) {
    const claims = sessions.decode(cookie);
    const user = claims ? await findUserById(db, claims.uid) : undefined;
    if (!claims || !user || Number(user.session_version) !== claims.ver || !(await sessionIsLive(db, claims))) {
      return { status: 401, message: 'your login has expired, please log in again', code: 'session_expired', clearCookie: true };
    }
    if (Number(user.status) !== UserStatus.enabled) return { status: 401, message: 'user is banned', code: 'user_banned', clearCookie: true };
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

/** A preHandler admitting callers whose current role is at least `minimumRole`. */
export function requireRole(minimumRole: number): preHandlerAsyncHookHandler {
  return async function checkRole(request: FastifyRequest, reply: FastifyReply) {
    const resolution = await resolveCaller(request);
    if (!resolution) return reply.code(401).send(fail('not logged in', 'not_logged_in'));
    if ('status' in resolution) {
      if (resolution.clearCookie) clearSessionCookie(request, reply);
      return reply.code(resolution.status).send(fail(resolution.message, resolution.code));
    }
    if (Number(resolution.user.role) < minimumRole) return reply.send(fail('insufficient permission', 'permission_denied'));
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
