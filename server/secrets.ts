// Keys and codes from the cryptographic generator, and sealing of the secrets
// the server must read back later (TOTP seeds) so a copy of the database alone
// does not give them away.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `length` characters drawn uniformly from [0-9a-zA-Z]. */
export function randomAlphanumeric(length: number): string {
  let text = '';
  for (let index = 0; index < length; index += 1) text += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return text;
}

/** A relay token key: 48 characters; clients send it as `sk-<key>`. */
export const generateTokenKey = () => randomAlphanumeric(48);
/** A redemption code: 32 hex characters, as one-api's. */
export const generateRedemptionKey = () => randomBytes(16).toString('hex');
/** A user's access token for the console API: 32 hex characters. */
export const generateAccessToken = () => randomBytes(16).toString('hex');

/** What the database keeps of a console access token: its SHA-256, in hex (the token itself is shown once). */
export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
/** An invite code. */
export const generateAffCode = () => randomAlphanumeric(8);

/** What lists show of a secret: enough to recognise it, not to use it. */
export function maskSecret(secret: string): string {
  if (secret.length <= 8) return '*'.repeat(secret.length);
  return `${secret.slice(0, 4)}${'*'.repeat(8)}${secret.slice(-4)}`;
}

/** A 32-byte key for `purpose`, derived from the server's own secret (SESSION_SECRET). */
export function deriveKey(serverSecret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), `switchboard:${purpose}`, 32));
}

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export function sealSecret(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** The sealed text, or undefined when it was sealed with another key or tampered with. */
export function openSecret(sealed: string, key: Buffer): string | undefined {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
