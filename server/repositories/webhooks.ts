// Webhooks and their deliveries (migration 0014).
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import {
  WEBHOOK_EVENTS,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
  type WebhookEventType,
  type WebhookRecord,
} from '../../common/webhooks';
import { insertReturningId, type Database } from '../db/database';
import type { DatabaseConfig } from '../config';
import type { WebhookDeliveriesTable, WebhooksTable } from '../db/schema/webhooks';
import { likeText } from './pagination';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** A generated secret: `whsec_` and 32 random bytes in hex. */
export const generateWebhookSecret = () => `whsec_${randomBytes(32).toString('hex')}`;

export const eventsOf = (row: Pick<WebhookRow, 'events'>): WebhookEventType[] =>
  row.events.split(',').filter((event): event is WebhookEventType => (WEBHOOK_EVENTS as readonly string[]).includes(event));

/** What the console sees of a webhook: never the secret. */
export function toWebhookRecord(row: WebhookRow): WebhookRecord {
  return {
    id: Number(row.id),
    name: row.name,
    url: row.url,
    events: eventsOf(row),
    enabled: Number(row.enabled) === 1,
    created_time: Number(row.created_time),
  };
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

export const findWebhook = (db: Kysely<Database>, id: number) =>
  db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
export const findDelivery = (db: Kysely<Database>, id: number) =>
  db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();

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

// ---- the events' subscribers and the delivery loop ---------------------------

/** The webhooks an event may go to: every enabled one, or only `onlyWebhookId` (the test event), with their events. */
export function webhooksForEvent(db: Kysely<Database>, onlyWebhookId?: number) {
  let query = db.selectFrom('webhooks').select(['id', 'events']);
  query = onlyWebhookId === undefined ? query.where('enabled', '=', 1) : query.where('id', '=', onlyWebhookId);
  return query.execute();
}

/** The events of every enabled webhook (the subscriptions cache). */
export function enabledWebhookEvents(db: Kysely<Database>) {
  return db.selectFrom('webhooks').select('events').where('enabled', '=', 1).execute();
}

/** Up to `limit` deliveries due at `now` that no live claim holds, the most overdue first. */
export function dueDeliveries(db: Kysely<Database>, now: number, limit: number): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<', now)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Claims a due delivery for `nodeId` until `now + claimMs`; true when this node got it. */
export async function claimDelivery(db: Kysely<Database>, id: number, nodeId: string, now: number, claimMs: number): Promise<boolean> {
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ claimed_by: nodeId, claim_expires_at: now + claimMs })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<', now)]))
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

/** What an attempt at a delivery came to. */
export interface DeliveryOutcome {
  attempts: number;
  status: WebhookDeliveryStatus;
  lastStatusCode: number;
  lastError: string | null;
  nextAttemptAt: number;
  deliveredTime: number;
}

/** Writes an attempt's outcome and lets go of the claim, under `nodeId`'s claim only. */
export async function recordDeliveryOutcome(db: Kysely<Database>, id: number, nodeId: string, outcome: DeliveryOutcome): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      attempts: outcome.attempts,
      status: outcome.status,
      last_status_code: outcome.lastStatusCode,
      last_error: outcome.lastError,
      next_attempt_at: outcome.nextAttemptAt,
      delivered_time: outcome.deliveredTime,
      claimed_by: null,
      claim_expires_at: 0,
    })
    .where('id', '=', id)
    .where('claimed_by', '=', nodeId)
    .execute();
}

/** Deletes finished deliveries created before `before` (unix seconds); resolves to how many. */
export async function deleteFinishedDeliveries(db: Kysely<Database>, before: number): Promise<number> {
  const deleted = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '!=', 'pending')
    .where('created_time', '<', before)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

// ---- the console's simple-rest lists and edits ------------------------------

/** One page of a simple-rest list: its sort (a column the route has checked), offset and length. */
export interface RestPage {
  sort: { field: string; order: 'asc' | 'desc' };
  offset: number;
  limit: number;
}

