// Upstream error texts can quote what we sent: the channel's key (OpenAI
// mangles it, some proxies echo it whole), an Authorization header, a URL with
// `key=` in its query. Every text that leaves the gateway or reaches its log
// goes through scrubSecrets; texts shown to token holders also lose URLs and
// addresses (scrubForClient), which say where the channel lives.

const REDACTED = '***';
/** OpenAI-style secret keys, whole or mangled (`sk-abc***xyz`, `sk-proj-...`). */
const KEY_LIKE = /\bsk-[A-Za-z0-9_*.-]{4,}/g;
/** `Bearer <anything up to a quote, comma or space>` (Authorization values, echoed). */
const BEARER = /\b(Bearer)\s+[^\s"',;]+/gi;
/** `key=`, `api_key=`, `api-key=`, `access_token=`, `token=` in a query string or form. */
const KEY_PARAMETER = /\b((?:api[_-]?)?key|access_token|token|secret)=[^&\s"',;]+/gi;
/** `x-api-key: ...` / `api-key: ...` header values, echoed. */
const KEY_HEADER = /\b((?:x-)?api-key)\s*:\s*[^\s"',;]+/gi;
const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;
const IPV6 = /\[?\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{0,4}\b\]?(?::\d+)?/gi;

/** The text without the given keys (each line of a multi-key value too) or anything shaped like a secret. */
export function scrubSecrets(text: string, ...keys: Array<string | undefined>): string {
  let scrubbed = text;
  for (const key of keys) {
    for (const part of (key ?? '').split('\n')) {
      const secret = part.trim();
      // a very short "key" would blank out ordinary words
      if (secret.length >= 6) scrubbed = scrubbed.split(secret).join(REDACTED);
    }
  }
  return scrubbed
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(KEY_PARAMETER, `$1=${REDACTED}`)
    .replace(KEY_HEADER, `$1: ${REDACTED}`)
    .replace(KEY_LIKE, `sk-${REDACTED}`);
}

/** What a token holder may read of an upstream's text: no secrets, URLs or network addresses. */
export function scrubForClient(text: string, ...keys: Array<string | undefined>): string {
  return scrubSecrets(text, ...keys)
    .replace(URL_LIKE, '[url]')
    .replace(IPV4, '[address]')
    .replace(IPV6, '[address]');
}

/** The longest reason a log row keeps per failure: enough to tell one from another, never a whole upstream body. */
const MAX_LINE = 200;

/** Runs of white space and control characters: PostgreSQL refuses a NUL in text, and a log line is one line. */
// eslint-disable-next-line no-control-regex -- the control characters are what it matches
const NOT_ON_ONE_LINE = /[\s\u0000-\u001f\u007f]+/g;

/** A failure's reason as log rows keep it (users read their own): scrubbed for a client, on one line, at most 200 characters. */
export function scrubLine(text: string, ...keys: Array<string | undefined>): string {
  const line = scrubForClient(text, ...keys)
    .replace(NOT_ON_ONE_LINE, ' ')
    .trim();
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line;
}
