// Webhooks and their delivery log (auth: admin), in the simple-rest convention
// (simpleRest.ts). Admins already point channels at any URL they like, and the
// events carry nothing an admin cannot read in the console; root alone would
// be stricter than the data needs.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { Role } from '../../../common/roles';
import type { Database } from '../../db/database';
import { isWebhookEvent, WEBHOOK_TEST_EVENT } from '../../../common/webhooks';
import { positiveId } from '../../repositories/pagination';
import {
  createWebhook,
  deleteWebhook,
  findDelivery,
  findWebhook,
  generateWebhookSecret,
  insertDeliveries,
  latestDeliveryOf,
  listDeliveries,
  listWebhooks,
  toDeliveryRecord,
  toWebhookRecord,
  updateWebhook,
  type WebhookFields as StoredFields,
} from '../../repositories/webhooks';
import { enqueueWebhookEvent, forgetWebhookSubscriptions } from '../../webhooks/events';
import { byId, webhookBody, webhookEdit } from './inputSchemas';
import { idsOfFilter, parseRestList, restRefusal, restRole, sendRestList } from './simpleRest';

const NAME_MAX = 64;
const URL_MAX = 1024;
const SECRET_MIN = 16;
const SECRET_MAX = 128;

type WebhookFields = StoredFields & { secret?: string };

/** A text field of the body (name, url), trimmed; what `current` holds when an update leaves it out. */
function textField(input: Record<string, unknown>, key: 'name' | 'url', current?: WebhookFields): string {
  if (input[key] === undefined && current) return current[key];
  const value = input[key];
  return typeof value === 'string' ? value.trim() : '';
}

/** Whether the url is an http(s) address without credentials, of at most URL_MAX characters. */
function urlAccepted(url: string): boolean {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) return false;
  return url.length <= URL_MAX && !parsed.username && !parsed.password;
}

/** The `enabled` flag as given; an update that leaves it out keeps the current one, a create is enabled. */
function enabledInputOf(input: Record<string, unknown>, current?: WebhookFields): unknown {
  if (input.enabled !== undefined) return input.enabled;
  return current ? current.enabled === 1 : true;
}

/** The signing secret, when one is given (empty: the server generates one). */
function secretOf(input: Record<string, unknown>): { secret: string | undefined } | { error: string } {
  if (input.secret === undefined || input.secret === null || input.secret === '') return { secret: undefined };
  if (
    typeof input.secret !== 'string' ||
    input.secret.length < SECRET_MIN ||
    input.secret.length > SECRET_MAX ||
    !/^[\x21-\x7e]+$/.test(input.secret)
  ) {
    return { error: `secret must be ${SECRET_MIN}-${SECRET_MAX} printable characters without spaces (or left empty to generate one)` };
  }
  return { secret: input.secret };
}

/** The fields of a create (all required but the secret) or an update (each optional, over `current`). */
function parseWebhookFields(body: unknown, current?: WebhookFields): WebhookFields | { error: string } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { error: 'the body must be a JSON object' };
  const input = body as Record<string, unknown>;
  const name = textField(input, 'name', current);
  if (!name || [...name].length > NAME_MAX) return { error: `name length must be 1-${NAME_MAX}` };
  const url = textField(input, 'url', current);
  if (!urlAccepted(url)) {
    return { error: `url must be an http:// or https:// address without credentials, at most ${URL_MAX} characters` };
  }
  const events = input.events === undefined && current ? current.events : input.events;
  if (!Array.isArray(events) || !events.length || !events.every(isWebhookEvent))
    return { error: 'events must list at least one known event type' };
  const enabledInput = enabledInputOf(input, current);
  if (typeof enabledInput !== 'boolean') return { error: 'enabled must be true or false' };
  const given = secretOf(input);
  if ('error' in given) return given;
  return { name, url, events: [...new Set(events)], enabled: enabledInput ? 1 : 0, secret: given.secret };
}

/** The webhook of a route's path id; answers 404 itself when there is none. */
async function currentWebhook(db: Kysely<Database>, reply: FastifyReply, rawId: string) {
  const id = positiveId(rawId);
  const row = id ? await findWebhook(db, id) : undefined;
  if (!row) restRefusal(reply, 404, 'webhook not found');
  return row;
}

export function webhookRoutes(fastify: FastifyInstance): Promise<void> {
  webhookResourceRoutes(fastify);
  deliveryResourceRoutes(fastify);
  return Promise.resolve();
}

