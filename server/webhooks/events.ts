// Writing webhook events. An event is written as delivery rows (one per
// enabled webhook that subscribes to it) right where the change that caused it
// is written; nothing is sent here, so no request waits on a receiver. The
// delivery loop (delivery.ts) sends the rows.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { WEBHOOK_TEST_EVENT, type WebhookEventType } from '../../common/webhooks';
import type { Database } from '../db/database';
import { enabledWebhookEvents, eventsOf, insertDeliveries, webhooksForEvent } from '../repositories/webhooks';

export const newEventId = () => `evt_${randomBytes(12).toString('hex')}`;

/** The JSON body of every delivery: the same bytes on every attempt, so a receiver can check the signature and dedupe by id. */
export function eventBody(
  eventId: string,
  type: string,
  data: Record<string, unknown>,
  createdAtSeconds = Math.floor(Date.now() / 1000),
): string {
  return JSON.stringify({ id: eventId, type, created_at: createdAtSeconds, data });
}

/**
 * Queues `type` for every enabled webhook subscribed to it (or, for the test
 * event, for `onlyWebhookId`). Resolves to the event id, or undefined when no
 * webhook wanted it. Never throws: an event that cannot be written is logged
 * by the caller's logger and the change that caused it stands.
 */
export async function enqueueWebhookEvent(
  db: Kysely<Database>,
  type: WebhookEventType | typeof WEBHOOK_TEST_EVENT,
  data: Record<string, unknown>,
  onlyWebhookId?: number,
): Promise<string | undefined> {
  const webhooks = (await webhooksForEvent(db, onlyWebhookId)).filter(
    (webhook) => onlyWebhookId !== undefined || eventsOf(webhook).includes(type as WebhookEventType),
  );
  if (!webhooks.length) return undefined;
  const eventId = newEventId();
  const payload = eventBody(eventId, type, data);
  await insertDeliveries(
    db,
    webhooks.map((webhook) => ({ webhookId: Number(webhook.id), eventId, eventType: type, payload })),
  );
  return eventId;
}

/** Like enqueueWebhookEvent, but logs instead of rejecting: the caller's change must never fail because of a webhook. */
export function emitWebhookEvent(
  db: Kysely<Database>,
  log: { warn: (object: object, message: string) => void },
  type: WebhookEventType,
  data: Record<string, unknown>,
): Promise<void> {
  return enqueueWebhookEvent(db, type, data).then(
    () => undefined,
    (error: unknown) => log.warn({ err: error, type }, 'could not queue a webhook event'),
  );
}

// The settlement path asks, for every charged user, whether anyone listens to
// user.balance_low before it reads the user's balance: the answer is cached
// for a few seconds per database (and dropped when this node changes a webhook).
const SUBSCRIPTION_CACHE_MS = 5000;
const subscriptions = new WeakMap<object, { types: Set<string>; loadedAt: number; loading?: Promise<void> }>();

/** Drops the cached subscriptions (after this node writes a webhook). */
export function forgetWebhookSubscriptions(db: Kysely<Database>): void {
  subscriptions.delete(db);
}

/**
 * Whether some enabled webhook may want `type`: synchronous, from the cache;
 * true while the cache is unknown or stale (it reloads in the background), so
 * an event is never skipped for want of a fresh answer.
 */
export function webhookMayWant(db: Kysely<Database>, type: WebhookEventType): boolean {
  const cached = subscriptions.get(db);
  const now = Date.now();
  if (cached && now - cached.loadedAt < SUBSCRIPTION_CACHE_MS) return cached.types.has(type);
  if (!cached?.loading) {
    const entry = {
      types: cached?.types ?? new Set<string>(),
      loadedAt: cached?.loadedAt ?? 0,
      loading: undefined as Promise<void> | undefined,
    };
    entry.loading = enabledWebhookEvents(db)
      .then(
        (rows) => subscriptions.set(db, { types: new Set(rows.flatMap((row) => eventsOf(row))), loadedAt: Date.now() }),
        () => subscriptions.delete(db),
      )
      .then(() => undefined);
    subscriptions.set(db, entry);
  }
  return true;
}
