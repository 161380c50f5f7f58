// The server log: Fastify's pino logger, one JSON object per line. Lines about
// a request carry its X-Request-Id as `requestId` (and the relay's its
// userId, tokenId and channelId); none ever carries a key, an Authorization
// header, a cookie or a prompt. The request serializer logs the method, the
// path with secret-looking query values masked (Gemini clients send their key
// as `?key=`, OAuth callbacks a `code`), and the client address; bodies and
// headers are never logged, and the redaction below catches the usual places
// a secret could still be passed in a log object.
//
// loggerOptions() configures Fastify's logger when the app is made; the
// plugin adds the relay's own line per request when the level is info or lower.
import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { bookkeepingFor } from '../billing/bookkeeping';
import type { RelayHooks } from '../relay/context';
import type { RelayCall } from '../relay/pipeline';
import { relayContextOf } from './relayContext';
import { requestIdOf } from './requestId';
import type { DestinationStream } from 'pino';

/** Query parameters whose values are secrets. */
const SECRET_QUERY = /([?&](?:key|api[-_]?key|access[-_]?token|token|code|state|password|secret)=)[^&#]*/gi;

export const maskSecretQuery = (url: string): string => (url.includes('=') ? url.replace(SECRET_QUERY, '$1[redacted]') : url);

/** Paths pino blanks out in any logged object, wherever a caller put them. */
export const REDACTED_PATHS = [
  'authorization',
  'cookie',
  'password',
  'key',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'headers["x-goog-api-key"]',
  'headers["api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.key',
  '*.apiKey',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
  '*.headers["x-goog-api-key"]',
  '*.headers["api-key"]',
  '*.headers["set-cookie"]',
  'messages',
  'prompt',
  '*.messages',
  '*.prompt',
  '*.body',
];

export interface LoggerSettings {
  level: string;
  /** Where the lines go (stdout when absent; tests capture them). */
  stream?: DestinationStream;
}

/** Fastify's logger options for a level: JSON lines, request ids as `requestId`, secrets redacted. */
export function loggerOptions(settings: LoggerSettings): FastifyServerOptions['logger'] {
  return {
    level: settings.level,
    ...(settings.stream ? { stream: settings.stream } : {}),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: maskSecretQuery(request.url),
        remoteAddress: request.ip,
      }),
    },
  };
}

/** One info line per relayed request (LOG_LEVEL=info): who, which channel and model, how it ended; never what was asked. */
export function relayRequestLog(log: FastifyBaseLogger): RelayHooks['afterFinish'][number] {
  return (outcome, operation, admission, startedAt, channelId, call) => {
    const caller = call.caller as RelayCall['caller'] | undefined;
    log.info(
      {
        requestId: admission?.requestId ?? requestIdOf(call.input.headers),
        userId: caller?.user.id,
        tokenId: caller?.token.id,
        channelId,
        model: admission?.model,
        operation,
        protocol: call.route.inbound.protocol,
        status: call.response.statusCode,
        outcome,
        elapsedMs: startedAt > 0 ? Date.now() - startedAt : undefined,
      },
      'relay request finished',
    );
  };
}

/** The relay's request log: one line per relayed request when the server logs at info. */
export const relayLogPlugin = fp(
  (app) => {
    if (!(app.log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled?.('info')) return Promise.resolve();
    relayContextOf(app, bookkeepingFor(app.ctx, app.log)).hooks.afterFinish.push(relayRequestLog(app.log));
    return Promise.resolve();
  },
  { name: 'switchboard-relay-log', dependencies: ['switchboard-services'] },
);
