// AWS Signature Version 4 for a Bedrock call, signed synchronously on Node's
// crypto. It writes what @smithy/signature-v4 writes for the same request
// (tests/server/protocols/bedrock.test.ts holds the two side by side): the same
// canonical request (the path's segments escaped twice, the query sorted,
// the signable headers lower-cased and sorted, the body's SHA-256) and the
// same added headers (x-amz-date, x-amz-content-sha256, x-amz-security-token
// with a session token, authorization). The signing key is derived once per
// secret, day, region and service. The library signs through a chain of
// promises and objects: about 20 µs of CPU a call against some 5 here.
import { createHash, createHmac } from 'node:crypto';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Request {
  method: string;
  /** The host as the HTTP client sends it (with a port that is not the scheme's default). */
  host: string;
  /** The path as it goes on the wire (already percent-encoded once). */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** Headers AWS leaves out of a signature (a proxy may change them), as the library does. */
const UNSIGNABLE = new Set([
  'authorization',
  'cache-control',
  'connection',
  'expect',
  'from',
  'keep-alive',
  'max-forwards',
  'pragma',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

/** Signing keys by secret, day, region and service; bounded (cleared when full). */
const signingKeys = new Map<string, Buffer>();
const MAX_SIGNING_KEYS = 1000;

function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const cacheKey = `${secret}\0${day}\0${region}\0${service}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    const dated = createHmac('sha256', `AWS4${secret}`).update(day).digest();
    const regional = createHmac('sha256', dated).update(region).digest();
    const serviced = createHmac('sha256', regional).update(service).digest();
    key = createHmac('sha256', serviced).update('aws4_request').digest();
    if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}

/** RFC 3986 escaping, as AWS wants it: encodeURIComponent and the five characters it leaves. */
const escapeUri = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

/** The path with `.` and `..` resolved and empty segments dropped, then escaped (a second time) but for its slashes. */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

function canonicalQuery(query: Record<string, string>): string {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(query)) {
    if (name.toLowerCase() === 'x-amz-signature') continue;
    const escaped = escapeUri(name);
    pairs.push([escaped, `${escaped}=${escapeUri(value)}`]);
  }
  // by the escaped name, in code-unit order (names are unique: a record's keys)
  return pairs
    .sort(([left], [right]) => (left < right ? -1 : 1))
    .map(([, pair]) => pair)
    .join('&');
}

/** A header's value as signed: line breaks as spaces, runs of blanks as one, no blank at either end. */
const canonicalValue = (value: string) =>
  /[\r\n\t]|^ | $| {2}/.test(value)
    ? value
        .replace(/[\r\n]/g, ' ')
        .replace(/[ \t]+/g, ' ')
        .replace(/^ | $/g, '')
    : value;

/** `YYYYMMDDTHHMMSSZ` */
const longDateOf = (date: Date) =>
  date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');

/**
 * The request's headers with the signature's added: the caller's own are kept as they were named (a
 * `host` among them is signed and kept too; the HTTP client sends its own).
 */
export function signV4(
  request: SigV4Request,
  credentials: SigV4Credentials,
  scope: { region: string; service: string },
  date: Date,
): Record<string, string> {
  const longDate = longDateOf(date);
  const day = longDate.slice(0, 8);
  const headers: Record<string, string> = { ...request.headers, 'x-amz-date': longDate };
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const canonical = new Map<string, string>();
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (UNSIGNABLE.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) continue;
    canonical.set(lower, canonicalValue(headers[name]));
  }
  // a body hash the caller gave is signed as given, as the library does
  let payloadHash = canonical.get('x-amz-content-sha256');
  if (payloadHash === undefined) {
    payloadHash = createHash('sha256').update(request.body).digest('hex');
    canonical.set('x-amz-content-sha256', (headers['x-amz-content-sha256'] = payloadHash));
  }
  if (!canonical.has('host')) canonical.set('host', request.host);
  const names = [...canonical.keys()].sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    request.method,
    canonicalPath(request.path),
    canonicalQuery(request.query),
    names.map((name) => `${name}:${canonical.get(name)}`).join('\n'),
    '',
    signedHeaders,
    payloadHash,
  ].join('\n');
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = `${ALGORITHM}\n${longDate}\n${credentialScope}\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
  const signature = createHmac('sha256', signingKey(credentials.secretAccessKey, day, scope.region, scope.service))
    .update(stringToSign)
    .digest('hex');
  headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
