// Channels (auth: admin). The key is write-only: never returned; an empty key
// on edit keeps the stored one, unless the edit changes the base URL or the
// type (then the key must be given again); several keys (one per line) create
// one channel each, as one-api's console expects, unless `multi_key` is true:
// then one channel holds them all (channel_keys), and its keys are listed
// masked, added, enabled, disabled, deleted and tested one by one under
// /api/channel/:id/keys. An edit of a multi-key channel adds the keys it
// gives; one that repoints it needs its keys again, and they replace the old ones.
// The list tells a multi-key channel's live keys out of all (never a key); a
// test answers the reply's first words and the key it used, masked.
// The routes come in four groups (read, jobs, writes, keys); the form's fields
// are checked in channelFields.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { fail, ok } from '../../../common/envelope';
import { ChannelStatus, Role } from '../../../common/roles';
import type { Database } from '../../db/database';
import { requireRole } from '../../plugins/auth';
import { channelJobDepsOf } from '../../plugins/backgroundJobs';
import type { BulkResult } from '../../../common/listQuery';
import { startTestingAllChannels, startUpdatingAllBalances } from '../../channels/channelHealth';
import { channelJobOf, type StartedJob } from '../../channels/channelJobs';
import { testChannel, type ChannelTestResult } from '../../channels/channelTest';
import { updateChannelBalance } from '../../channels/channelBalance';
import {
  createChannels,
  deleteChannel,
  findChannel,
  listChannels,
  searchChannels,
  splitList,
  toChannelRecord,
  updateChannel,
  type ChannelFields,
  type ChannelFilter,
  type ChannelRow,
} from '../../repositories/channels';
import {
  addChannelKeys,
  channelKeyHealth,
  channelKeyPosition,
  deleteChannelKey,
  storeChannelKeys,
  findChannelKey,
  listChannelKeys,
  MAX_KEYS_PER_ADD,
  setChannelKeyStatus,
  splitKeys,
  toChannelKeyRecord,
} from '../../repositories/channelKeys';
import { ChannelKeyStatus, type KeyStrategy } from '../../../common/records';
import { channelKeyUsageOf } from '../../channels/keyUsage';
import { pageWindowOf, positiveId, sortOf } from '../../repositories/pagination';
import { channelStatusEvent } from '../../webhooks/triggers';
import {
  bulkSchema,
  byId,
  channelCreateSchema,
  channelKeyById,
  channelKeysAddSchema,
  channelKeyStatusSchema,
  channelTestSchema,
  channelUpdateSchema,
  jobIdParams,
  listed,
  searchedList,
} from './inputSchemas';
import { catalogModelNames } from '../../billing/catalog';
import { isTrue, keyFormatError, keyTextOf, parseChannelFields, strategyOf } from './channelFields';

/** The list's facets from the query string (the schema has checked each is digits or a short name). */
function channelFilterOf({ status, type, group }: { status?: string; type?: string; group?: string }): ChannelFilter {
  return {
    status: status === undefined ? undefined : Number(status),
    type: type === undefined ? undefined : Number(type),
    group: group?.trim() || undefined,
  };
}

/**
 * A job start in one-api's shape (success, or "already running"), with the
 * job beside it for the console to follow: `data` on success, and also on the
 * refusal, so a second click follows the run already under way.
 */
function jobAnswer(started: StartedJob | undefined, busyMessage: string) {
  if (!started) return fail('the server is shutting down');
  return started.started ? ok(started.job) : { ...fail(busyMessage), data: started.job };
}

/** An admin's status change; a real change (not a repeat) is a channel.enabled or channel.disabled webhook event. */
async function setChannelStatusByAdmin(
  app: FastifyInstance,
  channel: { id: number; name: string; type: number; status: number },
  status: number,
): Promise<void> {
  const id = Number(channel.id);
  await updateChannel(app.ctx.db, id, { status, auto_disabled: 0 });
  if (Number(channel.status) !== status) {
    await channelStatusEvent(app.ctx.db, app.log, { id, name: channel.name, type: Number(channel.type) }, status, {
      automatic: false,
      reason: 'changed by an admin',
    });
  }
}

