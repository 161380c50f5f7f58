// Stateless signed session cookie. It carries only the user id, the user's
// session version and the issue time; role and status are read from the
// database on every request, so bans and demotions take effect at once.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'session';
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600;

export interface SessionClaims {
  uid: number;
  ver: number;
  iat: number;
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
      if (claims.iat + SESSION_MAX_AGE_SECONDS < Math.floor(Date.now() / 1000)) return undefined;
      return claims;
    } catch {
      return undefined;
    }
  }
}

function isSecure(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, signer: SessionSigner, user: { id: number; session_version: number }): void {
  const value = signer.encode({ uid: Number(user.id), ver: Number(user.session_version), iat: Math.floor(Date.now() / 1000) });
  reply.setCookie(SESSION_COOKIE, value, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: isSecure(request),
    maxAge: SESSION_MAX_AGE_SECONDS,
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure: isSecure(request) });
}
