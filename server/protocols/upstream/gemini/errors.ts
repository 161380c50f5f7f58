// Google's failures: an error body by its gRPC status, ErrorInfo reasons and
// (where it gives none) its words, told apart as dead key, retryable or not.
import { parseJson, upstreamFailure } from '../../shared';
import type { UpstreamFailure } from '../../types';
import type { GeminiResponse } from './json';

/** Google's JSON answer, or the one that matters of an array of them; undefined when it is not JSON. */
export function parseGoogle(body: string): GeminiResponse | undefined {
  let value = parseJson(body);
  // the non-SSE stream form (and some error answers) is a JSON array of responses
  if (Array.isArray(value)) value = value.find((item) => item && typeof item === 'object' && 'error' in item) ?? value[value.length - 1];
  return value && typeof value === 'object' ? value : undefined;
}

// ---- failures ----

// ErrorInfo reasons that say the key itself will not work again as it is
const DEAD_KEY_REASONS = new Set([
  'API_KEY_INVALID',
  'API_KEY_EXPIRED',
  'CONSUMER_SUSPENDED',
  'API_KEY_SERVICE_BLOCKED',
  'SERVICE_DISABLED',
]);
// and the words Google uses where it gives no reason (a leaked key: 403 with a message only)
const DEAD_KEY_WORDS =
  /api key (not valid|not found|expired)|api key was reported as leaked|consumer .* has been suspended|has been suspended/i;
const RETRYABLE_STATUSES = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'UNKNOWN', 'ABORTED']);

/** Whether the error says the key itself will not work again: by its reasons, its status, or (where it gives neither) its words. */
function isDeadKey(status: number, reasons: string[], grpcStatus: string | null, message: string): boolean {
  return (
    reasons.some((reason) => DEAD_KEY_REASONS.has(reason)) ||
    grpcStatus === 'UNAUTHENTICATED' ||
    ((status === 400 || status === 401 || status === 403) && DEAD_KEY_WORDS.test(message))
  );
}

/**
 * Whether another channel may do better. A refusal that is this channel's own (permissions,
 * location, a model it lacks) may pass on another channel; a malformed request (INVALID_ARGUMENT)
 * would fail anywhere.
 */
function isRetryable(status: number, grpcStatus: string | null): boolean {
  return (
    status === 429 ||
    status >= 500 ||
    (grpcStatus !== null && RETRYABLE_STATUSES.has(grpcStatus)) ||
    grpcStatus === 'PERMISSION_DENIED' ||
    grpcStatus === 'FAILED_PRECONDITION' ||
    grpcStatus === 'NOT_FOUND' ||
    status === 403 ||
    status === 404
  );
}

/** Google's error answer as a classified failure. */
export function failure(status: number, body: string): UpstreamFailure {
  const answer = parseGoogle(body);
  const error = answer?.error;
  if (!error || typeof error !== 'object') {
    const text = body.trim().slice(0, 500);
    return upstreamFailure(status, text ? `Gemini answered HTTP ${status}: ${text}` : '', {});
  }
  const reasons = (Array.isArray(error.details) ? error.details : [])
    .map((detail) => detail?.reason)
    .filter((reason): reason is string => typeof reason === 'string');
  const message = typeof error.message === 'string' ? error.message : '';
  const grpcStatus = typeof error.status === 'string' ? error.status : null;
  const deadKey = isDeadKey(status, reasons, grpcStatus, message);
  const retryable = deadKey || isRetryable(status, grpcStatus);
  return upstreamFailure(status, message || `Gemini answered HTTP ${status}${grpcStatus ? ` ${grpcStatus}` : ''}`, {
    type: grpcStatus,
    code: reasons[0] ?? grpcStatus ?? (typeof error.code === 'number' ? error.code : null),
    deadKey,
    retryable,
  });
}