/**
 * An edit of a multi-key channel, or of a single-key one made multi-key
 * (its key becomes its first): the keys given are added, or replace the old
 * ones when the edit repoints the channel. The complaint, or undefined.
 */
async function editMultiKeyChannel(
  db: Kysely<Database>,
  current: ChannelRow,
  fields: ChannelFields,
  body: { key?: string | null; key_strategy?: KeyStrategy },
  moved: boolean,
): Promise<string | undefined> {
  const id = Number(current.id);
  const keys = splitKeys(keyTextOf(fields.type, body.key));
  if (keys.length > MAX_KEYS_PER_ADD) return `at most ${MAX_KEYS_PER_ADD} keys at once`;
  const misshapen = keyFormatError(fields.type, keys);
  if (misshapen) return misshapen;
  if (moved && !keys.length) return 'changing the base URL or the type of a channel needs its keys again: enter the keys';
  const converting = Number(current.multi_key) !== 1;
  const strategy = body.key_strategy ?? (converting ? 'random' : strategyOf(current.key_strategy));
  await storeChannelKeys(db, id, keys, { replace: moved, carried: converting && current.key ? current.key : undefined });
  await updateChannel(db, id, { ...fields, multi_key: 1, key_strategy: strategy, key: '' });
  return undefined;
}

/** The body of an edit (PUT /api/channel/), as its schema lets it through. */
type ChannelEditBody = Static<typeof channelUpdateSchema.body>;

/** An edit of the channel's fields and key (not a status-only one): the complaint, or undefined once stored. */
async function editChannel(db: Kysely<Database>, id: number, current: ChannelRow, body: ChannelEditBody): Promise<string | undefined> {
  const parsed = parseChannelFields(body, {
    ...current,
    type: Number(current.type),
    priority: Number(current.priority),
    weight: Number(current.weight),
  });
  if ('error' in parsed) return parsed.error;
  // the stored key goes wherever base_url points: an admin who repoints a
  // channel must know its key already, or could read it off their own host
  const moved = parsed.value.base_url !== current.base_url.replace(/\/+$/, '') || parsed.value.type !== Number(current.type);
  if (Number(current.multi_key) === 1 || isTrue(body.multi_key)) return editMultiKeyChannel(db, current, parsed.value, body, moved);
  const key = keyTextOf(parsed.value.type, body.key).trim();
  if (key.includes('\n')) return 'one key per channel when editing';
  const misshapen = key ? keyFormatError(parsed.value.type, [key]) : undefined;
  if (misshapen) return misshapen;
  if (moved && !key) return 'changing the base URL or the type of a channel needs its key again: enter the key';
  await updateChannel(db, id, { ...parsed.value, ...(key ? { key } : {}) });
  return undefined;
}

/** The answer's first words and the key a test used: masked, with its place among a multi-key channel's keys (from 1). */
async function testedKeyOf(db: Kysely<Database>, channel: ChannelRow, result: ChannelTestResult) {
  const keyIndex = result.keyId === undefined ? undefined : await channelKeyPosition(db, Number(channel.id), result.keyId);
  return { reply: result.reply, key: result.keyMasked, ...(keyIndex ? { key_index: keyIndex } : {}) };
}

/** The records of a page of channels; a multi-key one also says how many keys it holds, how many are live, and its worst key's last error. */
async function withKeyHealth(db: Kysely<Database>, rows: Parameters<typeof toChannelRecord>[0][]) {
  const records = rows.map(toChannelRecord);
  const health = await channelKeyHealth(
    db,
    records.filter((record) => record.multi_key).map((record) => record.id),
  );
  return records.map((record) => {
    if (!record.multi_key) return record;
    const keys = health.get(record.id);
    return { ...record, key_count: keys?.total ?? 0, live_key_count: keys?.live ?? 0, key_error: keys?.worstError ?? '' };
  });
}

