// DeepL's failures: `{message, detail?}` bodies by HTTP status. 403 is a key
// DeepL does not accept (or one sent to the wrong endpoint), 456 an account
// whose character quota is spent: neither can work until someone acts.
import type { UpstreamFailure } from '../../types';
import { isObject, parseJson, upstreamFailure } from '../../shared';

function classify(status: number, message: string): UpstreamFailure {
  const details = { type: 'deepl_error', code: status };
  if (status === 403 || status === 456) return upstreamFailure(status, message, { ...details, deadKey: true });
  // 400 (a target language DeepL lacks, an empty text) and 413 (too long) fail anywhere
  if (status === 400 || status === 413 || status === 414) return upstreamFailure(status, message, { ...details, retryable: false });
  return upstreamFailure(status, message, details);
}

/** The failure an error body states (`message`, maybe a `detail`); undefined when it holds none. */
export function errorOf(value: unknown, status: number): UpstreamFailure | undefined {
  if (!isObject(value) || typeof value.message !== 'string' || Array.isArray(value.translations)) return undefined;
  const detail = typeof value.detail === 'string' && value.detail ? `: ${value.detail}` : '';
  return classify(status >= 400 ? status : 502, `${value.message}${detail}`);
}

export function failure(status: number, body: string): UpstreamFailure {
  const known = errorOf(parseJson(body), status);
  if (known) return known;
  const text = body.trim().slice(0, 500);
  return classify(status, text ? `DeepL answered HTTP ${status}: ${text}` : `DeepL answered HTTP ${status}`);
}