/** The rows of the page `rows` selects, by the page's sort then id, and how many `count` finds in all (the same filter on both). */
async function countedPage<TB extends 'webhooks' | 'webhook_deliveries', Row>(
  count: SelectQueryBuilder<Database, TB, { total: number }>,
  rows: SelectQueryBuilder<Database, TB, Row>,
  page: RestPage,
): Promise<{ rows: Row[]; total: number }> {
  const counted = await count.executeTakeFirst();
  const found = await rows
    .orderBy(sql.ref(page.sort.field), page.sort.order)
    .orderBy(sql.ref('id'), page.sort.order)
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { rows: found, total: Number(counted?.total ?? 0) };
}

const total = sql<number>`count(*)`.as('total');

/** Only these ids (none when the list is empty), when given. */
const idsIn = (ids: readonly number[]) => (ids.length ? [...ids] : [0]);

export interface WebhookListFilter {
  ids?: readonly number[];
  enabled?: boolean;
  /** A piece of the name or the URL. */
  q?: string;
}

export function listWebhooks(db: Kysely<Database>, page: RestPage, filter: WebhookListFilter) {
  const { ids, enabled, q } = filter;
  const where = <O>(query: SelectQueryBuilder<Database, 'webhooks', O>) => {
    let filtered = query;
    if (ids) filtered = filtered.where('id', 'in', idsIn(ids));
    if (enabled !== undefined) filtered = filtered.where('enabled', '=', enabled ? 1 : 0);
    if (q) filtered = filtered.where((eb) => eb.or([likeText('name', '%', q, '%'), likeText('url', '%', q, '%')]));
    return filtered;
  };
  return countedPage(where(db.selectFrom('webhooks').select(total)), where(db.selectFrom('webhooks').selectAll()), page);
}

export interface DeliveryListFilter {
  ids?: readonly number[];
  webhookIds?: readonly number[];
  status?: string;
  eventType?: string;
}

export function listDeliveries(db: Kysely<Database>, page: RestPage, filter: DeliveryListFilter) {
  const { ids, webhookIds, status, eventType } = filter;
  const where = <O>(query: SelectQueryBuilder<Database, 'webhook_deliveries', O>) => {
    let filtered = query;
    if (ids) filtered = filtered.where('id', 'in', idsIn(ids));
    if (webhookIds) filtered = filtered.where('webhook_id', 'in', idsIn(webhookIds));
    if (status !== undefined) filtered = filtered.where('status', '=', status);
    if (eventType !== undefined) filtered = filtered.where('event_type', '=', eventType);
    return filtered;
  };
  return countedPage(
    where(db.selectFrom('webhook_deliveries').select(total)),
    where(db.selectFrom('webhook_deliveries').selectAll()),
    page,
  );
}

export interface WebhookFields {
  name: string;
  url: string;
  events: readonly WebhookEventType[];
  enabled: number;
}

/** A new webhook; its id. */
export function createWebhook(
  db: Kysely<Database>,
  dialect: DatabaseConfig['dialect'],
  fields: WebhookFields & { secret: string },
  now: number,
): Promise<number> {
  return insertReturningId(
    dialect,
    db.insertInto('webhooks').values({
      name: fields.name,
      url: fields.url,
      secret: fields.secret,
      events: fields.events.join(','),
      enabled: fields.enabled,
      created_time: now,
    }),
  );
}

/** An edit; the secret changes only when given. */
export async function updateWebhook(db: Kysely<Database>, id: number, fields: WebhookFields & { secret?: string }): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({
      name: fields.name,
      url: fields.url,
      events: fields.events.join(','),
      enabled: fields.enabled,
      ...(fields.secret ? { secret: fields.secret } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** A webhook and its delivery log, together. */
export async function deleteWebhook(db: Kysely<Database>, id: number): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
    await transaction.deleteFrom('webhooks').where('id', '=', id).execute();
  });
}

/** The newest delivery of an event (to this webhook, when given). */
export function latestDeliveryOf(db: Kysely<Database>, eventId: string, webhookId?: number): Promise<WebhookDeliveryRow> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId);
  if (webhookId !== undefined) query = query.where('webhook_id', '=', webhookId);
  return query.orderBy('id', 'desc').executeTakeFirstOrThrow();
}
