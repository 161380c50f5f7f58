// The signature on every webhook delivery: HMAC-SHA256, keyed by the webhook's
// secret, over "<timestamp>.<body>", sent as `t=<timestamp>,v1=<hex>`. The
// timestamp is signed so a captured delivery cannot be replayed later than the
// receiver's tolerance.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function webhookSignature(secret: string, timestampSeconds: number, body: string): string {
  const digest = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
  return `t=${timestampSeconds},v1=${digest}`;
}

/**
 * What a receiver does (docs/operations.md shows the same steps): read t and every
 * v1, recompute the HMAC over "<t>.<raw body>", compare in constant time, and
 * refuse a timestamp further than `toleranceSeconds` from now.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string,
  body: string,
  toleranceSeconds = 300,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isSafeInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex'));
  return parts
    .filter(([key, value]) => key === 'v1' && value !== undefined)
    .some(([, value]) => {
      const given = Buffer.from(value);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
