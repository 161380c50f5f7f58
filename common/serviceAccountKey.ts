/**
 * Google service-account keys: the JSON file the Cloud console downloads
 * (https://cloud.google.com/iam/docs/keys-create-delete), which is a Vertex
 * AI channel's key. Read here once for the console's form check, the channel
 * API's check on save and the relay's token exchange.
 */

/** The fields of a service-account key the token exchange and the Vertex AI URLs use. */
export interface ServiceAccountKey {
  type: 'service_account';
  project_id: string;
  /** Names the key to Google (the JWT's `kid`); optional, as Google finds the key without it. */
  private_key_id?: string;
  /** A PKCS#8 PEM RSA private key. */
  private_key: string;
  client_email: string;
  /** Where access tokens are minted (Google's https://oauth2.googleapis.com/token when the file has none). */
  token_uri: string;
}

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

const REQUIRED = ['project_id', 'private_key', 'client_email'] as const;

/** The key, or what is wrong with it in words an admin can act on. */
export function readServiceAccountKey(text: string): ServiceAccountKey | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: "the key must be the service account's JSON key file (it is not JSON)" };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return { problem: "the key must be the service account's JSON key file (one JSON object)" };
  const fields = parsed as Record<string, unknown>;
  if (fields.type !== 'service_account')
    return { problem: 'the key\'s "type" must be "service_account" (a service account\'s JSON key file)' };
  const missing = REQUIRED.filter((name) => typeof fields[name] !== 'string' || fields[name].trim() === '');
  if (missing.length > 0) return { problem: `the service-account key lacks ${missing.map((name) => `"${name}"`).join(', ')}` };
  if (!(fields.private_key as string).includes('BEGIN PRIVATE KEY'))
    return { problem: 'the service-account key\'s "private_key" must be a PEM private key ("-----BEGIN PRIVATE KEY-----...")' };
  const tokenUri = typeof fields.token_uri === 'string' && fields.token_uri.trim() !== '' ? fields.token_uri.trim() : GOOGLE_TOKEN_URI;
  if (!/^https?:\/\/[^\s]+$/.test(tokenUri)) return { problem: 'the service-account key\'s "token_uri" must be an http(s) URL' };
  return {
    type: 'service_account',
    project_id: (fields.project_id as string).trim(),
    ...(typeof fields.private_key_id === 'string' && fields.private_key_id !== '' ? { private_key_id: fields.private_key_id } : {}),
    private_key: fields.private_key as string,
    client_email: (fields.client_email as string).trim(),
    token_uri: tokenUri,
  };
}

/**
 * Key text as a channel stores it: a JSON key (pasted over many lines, as the
 * file is) on one line, so line-based key lists keep it whole. Several keys
 * are a JSON array of them, or one per line. Text that is not JSON is left
 * as it is (the check on save then says what is wrong).
 */
export function compactJsonKeys(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (Array.isArray(parsed)) return parsed.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join('\n');
    return JSON.stringify(parsed);
  } catch {
    // one JSON object per line already, or not JSON at all
    return text;
  }
}
