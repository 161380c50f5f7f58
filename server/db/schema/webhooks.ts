import type { Generated } from 'kysely';

/** Admin-configured receivers of signed events: see migration 0014. */
export interface WebhooksTable {
  id: Generated<number>;
  name: string;
  url: string;
  /** Kept as is: it keys the HMAC of every delivery. Never sent back to the console after creation. */
  secret: string;
  /** Comma-separated event types (common/webhooks.ts). */
  events: string;
  enabled: number;
  created_time: number;
}

/** One event for one webhook. Times in Unix milliseconds except created_time (seconds) and delivered_time (seconds). */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: string;
  event_type: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_status_code: number;
  last_error: string | null;
  claimed_by: string | null;
  claim_expires_at: number;
  created_time: number;
  delivered_time: number;
}

export interface WebhooksSchema {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
