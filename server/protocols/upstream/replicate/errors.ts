// Replicate's failures: RFC 7807 problem bodies (`{title, detail, status}`),
// and a prediction that failed or did not finish.
// Reference: https://replicate.com/docs/topics/predictions/lifecycle
import type { UpstreamFailure } from '../../types';
import { isObject, parseJson, upstreamFailure } from '../../shared';

/** A problem body's title and detail joined, or the status alone. */
function messageOf(body: Record<string, unknown>): string {
  const title = typeof body.title === 'string' ? body.title : '';
  const detail = typeof body.detail === 'string' ? body.detail : '';
  return [title, detail].filter(Boolean).join(': ');
}

export function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  const message = isObject(parsed) ? messageOf(parsed) : '';
  const text = message || (body.trim() ? `Replicate answered HTTP ${status}: ${body.trim().slice(0, 500)}` : '');
  const details = { type: 'replicate_error', code: isObject(parsed) && typeof parsed.title === 'string' ? parsed.title : null };
  // 401: no valid token; 402: the account has no credit left: the key cannot work until someone acts
  if (status === 401 || status === 402) return upstreamFailure(status, text, { ...details, deadKey: true });
  // 422: the input does not suit the model (the same anywhere); 404: a model this account cannot see
  if (status === 422 || status === 400) return upstreamFailure(status, text, { ...details, retryable: false });
  return upstreamFailure(status, text, { ...details, retryable: status === 404 || status === 429 || status >= 500 });
}
