// Coze's failures: `{code, msg}` bodies (with HTTP 200 or an error status),
// an `error` event or a `conversation.chat.failed` event's `last_error`.
// Codes: https://www.coze.com/docs/developer_guides/coze_error_codes
import type { UpstreamFailure } from '../../types';
import { isObject, parseJson, upstreamFailure } from '../../shared';

/** Codes whose words prove the token can never work: 4100 invalid or expired token, 4101 a token without the chat permission, 4028 the account's quota spent. */
const DEAD_KEY_CODES = new Set([4100, 4101, 4028]);

function statusForCode(code: number, fallback: number): number {
  if (code === 4100) return 401;
  if (code === 4101 || code === 4015) return 403;
  if (code === 4028) return 402;
  if (code === 4013 || code === 4009) return 429;
  if (code === 4200) return 404;
  if (code >= 5000) return 500;
  return fallback >= 400 ? fallback : 400;
}

/** A failure from Coze's code and message. */
export function classify(status: number, code: number, message: string): UpstreamFailure {
  const effective = statusForCode(code, status);
  const text = message || `Coze answered code ${code}`;
  const details = { type: 'coze_error', code };
  if (DEAD_KEY_CODES.has(code)) return upstreamFailure(effective, text, { ...details, deadKey: true });
  // 4015 (the bot is not published to the API), 4200 (no such bot), 429 and 5xx: another channel may serve it
  const channelError = effective === 403 || effective === 404 || effective === 429 || effective >= 500;
  return upstreamFailure(effective, text, { ...details, retryable: channelError });
}

/** The failure a `{code, msg}` object states; undefined when it states none (code 0 or absent). */
export function errorOf(value: unknown, status: number): UpstreamFailure | undefined {
  if (!isObject(value)) return undefined;
  const code = typeof value.code === 'number' ? value.code : Number(value.code);
  if (!Number.isFinite(code) || code === 0) return undefined;
  const message = typeof value.message === 'string' ? value.message : '';
  return classify(status, code, typeof value.msg === 'string' ? value.msg : message);
}

export function failure(status: number, body: string): UpstreamFailure {
  const known = errorOf(parseJson(body), status);
  if (known) return known;
  const text = body.trim().slice(0, 500);
  return upstreamFailure(status, text ? `Coze answered HTTP ${status}: ${text}` : '', { type: 'coze_error' });
}
