// How an error that escaped a route is answered: a database outage as 503 (the
// client may simply try again), anything else as its 4xx or as 500, in the
// envelope its caller reads (OpenAI's error object on /v1, { success, message }
// elsewhere) and never with an internal message.
import type { FastifyError } from 'fastify';
import fp from 'fastify-plugin';
import { fail } from '../../common/envelope';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/faults';
import { requestErrorMessage } from './inputLimits';

export const errorHandlerPlugin = fp(
  (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (isDatabaseUnavailable(error)) {
        // the pools reconnect by themselves; the client may simply try again
        request.log.warn({ err: error }, 'database unavailable');
        reply.code(503).header('retry-after', '1');
        return request.url.startsWith('/v1/') || request.url.startsWith('/dashboard/')
          ? reply.send({
              error: { message: DATABASE_UNAVAILABLE_MESSAGE, type: 'server_error', param: null, code: 'database_unavailable' },
            })
          : reply.send(fail(DATABASE_UNAVAILABLE_MESSAGE));
      }
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) request.log.error({ err: error }, 'unhandled error');
      if (request.url.startsWith('/v1/')) {
        return reply.code(status).send({
          error: {
            message: status === 500 ? 'internal error' : error.message,
            type: 'invalid_request_error',
            param: null,
            code: error.code ?? null,
          },
        });
      }
      const message = status === 500 ? 'internal server error' : requestErrorMessage(error, status, request.routeOptions.bodyLimit);
      return reply.code(status).send(fail(message));
    });
    return Promise.resolve();
  },
  { name: 'switchboard-error-handler' },
);
