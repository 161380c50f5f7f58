// Keys and codes from the cryptographic generator.
import { randomBytes, randomInt } from 'node:crypto';

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
/** An invite code. */
export const generateAffCode = () => randomAlphanumeric(8);

/** What lists show of a secret: enough to recognise it, not to use it. */
export function maskSecret(secret: string): string {
  if (secret.length <= 8) return '*'.repeat(secret.length);
  return `${secret.slice(0, 4)}${'*'.repeat(8)}${secret.slice(-4)}`;
}
