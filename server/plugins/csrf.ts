// Refuses state-changing calls that a browser made on behalf of another site.
// Browsers tell us with Sec-Fetch-Site and Origin; clients that send neither
// (curl, SDKs, scripts) carry no ambient cookie and pass.
//
// What counts as state-changing is decided on what the router will run, not
// on the raw URL (the router percent-decodes, so `/%61pi/option/` reaches
// `/api/option/`): every method but GET/HEAD/OPTIONS whatever its path, except
// the token-authenticated /v1 relay (its callers hold a key, not a cookie, and
// browser apps on other origins call it on purpose); plus one-api's
// state-changing GETs, matched on the route the router picked and, for a URL
// no route matched, on the decoded, normalised path as well.
//
// The plugin runs the check on every request, after @fastify/cookie's hook.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { fail } from '../../common/envelope';

/** Route patterns (as registered) of the GETs that change state. HEAD runs the GET handler. */
const STATE_CHANGING_GET_ROUTES = new Set([
  '/api/user/logout',
  '/api/user/token',
  '/api/user/aff',
  '/api/verification',
  '/api/reset_password',
  '/api/channel/test/:id',
  '/api/channel/test',
  '/api/channel/update_balance/:id',
  '/api/channel/update_balance',
  '/api/channel/:id/keys/:keyId/test',
]);

const STATE_CHANGING_GET_PATHS = [
  /^\/api\/user\/logout$/,
  /^\/api\/user\/token$/,
  /^\/api\/user\/aff$/,
  /^\/api\/oauth(\/|$)/,
  /^\/api\/verification$/,
  /^\/api\/reset_password$/,
  /^\/api\/channel\/test(\/|$)/,
  /^\/api\/channel\/update_balance(\/|$)/,
  /^\/api\/channel\/[^/]+\/keys\/[^/]+\/test$/,
];

/**
 * The path as a lenient server would see it: percent-decoded (repeatedly, so
 * `%2561` cannot hide an `a`), backslashes as slashes, duplicate slashes
 * collapsed, dot segments resolved, no trailing slash, lower case.
 */
export function normalisePath(rawPath: string): string {
  let path = rawPath;
  for (let round = 0; round < 3; round += 1) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      decoded = path.replace(/%([0-9a-f]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
    if (decoded === path) break;
    path = decoded;
  }
  const segments: string[] = [];
  for (const segment of path.replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`.toLowerCase();
}

/** Whether the call may change state (the audit log records exactly these: plugins/audit.ts). */
export function isStateChanging(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  const method = request.method;
  if (method === 'OPTIONS') return false;
  if (method !== 'GET' && method !== 'HEAD') return !(route !== undefined && (route === '/v1' || route.startsWith('/v1/')));
  if (route !== undefined && (STATE_CHANGING_GET_ROUTES.has(route) || route.startsWith('/api/oauth/'))) return true;
  const path = normalisePath(request.url.split('?')[0]);
  return STATE_CHANGING_GET_PATHS.some((pattern) => pattern.test(path));
}

const firstValue = (header: string | string[] | undefined): string | undefined => {
  const value = Array.isArray(header) ? header[0] : header;
  const first = value?.split(',')[0].trim();
  return first ? first : undefined;
};

export function isCrossSite(request: FastifyRequest): boolean {
  const fetchSite = request.headers['sec-fetch-site'];
  // the browser's own verdict, which no page can forge; it also survives a proxy that rewrites Host
  if (typeof fetchSite === 'string' && fetchSite !== '') return fetchSite !== 'same-origin' && fetchSite !== 'none';
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === '') return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return true;
  }
  const trusted = request.server.ctx.config.trustProxy;
  const host = (trusted && firstValue(request.headers['x-forwarded-host'])) || request.headers.host;
  if (url.host !== host) return true;
  const proto = trusted ? firstValue(request.headers['x-forwarded-proto']) : undefined;
  return proto !== undefined && url.protocol !== `${proto.toLowerCase()}:`;
}

export async function refuseCrossSiteRequests(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (isStateChanging(request) && isCrossSite(request)) {
    await reply.code(403).send(fail('cross-site request refused', 'cross_site_refused'));
  }
}

export const csrfPlugin = fp(
  (app) => {
    app.addHook('onRequest', refuseCrossSiteRequests);
    return Promise.resolve();
  },
  { name: 'switchboard-csrf', dependencies: ['@fastify/cookie', 'switchboard-services'] },
);
