// DashScope's failures: `{code, message}` bodies, by code and status.
import type { UpstreamFailure } from '../../types';
import { parseJson, upstreamFailure } from '../../shared';

// ---- errors ----

/** DashScope error codes whose words prove the key (or its account) cannot be used. */
const DEAD_KEY_CODES = new Set(['InvalidApiKey', 'Arrearage', 'AccessDenied.Unpurchased']);

function statusForCode(code: string, fallback: number): number {
  if (code === 'InvalidApiKey') return 401;
  if (code.startsWith('Throttling')) return 429;
  if (code === 'Arrearage') return 402;
  if (code.startsWith('AccessDenied') || code.startsWith('Model.AccessDenied')) return 403;
  if (code === 'ModelNotFound' || code === 'NotFound') return 404;
  if (code.startsWith('InternalError') || code === 'SystemError') return 500;
  if (code === 'ServiceUnavailable' || code === 'ModelUnavailable' || code === 'RequestTimeOut') return 503;
  return fallback >= 400 ? fallback : 400;
}

function classify(status: number, code: string, message: string): UpstreamFailure {
  const effective = statusForCode(code, status);
  const text = message || code || `DashScope answered HTTP ${effective}`;
  const details = { type: code || 'dashscope_error', code: code || null };
  if (DEAD_KEY_CODES.has(code)) return upstreamFailure(effective, text, { ...details, deadKey: true });
  // the request itself: bad parameters, inspected content, an over-long input fail on any channel
  const requestError =
    code === 'InvalidParameter' || code === 'DataInspectionFailed' || code.startsWith('BadRequest') || code === 'InvalidURL';
  // a model this key may not use, or one this account has not: another channel may well serve it
  const channelError = effective === 401 || effective === 403 || effective === 404 || effective === 429 || effective >= 500;
  return upstreamFailure(effective, text, { ...details, retryable: requestError ? false : channelError });
}

export function errorOf(body: unknown, status: number): UpstreamFailure | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as { code?: unknown; message?: unknown };
  if (typeof record.code !== 'string' || !record.code) return undefined;
  return classify(status, record.code, typeof record.message === 'string' ? record.message : '');
}

export function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  // DashScope's own `{code, message}`, or the `{error: {code, message}}` its gateway answers on some paths
  const nested = parsed && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
  const known = errorOf(parsed, status) ?? errorOf(nested, status);
  if (known) return known;
  const text = body.trim().slice(0, 500);
  return upstreamFailure(status, text ? `DashScope answered HTTP ${status}: ${text}` : '', { type: 'dashscope_error' });
}