/** The channel of a key route, when it is a multi-key one. */
async function multiKeyChannelOf(db: Kysely<Database>, idText: string) {
  const id = positiveId(idText);
  const channel = id ? await findChannel(db, id) : undefined;
  return channel && Number(channel.multi_key) === 1 ? channel : undefined;
}
const NOT_MULTI_KEY = 'channel not found, or it holds a single key';

export function channelRoutes(fastify: FastifyInstance): Promise<void> {
  channelReadRoutes(fastify);
  channelJobRoutes(fastify);
  channelWriteRoutes(fastify);
  channelKeyRoutes(fastify);
  return Promise.resolve();
}

/** The list, the search, one channel, and the model and group names the console's forms offer. */
function channelReadRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const admin = requireRole(Role.admin);

  app.get('/api/channel/', { preHandler: admin, schema: listed('channel') }, async (request) =>
    ok(
      await withKeyHealth(
        db,
        await listChannels(db, pageWindowOf(request.query), sortOf('channel', request.query), channelFilterOf(request.query)),
      ),
    ),
  );

  app.get('/api/channel/search', { preHandler: admin, schema: searchedList('channel') }, async (request) => {
    const keyword = (request.query.keyword ?? '').trim();
    return ok(await withKeyHealth(db, await searchChannels(db, keyword, sortOf('channel', request.query), channelFilterOf(request.query))));
  });

  app.get('/api/channel/models', { preHandler: admin }, () => {
    // envelope-less, as one-api's console expects: {object, data: [{id}]}
    const names = [...new Set([...Object.keys(options.json('ModelRatio')), ...catalogModelNames()])].sort();
    return { object: 'list', data: names.map((id) => ({ id, object: 'model', created: 1677649963, owned_by: 'switchboard' })) };
  });

  app.get('/api/channel/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const row = id ? await findChannel(db, id) : undefined;
    return row ? ok(toChannelRecord(row)) : fail('channel not found', 'channel_not_found');
  });

  app.get('/api/group/', { preHandler: admin }, () => ok(Object.keys(options.json('GroupRatio')).sort()));
}

/** Tests and balance updates, of one channel or (as a job) of all. */
function channelJobRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, options } = app.ctx;
  const admin = requireRole(Role.admin);

  // `time` and `balance` sit beside success/message, where one-api's console reads them;
  // `?model=` names one of the channel's models, else its test model (or first) is asked;
  // `reply` is the answer's first words, `key` the key used (masked) and `key_index` its place among the channel's keys
  app.get('/api/channel/test/:id', { preHandler: admin, schema: channelTestSchema }, async (request, reply) => {
    const id = positiveId(request.params.id);
    const channel = id ? await findChannel(db, id) : undefined;
    if (!channel) return { ...fail('channel not found', 'channel_not_found'), time: 0 };
    const model = request.query.model?.trim() || undefined;
    if (model !== undefined && !splitList(channel.models).includes(model)) {
      return reply.code(400).send(fail(`model ${model} is not one of this channel's models`, 'model_not_in_channel'));
    }
    const result = await testChannel(app.ctx, channel, undefined, model);
    return {
      success: result.success,
      message: result.message,
      time: result.seconds,
      model: result.model,
      threshold: result.thresholdSeconds,
      slow: result.slow,
      ...(await testedKeyOf(db, channel, result)),
      // whether a failing channel is switched off by the system at all (this test itself never switches anything)
      auto_disable: options.bool('AutomaticDisableChannelEnabled'),
    };
  });

  app.get('/api/channel/test', { preHandler: admin }, async () =>
    jobAnswer(await startTestingAllChannels(channelJobDepsOf(fastify), { notifyWhenDone: true }), 'test already running'),
  );

  app.get('/api/channel/update_balance/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const channel = id ? await findChannel(db, id) : undefined;
    if (!channel) return fail('channel not found', 'channel_not_found');
    const result = await updateChannelBalance(app.ctx.db, channel);
    return 'error' in result ? fail(result.error) : { ...ok(), balance: result.balance };
  });

  app.get('/api/channel/update_balance', { preHandler: admin }, async () =>
    jobAnswer(await startUpdatingAllBalances(channelJobDepsOf(fastify)), 'balance update already running'),
  );

  // a test-all or balance-all run: done of total, and each failure with its message
  app.get('/api/channel/jobs/:id', { preHandler: admin, schema: jobIdParams }, async (request) => {
    const job = await channelJobOf(app.ctx, request.params.id);
    return job ? ok(job) : fail('job not found (jobs are kept by the server that runs them, until it restarts)');
  });
}

