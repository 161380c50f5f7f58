// Spark failures: HTTP statuses at the upgrade and `header.code` in frames.
import type { UpstreamFailure } from '../../types';
import { count, parseJson, upstreamFailure } from '../../shared';
import { isObject, text } from './json';

interface CodeMeaning {
  status: number;
  type: string;
  deadKey?: boolean;
  retryable?: boolean;
}

/** Spark's frame codes (Web document, 错误码), by what they mean for routing. */
function meaningOf(code: number): CodeMeaning {
  switch (code) {
    case 10013: // input refused by moderation
    case 10014: // output refused by moderation
    case 10019: // the conversation tends to break the rules
      return { status: 400, type: 'content_filter', retryable: false };
    case 10003: // malformed message
    case 10004: // schema error
    case 10005: // bad parameter value
    case 10163: // engine parameter schema check failed
    case 10907: // history + question exceed the token limit
      return { status: 400, type: 'invalid_request_error', retryable: false };
    case 10015: // appid blacklisted
    case 10016: // appid not licensed: feature or version not opened, tokens used up
    case 11200: // no licence for the feature, or the purchased volume is used up
      return { status: 403, type: 'authentication_error', deadKey: true };
    case 10006: // the same user connected twice
    case 10007: // still answering this user's previous question
    case 10110: // service busy
    case 11201: // daily quota exceeded (resets tomorrow)
    case 11202: // per-second rate exceeded
    case 11203: // concurrency exceeded
      return { status: 429, type: 'rate_limit_error', retryable: true };
    default:
      return { status: code >= 10000 && code < 11000 ? 502 : 500, type: 'spark_error', retryable: true };
  }
}

export function frameFailure(status: number, code: number, message: string): UpstreamFailure {
  const meaning = meaningOf(code);
  return upstreamFailure(status >= 400 ? status : meaning.status, message || `Spark error ${code}`, {
    type: meaning.type,
    code,
    deadKey: meaning.deadKey ?? false,
    retryable: meaning.retryable,
  });
}

/**
 * A refusal: a handshake answered with an HTTP status and `{message}` (401: the
 * signature or key did not verify; 403: the date is off, or the IP is not
 * allowed), or an error frame `{header: {code, message}}`.
 */
export function classify(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  if (isObject(parsed) && isObject(parsed.header) && count(parsed.header.code) > 0) {
    return frameFailure(status, count(parsed.header.code), text(parsed.header.message));
  }
  const message = (isObject(parsed) ? text(parsed.message) : '') || body.trim().slice(0, 500) || `Spark answered HTTP ${status}`;
  if (status === 401) return upstreamFailure(401, message, { type: 'authentication_error', deadKey: true });
  if (status === 403) return upstreamFailure(403, message, { type: 'authentication_error', retryable: true });
  return upstreamFailure(status, message, { type: 'spark_error' });
}
