// Google's Gemini API in: POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse (also under /v1, where @google/genai goes
// with apiVersion 'v1'), run through the relay pipeline as text.ts's
// GEMINI_TEXT_ROUTE with the Gemini codec (server/protocols/inbound/geminiNative.ts).
//
// Fastify cannot route on a colon inside a segment, so each version has one
// wildcard route that reads `{model}:{method}` itself; a method other than
// those two is Google's 404. Everything here answers in Google's error shape,
// Fastify's own refusals (a body too large, a content type it cannot read)
// included. JSON bodies are kept as the client's bytes (this plugin's own
// parser), so a channel that speaks Gemini gets them exactly as sent.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GEMINI_METHODS, geminiNative } from '../../protocols/inbound/geminiNative';
import type { RelayContext } from '../../relay/context';
import { relayError, type RelayError } from '../../relay/errors';
import { forwardableBytes } from '../../relay/intake';
import { answerCrash, runRelay } from '../../relay/pipeline';
import { modelNameProblem } from '../../relay/requestFields';
import { GEMINI_TEXT_ROUTE } from './text';

const sendGoogleError = (reply: FastifyReply, error: RelayError | { status: number; message: string; type: string; code: null }) =>
  reply.code(error.status).header('content-type', geminiNative.contentType).send(geminiNative.errorBody(error));

/** `{model}:{method}` of the path's last part, when it names a model and a method this relay serves. */
function modelAndMethod(target: string): { model: string; method: string } | undefined {
  const colon = target.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const model = target.slice(0, colon);
  const method = target.slice(colon + 1);
  return !model.includes('/') && Object.hasOwn(GEMINI_METHODS, method) ? { model, method } : undefined;
}

export function geminiNativeRoutes(app: FastifyInstance, options: { ctx: RelayContext }): Promise<void> {
  const { ctx } = options;
  const route = GEMINI_TEXT_ROUTE;

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'unhandled error');
    return sendGoogleError(reply, { status, message: status === 500 ? 'internal error' : error.message, type: '', code: null });
  });

  const generate = async (
    request: FastifyRequest<{ Params: { '*'?: string }; Querystring: Record<string, unknown> }>,
    reply: FastifyReply,
  ) => {
    const target = request.params['*'] ?? '';
    const asked = modelAndMethod(target);
    if (!asked)
      return sendGoogleError(
        reply,
        relayError(404, `models/${target} is not a method this gateway serves (generateContent, streamGenerateContent)`, 'NOT_FOUND'),
      );
    const badName = modelNameProblem(asked.model);
    if (badName) return sendGoogleError(reply, badName);
    const query = request.query;
    if (GEMINI_METHODS[asked.method].streamed && query.alt !== 'sse') {
      // Google's other stream form is one JSON array answered at the end: no client of ours has asked for it
      return sendGoogleError(
        reply,
        relayError(400, 'streamGenerateContent is served as server-sent events only: add alt=sse to the query', 'INVALID_ARGUMENT'),
      );
    }
    const bytes = Buffer.isBuffer(request.body) ? request.body : undefined;
    let body: unknown;
    let raw: Buffer | undefined;
    try {
      const text = bytes ? bytes.toString('utf8') : '';
      body = bytes ? JSON.parse(text) : undefined;
      // bytes holding a number written longer than JSON prints it go upstream as printed (intake.ts)
      raw = bytes && forwardableBytes(text, bytes);
    } catch {
      // the pipeline refuses a body that is not a JSON object, once the key is known good
      body = undefined;
    }
    // Google's clients may put the key in the query string; it counts as the header does
    const key =
      typeof query.key === 'string' && query.key !== '' && request.headers['x-goog-api-key'] === undefined ? query.key : undefined;
    const headers = key === undefined ? request.headers : { ...request.headers, 'x-goog-api-key': key };
    // the pipeline writes to Node's response itself, as the other relay routes do
    reply.hijack();
    const input = { headers, ip: request.ip, body, raw, pathModel: asked.model, pathMethod: asked.method };
    await runRelay(ctx, route, input, reply.raw).catch((error: unknown) => answerCrash(ctx, route.inbound, reply.raw, error));
  };
  app.post('/v1beta/models/*', generate);
  app.post('/v1/models/*', generate);
  return Promise.resolve();
}
