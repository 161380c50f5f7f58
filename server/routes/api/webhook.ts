// Webhooks and their delivery log (auth: admin), in the simple-rest convention
// (simpleRest.ts). Admins already point channels at any URL they like, and the
// events carry nothing an admin cannot read in the console; root alone would
// be stricter than the data needs.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { Role } from '../../../common/roles';
import { isWebhookEvent, WEBHOOK_TEST_EVENT, type WebhookEventType } from '../../../common/webhooks';
import type { Database } from '../../db/database';
import { insertReturningId } from '../../db/database';
import { likeText, positiveId } from '../../repositories/pagination';
import {
  findDelivery,
  findWebhook,
  generateWebhookSecret,
  insertDeliveries,
  toDeliveryRecord,
  toWebhookRecord,
} from '../../repositories/webhooks';
import { enqueueWebhookEvent, forgetWebhookSubscriptions } from '../../webhooks/events';
import { byId } from './inputSchemas';
import { idsOfFilter, parseRestList, restRefusal, restRole, sendRestList, type RestListQuery } from './simpleRest';

const NAME_MAX = 64;
const URL_MAX = 1024;
const SECRET_MIN = 16;
const SECRET_MAX = 128;

interface WebhookFields {
  name: string;
  url: string;
  events: WebhookEventType[];
  enabled: number;
  secret?: string;
}

/** The fields of a create (all required but the secret) or an update (each optional, over `current`). */
function parseWebhookFields(body: unknown, current?: WebhookFields): WebhookFields | { error: string } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { error: 'the body must be a JSON object' };
  const input = body as Record<string, unknown>;
  const name = input.name === undefined && current ? current.name : typeof input.name === 'string' ? input.name.trim() : '';
  if (!name || [...name].length > NAME_MAX) return { error: `name length must be 1-${NAME_MAX}` };
  const url = input.url === undefined && current ? current.url : typeof input.url === 'string' ? input.url.trim() : '';
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || url.length > URL_MAX || parsed.username || parsed.password) {
    return { error: `url must be an http:// or https:// address without credentials, at most ${URL_MAX} characters` };
  }
  const events = input.events === undefined && current ? current.events : input.events;
  if (!Array.isArray(events) || !events.length || !events.every(isWebhookEvent)) return { error: 'events must list at least one known event type' };
  const enabledInput = input.enabled === undefined ? (current ? current.enabled === 1 : true) : input.enabled;
  if (typeof enabledInput !== 'boolean') return { error: 'enabled must be true or false' };
  let secret: string | undefined;
  if (input.secret !== undefined && input.secret !== null && input.secret !== '') {
    if (typeof input.secret !== 'string' || input.secret.length < SECRET_MIN || input.secret.length > SECRET_MAX || !/^[\x21-\x7e]+$/.test(input.secret)) {
      return { error: `secret must be ${SECRET_MIN}-${SECRET_MAX} printable characters without spaces (or left empty to generate one)` };
    }
    secret = input.secret;
  }
  return { name, url, events: [...new Set(events)], enabled: enabledInput ? 1 : 0, secret };
}

async function countAndPage<T>(
  db: Kysely<Database>,
  table: 'webhooks' | 'webhook_deliveries',
  list: RestListQuery,
  where: (query: any) => any,
  toRecord: (row: any) => T,
): Promise<{ rows: T[]; total: number }> {
  const counted = await where(db.selectFrom(table).select(sql<number>`count(*)`.as('total'))).executeTakeFirst();
  const rows = await where(db.selectFrom(table).selectAll())
    .orderBy(list.sort.field, list.sort.order)
    .orderBy('id', list.sort.order)
    .limit(list.limit)
    .offset(list.offset)
    .execute();
  return { rows: rows.map(toRecord), total: Number(counted?.total ?? 0) };
}

const idOf = (params: unknown) => positiveId((params as { id?: string }).id);

