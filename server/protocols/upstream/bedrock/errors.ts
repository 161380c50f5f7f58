// Bedrock's failures. A refusal is `{"message": ...}` with its type in the
// x-amzn-ErrorType header, which the relay does not pass to adaptors: the type
// is read from the status and, where one status has several, from AWS's fixed
// words. A failure inside a stream is a frame of type `exception` named by its
// `:exception-type` header.
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
import type { UpstreamFailure } from '../../types';
import { isObject, parseJson, upstreamFailure } from '../../shared';

/** The exception each status means (Converse's documented errors). */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** AWS's words for the 403s that are not AccessDeniedException. */
const TYPE_BY_WORDS: Array<[RegExp, string]> = [
  [/security token included in the request is invalid/i, 'UnrecognizedClientException'],
  [/security token included in the request is expired/i, 'ExpiredTokenException'],
  [/signature we calculated does not match/i, 'InvalidSignatureException'],
];

/** The status a stream's exception comes with (their names are the error names in lower camel case). */
const STATUS_BY_EXCEPTION: Record<string, number> = {
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  modelTimeoutException: 408,
  modelStreamErrorException: 424,
  modelErrorException: 424,
  throttlingException: 429,
  serviceQuotaExceededException: 429,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

/** Keys that can never succeed as they are: unknown, mis-signed, expired, or without access to Bedrock's models. */
const DEAD_KEY_TYPES = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
  'AccessDeniedException',
]);

function classify(status: number, type: string, message: string): UpstreamFailure {
  const deadKey = DEAD_KEY_TYPES.has(type) || status === 401;
  // a request Bedrock found invalid fails anywhere; a model another channel may serve, a busy or failing model may not
  const retryable = deadKey || status === 404 || status === 408 || status === 424 || status === 429 || status >= 500;
  return upstreamFailure(status, message, { type, code: type, deadKey, retryable });
}

export function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  const said = isObject(parsed) ? (parsed.message ?? parsed.Message) : undefined;
  if (typeof said === 'string' && said !== '') {
    const type = TYPE_BY_WORDS.find(([words]) => words.test(said))?.[1] ?? TYPE_BY_STATUS[status] ?? `HTTP ${status}`;
    return classify(status, type, said);
  }
  // not Bedrock's JSON (a proxy's page, a load balancer's timeout): keep a short piece of what it said
  const text = body.trim().slice(0, 300);
  return classify(status, TYPE_BY_STATUS[status] ?? `HTTP ${status}`, text ? `upstream answered HTTP ${status}: ${text}` : '');
}

/** A stream's `exception` frame (or an `error` frame's code) as a failure. */
export function streamException(exceptionType: string, message: string): UpstreamFailure {
  const status = STATUS_BY_EXCEPTION[exceptionType] ?? 500;
  const type = exceptionType.charAt(0).toUpperCase() + exceptionType.slice(1);
  return classify(status, type, message || `Bedrock's stream failed with ${exceptionType}`);
}