/** The webhook resource: list, read, create, update, delete, and a test event. */
function webhookResourceRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect } = app.ctx;
  const admin = restRole(Role.admin);

  app.get('/api/webhook', { preHandler: admin }, async (request, reply) => {
    const list = parseRestList(request.query, {
      sortable: ['id', 'name', 'url', 'enabled', 'created_time'],
      filters: ['q', 'enabled', 'id'],
      defaultSort: { field: 'id', order: 'desc' },
    });
    if ('error' in list) return restRefusal(reply, 400, list.error);
    const { q, enabled, id } = list.filter;
    const { rows, total } = await listWebhooks(db, list, {
      ids: idsOfFilter(id),
      enabled: enabled === undefined ? undefined : enabled === true || enabled === 1 || enabled === 'true',
      q: typeof q === 'string' && q.trim() ? q.trim() : undefined,
    });
    return sendRestList(reply, 'webhook', rows.map(toWebhookRecord), list.offset, total);
  });

  app.get('/api/webhook/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(db, reply, request.params.id);
    return row ? toWebhookRecord(row) : reply;
  });

  app.post('/api/webhook', { preHandler: admin, schema: webhookBody }, async (request, reply) => {
    const fields = parseWebhookFields(request.body);
    if ('error' in fields) return restRefusal(reply, 400, fields.error);
    const secret = fields.secret ?? generateWebhookSecret();
    const id = await createWebhook(db, dialect, { ...fields, secret }, Math.floor(Date.now() / 1000));
    forgetWebhookSubscriptions(db);
    // the only answer that carries the secret: the console shows it once
    return reply.code(201).send({ ...toWebhookRecord((await findWebhook(db, id))!), secret });
  });

  app.put('/api/webhook/:id', { preHandler: admin, schema: webhookEdit }, async (request, reply) => {
    const row = await currentWebhook(db, reply, request.params.id);
    if (!row) return reply;
    const current = toWebhookRecord(row);
    const fields = parseWebhookFields(request.body, { ...current, enabled: current.enabled ? 1 : 0 });
    if ('error' in fields) return restRefusal(reply, 400, fields.error);
    await updateWebhook(db, row.id, fields);
    forgetWebhookSubscriptions(db);
    return toWebhookRecord((await findWebhook(db, Number(row.id)))!);
  });

  app.delete('/api/webhook/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(db, reply, request.params.id);
    if (!row) return reply;
    await deleteWebhook(db, row.id);
    forgetWebhookSubscriptions(db);
    return toWebhookRecord(row);
  });

  // a test event for this webhook alone, whatever it subscribes to
  app.post('/api/webhook/:id/test', { preHandler: admin, schema: byId }, async (request, reply) => {
    const row = await currentWebhook(db, reply, request.params.id);
    if (!row) return reply;
    const eventId = await enqueueWebhookEvent(db, WEBHOOK_TEST_EVENT, { webhook: { id: Number(row.id), name: row.name } }, Number(row.id));
    const delivery = await latestDeliveryOf(db, eventId!);
    return reply.code(201).send(toDeliveryRecord(delivery));
  });
}

/** The webhook_delivery resource: list, read, and a redelivery. */
function deliveryResourceRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = restRole(Role.admin);

  app.get('/api/webhook_delivery', { preHandler: admin }, async (request, reply) => {
    const list = parseRestList(request.query, {
      sortable: ['id', 'created_time', 'status', 'attempts', 'next_attempt_at', 'event_type', 'webhook_id'],
      filters: ['webhook_id', 'status', 'event_type', 'id'],
      defaultSort: { field: 'id', order: 'desc' },
    });
    if ('error' in list) return restRefusal(reply, 400, list.error);
    const { webhook_id: webhookId, status, event_type: eventType, id } = list.filter;
    const { rows, total } = await listDeliveries(db, list, {
      ids: idsOfFilter(id),
      webhookIds: idsOfFilter(webhookId),
      status: typeof status === 'string' ? status : undefined,
      eventType: typeof eventType === 'string' ? eventType : undefined,
    });
    return sendRestList(reply, 'webhook_delivery', rows.map(toDeliveryRecord), list.offset, total);
  });

  app.get('/api/webhook_delivery/:id', { preHandler: admin, schema: byId }, async (request, reply) => {
    const id = positiveId(request.params.id);
    const row = id ? await findDelivery(db, id) : undefined;
    return row ? toDeliveryRecord(row) : restRefusal(reply, 404, 'delivery not found');
  });

  // the same event (same id and body, so a receiver can dedupe) as a new delivery, due at once
  app.post('/api/webhook_delivery/:id/redeliver', { preHandler: admin, schema: byId }, async (request, reply) => {
    const id = positiveId(request.params.id);
    const row = id ? await findDelivery(db, id) : undefined;
    if (!row) return restRefusal(reply, 404, 'delivery not found');
    if (!(await findWebhook(db, Number(row.webhook_id)))) return restRefusal(reply, 404, 'webhook not found');
    await insertDeliveries(db, [
      { webhookId: Number(row.webhook_id), eventId: row.event_id, eventType: row.event_type, payload: row.payload },
    ]);
    const created = await latestDeliveryOf(db, row.event_id, row.webhook_id);
    return reply.code(201).send(toDeliveryRecord(created));
  });
}
