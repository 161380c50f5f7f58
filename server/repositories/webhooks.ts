// Webhooks and their deliveries (migration 0014).
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { WEBHOOK_EVENTS, type WebhookDeliveryRecord, type WebhookDeliveryStatus, type WebhookEventType, type WebhookRecord } from '../../common/webhooks';
import type { Database } from '../db/database';
import type { WebhookDeliveriesTable, WebhooksTable } from '../db/schema/webhooks';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** A generated secret: `whsec_` and 32 random bytes in hex. */
export const generateWebhookSecret = () => `whsec_${randomBytes(32).toString('hex')}`;

export const eventsOf = (row: Pick<WebhookRow, 'events'>): WebhookEventType[] =>
  row.events.split(',').filter((event): event is WebhookEventType => (WEBHOOK_EVENTS as readonly string[]).includes(event));

/** What the console sees of a webhook: never the secret. */
export function toWebhookRecord(row: WebhookRow): WebhookRecord {
  return { id: Number(row.id), name: row.name, url: row.url, events: eventsOf(row), enabled: Number(row.enabled) === 1, created_time: Number(row.created_time) };
}

/** An answer's status alone: rows logged before the answer stopped being kept still hold its first words after it. */
const withoutAnswer = (error: string) => error.replace(/^(HTTP \d{3}): [\s\S]*$/, '$1');

export function toDeliveryRecord(row: WebhookDeliveryRow): WebhookDeliveryRecord {
  return {
    id: Number(row.id),
    webhook_id: Number(row.webhook_id),
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status as WebhookDeliveryStatus,
    attempts: Number(row.attempts),
    last_status_code: Number(row.last_status_code),
    last_error: withoutAnswer(row.last_error ?? ''),
    next_attempt_at: Number(row.next_attempt_at),
    created_time: Number(row.created_time),
    delivered_time: Number(row.delivered_time),
    payload: row.payload,
  };
}

export const findWebhook = (db: Kysely<Database>, id: number) => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
export const findDelivery = (db: Kysely<Database>, id: number) => db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();

export interface NewDelivery {
  webhookId: number;
  eventId: string;
  eventType: string;
  payload: string;
}

/** Queues deliveries, due at once. */
export async function insertDeliveries(db: Kysely<Database>, deliveries: readonly NewDelivery[]): Promise<void> {
  if (!deliveries.length) return;
  const now = Date.now();
  await db
    .insertInto('webhook_deliveries')
    .values(
      deliveries.map((delivery) => ({
        webhook_id: delivery.webhookId,
        event_id: delivery.eventId,
        event_type: delivery.eventType,
        payload: delivery.payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_status_code: 0,
        last_error: null,
        claimed_by: null,
        claim_expires_at: 0,
        created_time: Math.floor(now / 1000),
        delivered_time: 0,
      })),
    )
    .execute();
}
