// The Proxy channel (type 43), as one-api's `/v1/oneapi/proxy/:channelid/*`:
// any method, the rest of the path (and the query) sent to the channel's
// base URL, the request's headers passed on with the channel's key as the
// `Authorization` header as it is written (one-api sets it so: a key that
// needs `Bearer ` carries it), and the answer's status, headers and bytes
// passed back as they come. Only an admin's token may use it (it names a
// channel, as one-api's pinned channels do). No tokens are counted: a call
// costs 0, as one-api bills it, and is logged with the channel, method and
// path so it can be audited.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { request as undiciRequest } from 'undici';
import { isAdmin, LogType } from '../../../common/roles';
import type { Bookkeeping } from '../../billing/bookkeeping';
import { findChannel } from '../../repositories/channels';
import { isRelayError, relayError, sendRelayError } from '../../relay/errors';
import { authenticateRelay } from '../../relay/tokenAuth';

export const PROXY_CHANNEL_TYPE = 43;

/** Headers that describe this hop, not the request: never passed on (either way). */
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'accept-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

function forwardedHeaders(request: FastifyRequest, key: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_HEADERS.has(name) || name === 'authorization' || name.startsWith('x-forwarded-')) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  headers.authorization = key;
  return headers;
}

/** How many decodings of a path are tried for a climb: an upstream (or a proxy before it) may decode again what it receives. */
const DECODINGS = 4;
const CLIMB = /(^|[/\\])\.\.?([/\\]|$)/;

/**
 * The rest of the path as the client wrote it (still percent-encoded), or a
 * refusal when it could leave the channel's base path: a `.` or `..` segment
 * (or a backslash, which some servers read as a slash) in it or in any of
 * its decodings (`..%2f`, `%2e%2e%2f`, `%252e%252e%252f`...), or a URL whose
 * path, once resolved, is not under the base path.
 */
export function proxiedPath(baseUrl: string, rest: string): { url: string } | { refused: string } {
  let probe = rest;
  for (let decoding = 0; decoding < DECODINGS; decoding += 1) {
    if (CLIMB.test(probe) || probe.includes('\\')) return { refused: "the path may not climb out of the channel's base path" };
    let decoded: string;
    try {
      decoded = decodeURIComponent(probe);
    } catch {
      return { refused: 'the path is not validly percent-encoded' };
    }
    if (decoded === probe) break;
    probe = decoded;
  }
  const base = baseUrl.replace(/\/+$/, '');
  const url = `${base}/${rest}`;
  let resolved: URL;
  let basePath: string;
  try {
    resolved = new URL(url);
    basePath = new URL(base).pathname.replace(/\/+$/, '');
  } catch {
    return { refused: "the path does not make a valid URL with the channel's base URL" };
  }
  if (!(resolved.pathname === basePath || resolved.pathname.startsWith(`${basePath}/`)))
    return { refused: "the path may not climb out of the channel's base path" };
  return { url };
}

/** The rest of the path after the channel id, and the query string, as they were sent (not as Fastify decoded them). */
function sentPathOf(requestUrl: string, channelIdText: string, decodedRest: string): { rest: string; search: string } {
  const queryAt = requestUrl.indexOf('?');
  const search = queryAt === -1 ? '' : requestUrl.slice(queryAt);
  const pathOnly = queryAt === -1 ? requestUrl : requestUrl.slice(0, queryAt);
  const prefix = `/v1/oneapi/proxy/${channelIdText}/`;
  const rest = pathOnly.startsWith(prefix) ? pathOnly.slice(prefix.length) : decodedRest;
  return { rest, search };
}

export function proxyRoutes(app: FastifyInstance, options: { bookkeeping: Bookkeeping }): Promise<void> {
  const { db } = app.ctx;
  // the body passes as bytes, whatever its type
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.all<{ Params: { channelid: string; '*': string } }>('/v1/oneapi/proxy/:channelid/*', async (request, reply) => {
    const started = Date.now();
    const caller = await authenticateRelay(db, request);
    if (isRelayError(caller)) return sendRelayError(reply, caller);
    if (!isAdmin(caller.user.role))
      return sendRelayError(
        reply,
        relayError(403, 'only an administrator may call a channel by its id through the proxy', 'channel_not_allowed'),
      );
    const channelId = Number(request.params.channelid);
    const channel = Number.isSafeInteger(channelId) && channelId > 0 ? await findChannel(db, channelId) : undefined;
    if (!channel || Number(channel.type) !== PROXY_CHANNEL_TYPE)
      return sendRelayError(reply, relayError(404, `there is no Proxy channel ${request.params.channelid}`, 'channel_not_found'));
    if (Number(channel.status) !== 1)
      return sendRelayError(reply, relayError(503, `the Proxy channel ${channelId} is disabled`, 'channel_disabled'));
    const { rest, search } = sentPathOf(request.url, request.params.channelid, request.params['*']);
    const target = proxiedPath(channel.base_url, rest);
    if ('refused' in target) return sendRelayError(reply, relayError(400, target.refused, 'invalid_path'));
    const url = `${target.url}${search}`;
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    const log = (status: number) =>
      options.bookkeeping.logs.write({
        userId: caller.user.id,
        username: caller.user.username,
        type: LogType.consume,
        content: `proxy ${request.method} /${request.params['*']} → HTTP ${status}`,
        quota: 0,
        tokenName: caller.token.name,
        tokenId: caller.token.id,
        modelName: '',
        channelId,
        elapsedMs: Date.now() - started,
      });
    let answer: Awaited<ReturnType<typeof undiciRequest>>;
    try {
      answer = await undiciRequest(url, {
        method: request.method as 'GET',
        headers: forwardedHeaders(request, channel.key),
        body: body && body.length > 0 && request.method !== 'GET' && request.method !== 'HEAD' ? body : undefined,
      });
    } catch (error) {
      log(502);
      return sendRelayError(
        reply,
        relayError(502, `the Proxy channel's upstream could not be reached: ${(error as Error).message}`, 'upstream_unreachable'),
      );
    }
    log(answer.statusCode);
    reply.code(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    // the upstream's bytes as they come; a client that leaves ends the upstream call with them
    return reply.send(answer.body);
  });
  return Promise.resolve();
}
