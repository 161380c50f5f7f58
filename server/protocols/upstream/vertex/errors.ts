// Vertex AI's failures. Google's envelope ({"error":{"code","message",
// "status"}}) for everything Google's front answers (auth, quota, a model the
// project lacks), read by the Gemini adaptor's classifier; Anthropic's
// ({"type":"error","error":{...}}) for what Claude itself refuses on
// rawPredict. On Vertex a 401/403 means the service account (its token, its
// roles, the API not enabled for its project) cannot call the model: a dead key.
import { parseJson, upstreamFailure } from '../../shared';
import type { UpstreamFailure } from '../../types';
import { failure as anthropicFailure } from '../anthropic/errors';
import { failure as googleFailure } from '../gemini/errors';

const KEY_REFUSALS = new Set(['UNAUTHENTICATED', 'PERMISSION_DENIED']);

export function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body) as { type?: unknown; error?: { type?: unknown } } | undefined;
  if (parsed && parsed.type === 'error' && typeof parsed.error?.type === 'string') return anthropicFailure(status, body);
  const google = googleFailure(status, body);
  if (!google.type && !parseJson(body)) {
    // not JSON (a proxy's page, a gateway timeout): say who answered
    const text = body.trim().slice(0, 300);
    return upstreamFailure(status, `Vertex AI answered HTTP ${status}${text ? `: ${text}` : ''}`, {
      deadKey: status === 401,
      retryable: status === 401 || status === 429 || status >= 500,
    });
  }
  const refused = (typeof google.type === 'string' && KEY_REFUSALS.has(google.type)) || status === 401 || status === 403;
  return refused ? { ...google, deadKey: true, retryable: true } : google;
}
