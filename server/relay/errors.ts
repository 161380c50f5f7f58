// The relay's one error shape: OpenAI's error object with a meaningful status.
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { UpstreamFailure } from './autoDisable';

export interface RelayError {
  status: number;
  message: string;
  type: string;
  code: string | number | null;
  param?: string | null;
  /** Seconds after which trying again may succeed (the Retry-After header). */
  retryAfter?: number;
}

export const relayError = (status: number, message: string, code: string | null = null, type = 'invalid_request_error'): RelayError => ({
  status,
  message,
  type,
  code,
});

export const isRelayError = (value: unknown): value is RelayError =>
  typeof value === 'object' && value !== null && 'status' in value && 'message' in value && 'type' in value;

const errorBody = (error: RelayError) => ({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } });

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

/** OpenAI's messages quote a mangled key; ours must not reach a client even mangled. */
const KEY_LIKE = /\bsk-[A-Za-z0-9_*.-]{4,}/g;

/**
 * The upstream's own error, passed on with its status so clients keep
 * OpenAI's type and code. Only the channel's key is scrubbed from the text.
 */
export function upstreamRelayError(status: number, failure: UpstreamFailure, channelKey: string): RelayError {
  if (failure.type === undefined) return relayError(status, failure.message, 'upstream_error', 'server_error');
  const message = (channelKey ? failure.message.split(channelKey).join('sk-***') : failure.message).replace(KEY_LIKE, 'sk-***');
  return { status, message, type: failure.type ?? 'upstream_error', code: failure.code ?? null, param: null };
}
