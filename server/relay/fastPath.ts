// The hot JSON relay routes taken straight off Node's HTTP server, before
// Fastify sees the request (app.ts's server factory calls it first).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RelayContext } from './context';
import { isRelayError } from './errors';
import { queryOf, readJsonBody } from './intake';
import { answerCrash, runRelay, writeInboundError, type RelayDeclaration } from './pipeline';

/**
 * The hot JSON routes (the text routes app.ts hands it: chat, completions,
 * edits, embeddings, moderations, Anthropic's /v1/messages and OpenAI's
 * /v1/responses) straight off Node's HTTP server, before Fastify: its request and reply
 * objects, hooks and body parser cost a fifth of a lean relay's throughput.
 * It takes only POSTs with a JSON content type on the exact paths of the
 * declarations it is given (a trailing slash and a query string allowed;
 * paths with parameters are left to Fastify) and answers exactly what the
 * Fastify routes would; everything else, including those paths with another
 * method or content type, and every request once the app is closing, goes
 * to Fastify.
 */
export function relayFastPath(
  ctx: RelayContext,
  declarations: readonly RelayDeclaration[],
  options: { trustProxy: boolean; bodyLimit: number; isClosing: () => boolean },
) {
  const routes = new Map(
    declarations
      .filter((declared) => declared.route.body === 'json' && !declared.path.includes(':'))
      .map((declared) => [declared.path, declared.route]),
  );
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== 'POST' || options.isClosing()) return false;
    const url = request.url ?? '';
    const query = url.indexOf('?');
    let path = query === -1 ? url : url.slice(0, query);
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const route = routes.get(path);
    if (!route || !String(request.headers['content-type'] ?? '').includes('application/json')) return false;
    const crash = (error: unknown) => answerCrash(ctx, route.inbound, response, error);
    readJsonBody(
      request,
      options.bodyLimit,
      (read) => {
        try {
          if (isRelayError(read)) return writeInboundError(response, route.inbound, read);
          const forwarded = options.trustProxy
            ? String(request.headers['x-forwarded-for'] ?? '')
                .split(',')[0]
                .trim()
            : '';
          const input = {
            headers: request.headers,
            ip: forwarded || request.socket.remoteAddress || '',
            body: read.body,
            raw: read.raw,
            query: queryOf(url, query),
          };
          runRelay(ctx, route, input, response).catch(crash);
        } catch (error) {
          crash(error);
        }
      },
      crash,
    );
    return true;
  };
}