export async function webhookRoutes(app: FastifyInstance): Promise<void> {
  const { db, dialect } = app.ctx;
  const admin = restRole(Role.admin);

  const currentWebhook = async (reply: FastifyReply, params: unknown) => {
    const id = idOf(params);
    const row = id ? await findWebhook(db, id) : undefined;
    if (!row) restRefusal(reply, 404, 'webhook not found');
    return row;
  };

  app.get('/api/webhook', { preHandler: admin }, async (request, reply) => {
    const list = parseRestList(request.query, {
      sortable: ['id', 'name', 'url', 'enabled', 'created_time'],
      filters: ['q', 'enabled', 'id'],
      defaultSort: { field: 'id', order: 'desc' },
    });
    if ('error' in list) return restRefusal(reply, 400, list.error);
    const { q, enabled, id } = list.filter;
    const ids = idsOfFilter(id);
    const where = (query: any) => {
      let filtered = query;
      if (ids) filtered = filtered.where('id', 'in', ids.length ? ids : [0]);
      if (enabled !== undefined) filtered = filtered.where('enabled', '=', enabled === true || enabled === 1 || enabled === 'true' ? 1 : 0);
      if (typeof q === 'string' && q.trim()) filtered = filtered.where((eb: any) => eb.or([likeText('name', '%', q.trim(), '%'), likeText('url', '%', q.trim(), '%')]));
      return filtered;
    };
    const { rows, total } = await countAndPage(db, 'webhooks', list, where, toWebhookRecord);
    return sendRestList(reply, 'webhook', rows, list.offset, total);
  });

  app.get('/api/webhook/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(reply, request.params);
    return row ? toWebhookRecord(row) : reply;
  });

  app.post('/api/webhook', { preHandler: admin }, async (request, reply) => {
    const fields = parseWebhookFields(request.body);
    if ('error' in fields) return restRefusal(reply, 400, fields.error);
    const secret = fields.secret ?? generateWebhookSecret();
    const id = await insertReturningId(
      dialect,
      db.insertInto('webhooks').values({ name: fields.name, url: fields.url, secret, events: fields.events.join(','), enabled: fields.enabled, created_time: Math.floor(Date.now() / 1000) }),
    );
    forgetWebhookSubscriptions(db);
    // the only answer that carries the secret: the console shows it once
    return reply.code(201).send({ ...toWebhookRecord((await findWebhook(db, id))!), secret });
  });

  app.put('/api/webhook/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(reply, request.params);
    if (!row) return reply;
    const current = toWebhookRecord(row);
    const fields = parseWebhookFields(request.body, { ...current, enabled: current.enabled ? 1 : 0 });
    if ('error' in fields) return restRefusal(reply, 400, fields.error);
    await db
      .updateTable('webhooks')
      .set({ name: fields.name, url: fields.url, events: fields.events.join(','), enabled: fields.enabled, ...(fields.secret ? { secret: fields.secret } : {}) })
      .where('id', '=', row.id)
      .execute();
    forgetWebhookSubscriptions(db);
    return toWebhookRecord((await findWebhook(db, Number(row.id)))!);
  });

  app.delete('/api/webhook/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(reply, request.params);
    if (!row) return reply;
    await db.transaction().execute(async (transaction) => {
      await transaction.deleteFrom('webhook_deliveries').where('webhook_id', '=', row.id).execute();
      await transaction.deleteFrom('webhooks').where('id', '=', row.id).execute();
    });
    forgetWebhookSubscriptions(db);
    return toWebhookRecord(row);
  });

  // a test event for this webhook alone, whatever it subscribes to
  app.post('/api/webhook/:id/test', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(reply, request.params);
    if (!row) return reply;
    const eventId = await enqueueWebhookEvent(db, WEBHOOK_TEST_EVENT, { webhook: { id: Number(row.id), name: row.name } }, Number(row.id));
    const delivery = await db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId!).executeTakeFirstOrThrow();
    return reply.code(201).send(toDeliveryRecord(delivery));
  });

  app.get('/api/webhook_delivery', { preHandler: admin }, async (request, reply) => {
    const list = parseRestList(request.query, {
      sortable: ['id', 'created_time', 'status', 'attempts', 'next_attempt_at', 'event_type', 'webhook_id'],
      filters: ['webhook_id', 'status', 'event_type', 'id'],
      defaultSort: { field: 'id', order: 'desc' },
    });
    if ('error' in list) return restRefusal(reply, 400, list.error);
    const { webhook_id: webhookId, status, event_type: eventType, id } = list.filter;
    const ids = idsOfFilter(id);
    const webhookIds = idsOfFilter(webhookId);
    const where = (query: any) => {
      let filtered = query;
      if (ids) filtered = filtered.where('id', 'in', ids.length ? ids : [0]);
      if (webhookIds) filtered = filtered.where('webhook_id', 'in', webhookIds.length ? webhookIds : [0]);
      if (typeof status === 'string') filtered = filtered.where('status', '=', status);
      if (typeof eventType === 'string') filtered = filtered.where('event_type', '=', eventType);
      return filtered;
    };
    const { rows, total } = await countAndPage(db, 'webhook_deliveries', list, where, toDeliveryRecord);
    return sendRestList(reply, 'webhook_delivery', rows, list.offset, total);
  });

  app.get('/api/webhook_delivery/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const id = idOf(request.params);
    const row = id ? await findDelivery(db, id) : undefined;
    return row ? toDeliveryRecord(row) : restRefusal(reply, 404, 'delivery not found');
  });

  // the same event (same id and body, so a receiver can dedupe) as a new delivery, due at once
  app.post('/api/webhook_delivery/:id/redeliver', { preHandler: admin, schema: byId }, async (request, reply) => {
    const id = idOf(request.params);
    const row = id ? await findDelivery(db, id) : undefined;
    if (!row) return restRefusal(reply, 404, 'delivery not found');
    if (!(await findWebhook(db, Number(row.webhook_id)))) return restRefusal(reply, 404, 'webhook not found');
    await insertDeliveries(db, [{ webhookId: Number(row.webhook_id), eventId: row.event_id, eventType: row.event_type, payload: row.payload }]);
    const created = await db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', row.event_id).where('webhook_id', '=', row.webhook_id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    return reply.code(201).send(toDeliveryRecord(created));
  });
}