/** Create, edit and delete, one channel at a time or many at once (enable, disable, delete). */
function channelWriteRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect } = app.ctx;
  const admin = requireRole(Role.admin);

  // enable, disable or delete many channels; each id is answered for on its own
  app.post('/api/channel/bulk', { preHandler: admin, schema: bulkSchema }, async (request) => {
    const { ids, action } = request.body;
    const result: BulkResult = { done: [], failed: [] };
    for (const id of [...new Set(ids)]) {
      const found = await findChannel(db, id);
      if (!found) {
        result.failed.push({ id, message: 'channel not found' });
        continue;
      }
      if (action === 'delete') await deleteChannel(db, id);
      // as the one-by-one toggle: a manual change is the admin's, the health checker leaves it alone
      else await setChannelStatusByAdmin(fastify, found, action === 'enable' ? ChannelStatus.enabled : ChannelStatus.disabled);
      result.done.push(id);
    }
    return ok(result);
  });

  app.post('/api/channel/', { preHandler: admin, schema: channelCreateSchema }, async (request) => {
    const body = request.body;
    const multiKey = isTrue(body.multi_key);
    const keys = multiKey
      ? splitKeys(keyTextOf(body.type, body.key))
      : keyTextOf(body.type, body.key)
          .split('\n')
          .map((key) => key.trim())
          .filter(Boolean);
    if (!keys.length) return fail('fill in channel name and key');
    if (multiKey && keys.length > MAX_KEYS_PER_ADD) return fail(`at most ${MAX_KEYS_PER_ADD} keys at once`);
    const parsed = parseChannelFields(body);
    if ('error' in parsed) return fail(parsed.error);
    const misshapen = keyFormatError(parsed.value.type, keys);
    if (misshapen) return fail(misshapen);
    // a channel may be created manually disabled (to be tested before it takes traffic); any other status starts it enabled
    const status = Number(body.status) === ChannelStatus.disabled ? ChannelStatus.disabled : ChannelStatus.enabled;
    const ids = await createChannels(
      db,
      dialect,
      parsed.value,
      keys,
      status,
      multiKey ? { strategy: strategyOf(body.key_strategy) } : undefined,
    );
    // the keys themselves are masked by the audit log, as `key` always is
    request.audit({ targetId: ids.join(','), after: { ...parsed.value, status, key: keys.join('\n') } });
    return ok({ ids });
  });

  app.put('/api/channel/', { preHandler: admin, schema: channelUpdateSchema }, async (request) => {
    const body = request.body;
    const id = positiveId(body.id);
    const current = id ? await findChannel(db, id) : undefined;
    if (!id || !current) return fail('channel not found', 'channel_not_found');
    const statusOnly = Object.keys(body).every((key) => key === 'id' || key === 'status');
    if (statusOnly) {
      const status = Number(body.status);
      if (status !== ChannelStatus.enabled && status !== ChannelStatus.disabled) return fail('a channel can only be enabled or disabled');
      // a manual change is the admin's: the health checker leaves it alone
      await setChannelStatusByAdmin(fastify, current, status);
    } else {
      const failure = await editChannel(db, id, current, body);
      if (failure) return fail(failure);
    }
    const updated = (await findChannel(db, id))!;
    request.audit({ before: current, after: updated });
    return ok(toChannelRecord(updated));
  });

  app.delete('/api/channel/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    // the row as it was, for the audit log
    const before = id ? await findChannel(db, id) : undefined;
    if (!id || !(await deleteChannel(db, id))) return fail('channel not found', 'channel_not_found');
    request.audit({ before });
    return ok();
  });
}

