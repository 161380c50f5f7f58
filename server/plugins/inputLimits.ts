// How big a request body may be, and how a refused input is worded.
// The relay forwards uploads (audio, long prompts), so /v1 keeps a large
// limit; the console API never needs more than a form's worth (the defaults
// are in config.ts). Fastify's own bodyLimit is the relay's; the plugin gives
// every /api route registered after it the console's.
import type { FastifyError, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

export interface BodyLimits {
  relay: number;
  api: number;
}

/** An onRoute hook giving every /api route the console's limit, unless the route sets its own. */
export function apiBodyLimit(limits: BodyLimits) {
  return (route: RouteOptions) => {
    if (route.url.startsWith('/api') && route.bodyLimit === undefined) route.bodyLimit = limits.api;
  };
}

export const inputLimitsPlugin = fp<BodyLimits>(
  (app, limits) => {
    app.addHook('onRoute', apiBodyLimit(limits));
    return Promise.resolve();
  },
  { name: 'switchboard-input-limits' },
);

interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { description?: string };
}

const WHERE: Record<string, string> = { body: 'the request body', querystring: 'the query string', params: 'the path' };

/**
 * "<field> must be <what>": the field named as the console knows it (`p`,
 * `id`, `remain_quota`), the rule in words from the schema's description.
 */
export function validationMessage(error: FastifyError): string {
  const errors = (error.validation ?? []) as SchemaError[];
  const context = error.validationContext ?? 'body';
  // the last error is the outermost failing rule (an anyOf after its branches)
  const last = errors[errors.length - 1];
  if (!last) return error.message;
  const field = last.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (last.keyword === 'required') return `${String(last.params.missingProperty)} is required in ${WHERE[context] ?? context}`;
  if (last.keyword === 'additionalProperties')
    return `unknown field ${String(last.params.additionalProperty)} in ${WHERE[context] ?? context}`;
  if (last.keyword === 'maxProperties') return `${WHERE[context] ?? context} has too many fields`;
  const rule = last.parentSchema?.description ?? last.message ?? 'valid';
  if (!field) return context === 'body' ? 'the request body must be a JSON object' : `${WHERE[context] ?? context} must be ${rule}`;
  return `${field} in ${WHERE[context] ?? context} must be ${rule}`;
}

/** The console's wording of a 4xx raised before the handler (parser, size, content type, schema). */
export function requestErrorMessage(error: FastifyError, status: number, bodyLimit: number | undefined): string {
  if (error.validation) return validationMessage(error);
  if (status === 413)
    return bodyLimit ? `the request body is larger than the limit of ${bodyLimit} bytes` : 'the request body is too large';
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported content type';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the request body is empty but its content type is JSON';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'the request body is not valid JSON';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'the request body does not match its Content-Length';
    default:
      return 'invalid request body';
  }
}
