// X-Request-Id: every exchange has one, the client's own when it is a sane
// token, else one made here. It is fixed once, as the request arrives (before
// Fastify, so the relay's fast path and static files get it too), written
// back into the request's headers so every later reader sees the same value,
// and set on the answer before anything else is written. The relay sends it
// upstream and stores it in the consume log; the server log carries it as
// `requestId` (Fastify's request id is this value).
//
// app.ts's server tags every exchange before Fastify sees it (tagExchange);
// the plugin puts the id on answers to requests that did not come through
// that server (app.inject).
import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import { REQUEST_ID_HEADER } from '../../common/requestId';

export { REQUEST_ID_HEADER, requestIdOf } from '../../common/requestId';

/**
 * What a client may choose: letters, digits and `-_.:` (UUIDs, W3C trace ids,
 * ULIDs and the like), at most 128 characters. Anything else (spaces, quotes,
 * control characters, a header sent twice and so joined with a comma) is
 * replaced, so an id never forges a log line or carries a payload.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export const isSaneRequestId = (value: unknown): value is string => typeof value === 'string' && SANE_REQUEST_ID.test(value);

/** The request's id, fixed on first call: the client's if sane, else a new one, written back into its headers. */
export function assignRequestId(request: IncomingMessage, newId: () => string): string {
  const given = request.headers[REQUEST_ID_HEADER];
  if (isSaneRequestId(given)) return given;
  const made = newId();
  request.headers[REQUEST_ID_HEADER] = made;
  return made;
}

/** Fixes the id and puts it on the answer (headers set now are merged into whatever writeHead sends later). */
export function tagExchange(request: IncomingMessage, response: ServerResponse, newId: () => string): string {
  const id = assignRequestId(request, newId);
  response.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

export const requestIdPlugin = fp(
  (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (!reply.raw.hasHeader(REQUEST_ID_HEADER)) reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    });
    return Promise.resolve();
  },
  { name: 'switchboard-request-id' },
);
