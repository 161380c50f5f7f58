// Webhooks: what the console and the server agree on. A webhook is an
// admin-configured URL that receives signed JSON events; each event sent to
// each webhook is one delivery, retried with backoff until it is answered 2xx.

/** The events a webhook can subscribe to. */
export const WEBHOOK_EVENTS = ['channel.disabled', 'channel.enabled', 'user.balance_low', 'token.exhausted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];
/** Sent by the console's "send test event" only, to the one webhook it is asked for. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export function isWebhookEvent(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the secret>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-switchboard-signature';

/** A webhook as the console sees it: the secret never comes back, except once in the answer that created or rotated it. */
export interface WebhookRecord {
  id: number;
  name: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  created_time: number;
  /** Only in the answer to a create (or a rotation): shown once. */
  secret?: string;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event sent to one webhook, and how sending it went. */
export interface WebhookDeliveryRecord {
  id: number;
  webhook_id: number;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** The HTTP status of the last attempt, 0 when it got no answer. */
  last_status_code: number;
  last_error: string;
  /** Unix milliseconds of the next attempt (pending ones), 0 otherwise. */
  next_attempt_at: number;
  created_time: number;
  delivered_time: number;
  /** The exact JSON body sent (the same on every attempt). */
  payload: string;
}
