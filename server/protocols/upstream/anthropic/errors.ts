// Anthropic's failures: an error body by its `type` (and, for an account out
// of credit, its words), with the status an error met in a 200 body or a
// stream comes with.
import type { UpstreamFailure } from '../../types';
import { parseJson, upstreamFailure } from '../../shared';
import type { AnthropicAnswer } from './json';

/** The status each error type comes with (for an error met inside a 200 body or a stream). */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Out of credit or a disabled organisation arrive as an invalid_request_error in words only. */
const DEAD_ACCOUNT_WORDS = /credit balance is too low|organization has been disabled|organization is disabled/i;

function classify(status: number, type: string | undefined, message: string): UpstreamFailure {
  const deadKey =
    type === 'authentication_error' || type === 'permission_error' || type === 'billing_error' || DEAD_ACCOUNT_WORDS.test(message);
  const retryable =
    deadKey ||
    type === 'overloaded_error' ||
    type === 'api_error' ||
    type === 'rate_limit_error' ||
    type === 'timeout_error' ||
    // an unknown model on this channel may be served by another
    type === 'not_found_error' ||
    (type !== 'invalid_request_error' && type !== 'request_too_large' && (status === 429 || status >= 500));
  return upstreamFailure(status, message, { type: type ?? null, code: type ?? null, deadKey, retryable });
}

export function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body) as AnthropicAnswer | undefined;
  const error = parsed && typeof parsed === 'object' ? parsed.error : undefined;
  if (error && typeof error === 'object') {
    return classify(
      status,
      typeof error.type === 'string' ? error.type : undefined,
      typeof error.message === 'string' ? error.message : '',
    );
  }
  // not Anthropic's JSON (a proxy's page, a gateway timeout): keep a short piece of what it said
  const text = body.trim().slice(0, 300);
  return classify(status, undefined, text ? `upstream answered HTTP ${status}: ${text}` : '');
}

export function errorInBody(error: AnthropicAnswer['error']): UpstreamFailure {
  const type = typeof error?.type === 'string' ? error.type : 'api_error';
  return classify(ERROR_STATUS[type] ?? 500, type, typeof error?.message === 'string' ? error.message : '');
}
