// Baidu's failures: `{error_code, error_msg}` in 200 bodies and HTTP errors
// alike, and the OAuth endpoint's `{error, error_description}`.
import type { UpstreamFailure } from '../../types';
import { parseJson, upstreamFailure } from '../../shared';

/**
 * The `code` of a failure that means Baidu refused the access token itself
 * (error 110 invalid, 111 expired, 100 an unreadable access_token): the key may be fine, so the relay drops
 * the cached credential, exchanges the key again and retries.
 */
export const CREDENTIAL_REJECTED = 'credential_rejected';

// ---- errors ----

/** What a Baidu error code means: the status it is answered with and how the relay takes it. */
interface CodeMeaning {
  status: number;
  details: { code?: string; deadKey?: boolean; retryable?: boolean };
}

const ACCESS_TOKEN_REFUSED: CodeMeaning = { status: 401, details: { code: CREDENTIAL_REJECTED, deadKey: false, retryable: true } };
const KEY_REFUSED: CodeMeaning = { status: 401, details: { deadKey: true } };
const RATE_LIMITED: CodeMeaning = { status: 429, details: { retryable: true } };
const NOT_PERMITTED: CodeMeaning = { status: 403, details: { retryable: true } };
const UNAVAILABLE: CodeMeaning = { status: 503, details: { retryable: true } };

/**
 * Baidu's error codes (in 200 bodies and in HTTP errors alike).
 * https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh
 */
const BAIDU_CODES = new Map<number, CodeMeaning>([
  [100, ACCESS_TOKEN_REFUSED], // Invalid parameter: Baidu documents it as an invalid access_token parameter
  [110, ACCESS_TOKEN_REFUSED], // Access token invalid or no longer valid
  [111, ACCESS_TOKEN_REFUSED], // Access token expired
  [13, KEY_REFUSED], // Get service token failed
  [14, KEY_REFUSED], // IAM Certification failed
  [15, KEY_REFUSED], // App not exists or create failed
  [19, { status: 402, details: { deadKey: true } }], // Open api total request limit reached: the account's balance / total quota is used up
  [4, RATE_LIMITED], // Open api request limit reached (cluster)
  [17, RATE_LIMITED], // Open api daily request limit reached
  [18, RATE_LIMITED], // Open api qps request limit reached
  [336501, RATE_LIMITED], // rpm limit
  [336502, RATE_LIMITED], // tpm limit
  [6, NOT_PERMITTED], // No permission to access data (this key may not use this model; another channel may)
  [336004, NOT_PERMITTED], // permission error
  [1, UNAVAILABLE], // Unknown error
  [2, UNAVAILABLE], // Service temporarily unavailable
  [336000, UNAVAILABLE], // internal error
  [336100, UNAVAILABLE], // try again later
]);

/** A Baidu error code and message as a classified failure (by BAIDU_CODES; other 336xxx codes and 3 are the request's own fault). */
function classify(code: number, message: string, httpStatus: number): UpstreamFailure {
  const text = message || `Baidu error ${code}`;
  const details = { type: 'baidu_error', code };
  const known = BAIDU_CODES.get(code);
  if (known) return upstreamFailure(known.status, text, { ...details, ...known.details });
  if ((code >= 336000 && code < 337000) || code === 3) return upstreamFailure(400, text, { ...details, retryable: false }); // the request itself
  return upstreamFailure(httpStatus >= 400 ? httpStatus : 500, text, details);
}

/** A Baidu error object in a body, if the body is one. */
export function bodyError(body: unknown, httpStatus: number): UpstreamFailure | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as { error_code?: unknown; error_msg?: unknown };
  if (record.error_code === undefined || record.error_code === null || record.error_code === 0) return undefined;
  const code = Number(record.error_code);
  return classify(Number.isFinite(code) ? code : -1, typeof record.error_msg === 'string' ? record.error_msg : '', httpStatus);
}

export function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  const known = bodyError(parsed, status);
  if (known) return known;
  const oauth = parsed as { error?: unknown; error_description?: unknown } | undefined;
  if (oauth && typeof oauth === 'object' && typeof oauth.error === 'string') {
    return upstreamFailure(status, `${oauth.error}${typeof oauth.error_description === 'string' ? `: ${oauth.error_description}` : ''}`, {
      type: 'baidu_error',
      code: oauth.error,
    });
  }
  const text = body.trim().slice(0, 500);
  return upstreamFailure(status, text ? `Baidu answered HTTP ${status}: ${text}` : '', { type: 'baidu_error' });
}
