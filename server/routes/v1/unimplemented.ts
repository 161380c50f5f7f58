// OpenAI routes the gateway does not relay (fine-tunes, model deletion)
// answer 501 api_not_implemented after checking the key. Unlike v0.5.3, no
// body parsing or channel choice comes first, so GET, DELETE and multipart
// calls reach the 501 too.
import type { FastifyInstance } from 'fastify';
import { isRelayError, relayError, sendRelayError } from '../../relay/errors';
import { authenticateRelay } from '../../relay/tokenAuth';

const UNIMPLEMENTED: ReadonlyArray<readonly ['GET' | 'POST' | 'DELETE', string]> = [
  ['POST', '/v1/fine-tunes'],
  ['GET', '/v1/fine-tunes'],
  ['GET', '/v1/fine-tunes/:id'],
  ['POST', '/v1/fine-tunes/:id/cancel'],
  ['GET', '/v1/fine-tunes/:id/events'],
  ['DELETE', '/v1/models/:model'],
];

export function unimplementedRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.ctx;
  for (const [method, url] of UNIMPLEMENTED) {
    app.route({
      method,
      url,
      handler: async (request, reply) => {
        const caller = await authenticateRelay(db, request);
        if (isRelayError(caller)) return sendRelayError(reply, caller);
        return sendRelayError(reply, relayError(501, 'API not implemented', 'api_not_implemented'));
      },
    });
  }
  return Promise.resolve();
}
