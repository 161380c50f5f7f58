// The relay's one error shape: OpenAI's error object with a meaningful status.
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { UpstreamFailure } from '../protocols/types';
import { scrubForClient } from './scrub';
import { relayError, type RelayError } from '../../common/relayError';

export { isRelayError, relayError, type RelayError } from '../../common/relayError';

const errorBody = (error: RelayError) => ({
  error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code },
});

export function sendRelayError(reply: FastifyReply, error: RelayError) {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  return reply.code(error.status).send(errorBody(error));
}

/** The same answer written straight to Node's response (the routes that bypass Fastify's reply). */
export function writeRelayError(response: ServerResponse, error: RelayError): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = JSON.stringify(errorBody(error));
  response.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...(error.retryAfter !== undefined ? { 'retry-after': String(error.retryAfter) } : {}),
  });
  response.end(text);
}

/**
 * Upstream answers a client may read as they are (scrubbed): OpenAI-shaped
 * complaints about the client's own request (a bad parameter, an unknown
 * model, an unprocessable input). Anything else (5xx, auth, rate limits on
 * the channel's account, unshaped bodies) is about the channel, so the client
 * gets a generic error and the request id that finds the detail in the log.
 */
const CLIENT_ERROR_STATUSES = new Set([400, 404, 422]);

export function upstreamRelayError(status: number, failure: UpstreamFailure, channelKey: string, requestId: string): RelayError {
  // OpenAI's word for it, or any vendor's complaint its adaptor judged the request's own (it would fail anywhere)
  if (CLIENT_ERROR_STATUSES.has(status) && (failure.type === 'invalid_request_error' || failure.retryable === false)) {
    return {
      status,
      message: scrubForClient(failure.message, channelKey),
      type: 'invalid_request_error',
      code: failure.code ?? null,
      param: null,
    };
  }
  if (status === 429) {
    return relayError(429, `the upstream service is busy, please retry later (request id ${requestId})`, 'upstream_busy', 'server_error');
  }
  if (status === 401 || status === 403) {
    // the channel's key was refused: the server's problem, not the caller's key
    return relayError(502, `the upstream service refused the gateway (request id ${requestId})`, 'upstream_error', 'server_error');
  }
  return relayError(
    status >= 500 ? status : 502,
    `the upstream service failed (request id ${requestId})`,
    'upstream_error',
    'server_error',
  );
}

/** A network failure or a cut answer, as a token holder sees it: no address, no detail, the request id. */
export function unreachableRelayError(brokeOff: boolean, requestId: string): RelayError {
  const what = brokeOff ? 'the upstream answer broke off' : 'the upstream service could not be reached';
  return relayError(502, `${what} (request id ${requestId})`, 'upstream_unreachable', 'server_error');
}
