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

/**
 * Baidu's error codes (in 200 bodies and in HTTP errors alike).
 * https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh
 */
function classify(code: number, message: string, httpStatus: number): UpstreamFailure {
  const text = message || `Baidu error ${code}`;
  const details = { type: 'baidu_error', code };
  switch (code) {
    case 100: // Invalid parameter: Baidu documents it as an invalid access_token parameter
    case 110: // Access token invalid or no longer valid
    case 111: // Access token expired
      return upstreamFailure(401, text, { ...details, code: CREDENTIAL_REJECTED, deadKey: false, retryable: true });
    case 13: // Get service token failed
    case 14: // IAM Certification failed
    case 15: // App not exists or create failed
      return upstreamFailure(401, text, { ...details, deadKey: true });
    case 19: // Open api total request limit reached: the account's balance / total quota is used up
      return upstreamFailure(402, text, { ...details, deadKey: true });
    case 4: // Open api request limit reached (cluster)
    case 17: // Open api daily request limit reached
    case 18: // Open api qps request limit reached
    case 336501: // rpm limit
    case 336502: // tpm limit
      return upstreamFailure(429, text, { ...details, retryable: true });
    case 6: // No permission to access data (this key may not use this model; another channel may)
    case 336004: // permission error
      return upstreamFailure(403, text, { ...details, retryable: true });
    case 1: // Unknown error
    case 2: // Service temporarily unavailable
    case 336000: // internal error
    case 336100: // try again later
      return upstreamFailure(503, text, { ...details, retryable: true });
    default:
      if (code >= 336000 && code < 337000) return upstreamFailure(400, text, { ...details, retryable: false }); // the request itself
      if (code === 3) return upstreamFailure(400, text, { ...details, retryable: false });
      return upstreamFailure(httpStatus >= 400 ? httpStatus : 500, text, details);
  }
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
