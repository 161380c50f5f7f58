// Refuses state-changing /api calls that a browser made on behalf of another
// site. Browsers tell us with Sec-Fetch-Site and Origin; clients that send
// neither (curl, SDKs, scripts) carry no ambient cookie and pass. One-api's
// console calls some state-changing GETs, so those are covered too.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail } from '../../common/envelope';

const STATE_CHANGING_GETS = [
  /^\/api\/user\/logout$/,
  /^\/api\/user\/token$/,
  /^\/api\/user\/aff$/,
  /^\/api\/oauth\//,
  /^\/api\/verification$/,
  /^\/api\/reset_password$/,
  /^\/api\/channel\/test(\/|$)/,
  /^\/api\/channel\/update_balance(\/|$)/,
];

function isStateChanging(method: string, path: string): boolean {
  if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') return true;
  const normalised = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return STATE_CHANGING_GETS.some((pattern) => pattern.test(normalised));
}

export function isCrossSite(request: FastifyRequest): boolean {
  const fetchSite = request.headers['sec-fetch-site'];
  if (typeof fetchSite === 'string' && fetchSite !== 'same-origin' && fetchSite !== 'none') return true;
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '') {
    try {
      return new URL(origin).host !== request.headers.host;
    } catch {
      return true;
    }
  }
  return false;
}

export async function refuseCrossSiteRequests(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const path = request.url.split('?')[0];
  if (!path.startsWith('/api/')) return;
  if (isStateChanging(request.method, path) && isCrossSite(request)) {
    await reply.code(403).send(fail('cross-site request refused'));
  }
}
