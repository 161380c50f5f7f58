// Signed session cookie naming a server-side session. It carries the user id,
// the user's session version, the issue time and the session's random id; the
// sessions table holds that id's hash, so logout ends this session alone and
// a password change ends the others, at once. Role and status are read from
// the database on every request, so bans and demotions take effect at once.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { deleteExpiredSessions, findSession, insertSession, revokeSessionByHash, revokeSessionsOfUser } from '../repositories/sessions';

export const SESSION_COOKIE = 'session';
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600;

export interface SessionClaims {
  uid: number;
  ver: number;
  iat: number;
  /** The session's id; the sessions table keeps its SHA-256. */
  sid: string;
}

export class SessionSigner {
  constructor(private readonly secret: Buffer) {}

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }

  encode(claims: SessionClaims): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(cookie: string | undefined): SessionClaims | undefined {
    if (!cookie) return undefined;
    const dot = cookie.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = cookie.slice(0, dot);
    const given = Buffer.from(cookie.slice(dot + 1));
    const expected = Buffer.from(this.sign(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionClaims;
      if (!Number.isInteger(claims.uid) || !Number.isInteger(claims.ver) || !Number.isInteger(claims.iat)) return undefined;
      // cookies from before server-side sessions name none: they sign in again
      if (typeof claims.sid !== 'string' || claims.sid.length < 16) return undefined;
      if (claims.iat + SESSION_MAX_AGE_SECONDS < Math.floor(Date.now() / 1000)) return undefined;
      return claims;
    } catch {
      return undefined;
    }
  }
}

/** What the cookie helpers read of a request (Fastify's): whether it came over HTTPS. */
interface CookieRequest {
  protocol: string;
}

interface SessionCookieOptions {
  path: string;
  httpOnly: boolean;
  sameSite: 'strict';
  secure: boolean;
  maxAge?: number;
}

/** What they use of its reply: @fastify/cookie's two methods. */
interface CookieReply {
  setCookie(name: string, value: string, options: SessionCookieOptions): unknown;
  clearCookie(name: string, options: SessionCookieOptions): unknown;
}

function isSecure(request: CookieRequest): boolean {
  return request.protocol === 'https';
}

const hashSessionId = (sid: string) => createHash('sha256').update(sid).digest('hex');

/** How long a session waiting for its second factor lasts. */
export const PARTIAL_SESSION_MAX_AGE_SECONDS = 5 * 60;

/**
 * 'full' or 'partial' (waiting for the second factor) while the session exists,
 * belongs to the user, is not revoked and has not expired; otherwise undefined.
 */
export async function sessionStage(db: Kysely<Database>, claims: SessionClaims): Promise<'full' | 'partial' | undefined> {
  const row = await findSession(db, hashSessionId(claims.sid));
  const live =
    row !== undefined &&
    Number(row.user_id) === claims.uid &&
    Number(row.revoked) === 0 &&
    Number(row.expires_at) >= Math.floor(Date.now() / 1000);
  if (!live) return undefined;
  return Number(row.partial) === 1 ? 'partial' : 'full';
}

/** True while the session is live and complete (a session still waiting for its second factor is not). */
export async function sessionIsLive(db: Kysely<Database>, claims: SessionClaims): Promise<boolean> {
  return (await sessionStage(db, claims)) === 'full';
}

export async function revokeSession(db: Kysely<Database>, sid: string): Promise<void> {
  await revokeSessionByHash(db, hashSessionId(sid));
}

/** Ends every session of the user but `exceptSid` (the caller's own, when it may stay). */
export async function revokeUserSessions(db: Kysely<Database>, userId: number, exceptSid?: string): Promise<void> {
  await revokeSessionsOfUser(db, userId, exceptSid ? hashSessionId(exceptSid) : undefined);
}

/**
 * Starts a session for the user and hands the browser its cookie. A `partial`
 * one (password right, second factor still due) lives a few minutes and opens
 * nothing but the second-factor step.
 */
export async function setSessionCookie(
  db: Kysely<Database>,
  request: CookieRequest,
  reply: CookieReply,
  signer: SessionSigner,
  user: { id: number; session_version: number },
  stage: 'full' | 'partial' = 'full',
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const maxAge = stage === 'partial' ? PARTIAL_SESSION_MAX_AGE_SECONDS : SESSION_MAX_AGE_SECONDS;
  const sid = randomBytes(32).toString('base64url');
  // expired rows go as new ones come; the index on expires_at keeps this cheap
  await deleteExpiredSessions(db, now);
  await insertSession(db, {
    idHash: hashSessionId(sid),
    userId: Number(user.id),
    createdAt: now,
    expiresAt: now + maxAge,
    partial: stage === 'partial',
  });
  const value = signer.encode({ uid: Number(user.id), ver: Number(user.session_version), iat: now, sid });
  reply.setCookie(SESSION_COOKIE, value, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: isSecure(request),
    maxAge,
  });
}

/** Tells the browser to drop its session cookie. */
export function clearSessionCookie(request: CookieRequest, reply: CookieReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure: isSecure(request) });
}
