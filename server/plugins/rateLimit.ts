// The per-client-IP limit on the sensitive console endpoints, as a route's
// preHandler: `preHandler: rateLimit('critical')`. The counters are the
// RateLimiter service (services/rateLimiter.ts), shared through Redis when
// there is one; the limits are config.rateLimits.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { fail } from '../../common/envelope';
import type { RateLimitConfig } from '../config';

export function rateLimit(bucket: keyof RateLimitConfig): preHandlerAsyncHookHandler {
  return async function limitRate(request: FastifyRequest, reply: FastifyReply) {
    const { rateLimiter, config } = request.server.ctx;
    if (!(await rateLimiter.allow(bucket, request.ip, config.rateLimits[bucket]))) {
      return reply.code(429).send(fail('too many requests, please try again later', 'too_many_requests'));
    }
  };
}
