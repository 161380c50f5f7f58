// Security headers on every response: console pages, /api, /v1 (the fast path
// included, which never reaches Fastify), static files and errors. They are
// constant strings set on Node's response before anyone writes to it, so the
// relay pays a few setHeader calls and nothing else.
//
// The CSP is the one the console runs under (checked in Chromium by the e2e
// suite): scripts only from this origin (plus Cloudflare's Turnstile script
// when the bot check is on), inline styles for MUI/emotion, images from
// anywhere over https (logos an admin links to), frames of any page (the
// About/home page and the chat link may be a URL shown in an iframe), and no
// framing of the console itself.
//
// app.ts's server sets them on every exchange before Fastify sees it; the
// plugin sets them on requests that did not come through that server
// (app.inject), where they are not there yet.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import fp from 'fastify-plugin';
import type { OptionStore } from '../services/optionStore';

const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';

function policy(turnstile: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self'${turnstile ? ` ${TURNSTILE_ORIGIN}` : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: https:",
    "font-src 'self' data:",
    "connect-src 'self'",
    `frame-src 'self' https: http:`,
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
}

export const CONTENT_SECURITY_POLICY = policy(false);
export const CONTENT_SECURITY_POLICY_WITH_TURNSTILE = policy(true);
export const HSTS = 'max-age=31536000; includeSubDomains';

/** True when the client reached us over TLS: our own socket, or the trusted proxy's X-Forwarded-Proto. */
export function cameOverTls(request: IncomingMessage, trustProxy: boolean): boolean {
  if ((request.socket as TLSSocket).encrypted) return true;
  if (!trustProxy) return false;
  const proto = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0].trim().toLowerCase();
  return first === 'https';
}

/**
 * The console's hashed build files (scripts, styles, fonts under /assets/):
 * never a document, so the document-only headers (CSP, framing, referrer)
 * would do nothing there. Left off, they save about 330 bytes on each of the
 * two dozen files a first visit loads (8 KiB of the login page's budget).
 */
const isBuildAsset = (url: string | undefined) => url !== undefined && url.startsWith('/assets/') && !url.includes('..');

export function setSecurityHeaders(request: IncomingMessage, response: ServerResponse, trustProxy: boolean, turnstile: boolean): void {
  response.setHeader('x-content-type-options', 'nosniff');
  if (!isBuildAsset(request.url)) {
    response.setHeader('content-security-policy', turnstile ? CONTENT_SECURITY_POLICY_WITH_TURNSTILE : CONTENT_SECURITY_POLICY);
    response.setHeader('x-frame-options', 'DENY');
    response.setHeader('referrer-policy', 'strict-origin-when-cross-origin');
  }
  if (cameOverTls(request, trustProxy)) response.setHeader('strict-transport-security', HSTS);
}

/** True when the bot check is on, so the CSP lets Cloudflare's Turnstile script in. */
export const turnstileEnabled = (options: OptionStore): boolean => options.bool('TurnstileCheckEnabled');

export const securityHeadersPlugin = fp(
  (app) => {
    const { config, options } = app.ctx;
    app.addHook('onRequest', async (request, reply) => {
      if (!reply.raw.hasHeader('x-content-type-options'))
        setSecurityHeaders(request.raw, reply.raw, config.trustProxy, turnstileEnabled(options));
    });
    return Promise.resolve();
  },
  { name: 'switchboard-security-headers', dependencies: ['switchboard-services'] },
);