/** The keys of a multi-key channel, one by one under /api/channel/:id/keys. */
function channelKeyRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);

  // the keys of a multi-key channel, masked, with their state and tallies (the relay's latest tallies written first)
  app.get('/api/channel/:id/keys', { preHandler: admin, schema: byId }, async (request) => {
    const channel = await multiKeyChannelOf(db, request.params.id);
    if (!channel) return fail(NOT_MULTI_KEY, 'channel_not_found');
    await channelKeyUsageOf({ db: app.ctx.db, log: app.log }).flush();
    return ok((await listChannelKeys(db, Number(channel.id))).map(toChannelKeyRecord));
  });

  // keys typed or read from a file by the console: one per line, or a JSON array; those already held are skipped
  app.post('/api/channel/:id/keys', { preHandler: admin, schema: channelKeysAddSchema }, async (request) => {
    const channel = await multiKeyChannelOf(db, request.params.id);
    if (!channel) return fail(NOT_MULTI_KEY, 'channel_not_found');
    const keys = splitKeys(keyTextOf(channel.type, request.body.keys));
    if (!keys.length) return fail('no key given');
    if (keys.length > MAX_KEYS_PER_ADD) return fail(`at most ${MAX_KEYS_PER_ADD} keys at once`);
    const misshapen = keyFormatError(Number(channel.type), keys);
    if (misshapen) return fail(misshapen);
    const added = await addChannelKeys(db, Number(channel.id), keys);
    return ok({ added, skipped: keys.length - added });
  });

  // an admin enables or disables one key (the health pass never brings back one an admin disabled)
  app.put('/api/channel/:id/keys/:keyId', { preHandler: admin, schema: channelKeyStatusSchema }, async (request) => {
    const channel = await multiKeyChannelOf(db, request.params.id);
    const key = channel ? await findChannelKey(db, Number(channel.id), Number(request.params.keyId)) : undefined;
    if (!key) return fail('key not found', 'channel_key_not_found');
    const status = Number(request.body.status);
    if (status !== ChannelKeyStatus.enabled && status !== ChannelKeyStatus.disabled) return fail('a key can only be enabled or disabled');
    await setChannelKeyStatus(db, Number(key.id), status, status === ChannelKeyStatus.enabled ? { lastError: '' } : {});
    return ok(toChannelKeyRecord((await findChannelKey(db, Number(channel!.id), Number(key.id)))!));
  });

  app.delete('/api/channel/:id/keys/:keyId', { preHandler: admin, schema: channelKeyById }, async (request) => {
    const channel = await multiKeyChannelOf(db, request.params.id);
    return channel && (await deleteChannelKey(db, Number(channel.id), Number(request.params.keyId)))
      ? ok()
      : fail('key not found', 'channel_key_not_found');
  });

  // one key's test, in the shape of the channel's (`time` beside success and message); never disables anything
  app.get('/api/channel/:id/keys/:keyId/test', { preHandler: admin, schema: channelKeyById }, async (request) => {
    const channel = await multiKeyChannelOf(db, request.params.id);
    const key = channel ? await findChannelKey(db, Number(channel.id), Number(request.params.keyId)) : undefined;
    if (!channel || !key) return { ...fail('key not found', 'channel_key_not_found'), time: 0 };
    const result = await testChannel(app.ctx, channel, undefined, undefined, key);
    return { success: result.success, message: result.message, time: result.seconds, reply: result.reply };
  });
}
