// The relay's one error shape: OpenAI's error object with a meaningful status.
import type { FastifyReply } from 'fastify';

export interface RelayError {
  status: number;
  message: string;
  type: string;
  code: string | null;
}

export const relayError = (status: number, message: string, code: string | null = null, type = 'invalid_request_error'): RelayError => ({
  status,
  message,
  type,
  code,
});

export function sendRelayError(reply: FastifyReply, error: RelayError) {
  return reply.code(error.status).send({ error: { message: error.message, type: error.type, param: null, code: error.code } });
}
