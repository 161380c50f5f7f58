// Channels (auth: admin). The key is write-only: never returned; an empty key
// on edit keeps the stored one, unless the edit changes the base URL or the
// type (then the key must be given again); several keys (one per line) create
// one channel each, as one-api's console expects, unless `multi_key` is true:
// then one channel holds them all (channel_keys), and its keys are listed
// masked, added, enabled, disabled, deleted and tested one by one under
// /api/channel/:id/keys. An edit of a multi-key channel adds the keys it
// gives; one that repoints it needs its keys again, and they replace the old ones.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { findChannelType, keyFitsFormat, otherMissing } from '../../../common/channelTypes';
import { compactJsonKeys, readServiceAccountKey } from '../../../common/serviceAccountKey';
import { fail, ok } from '../../../common/envelope';
import { ChannelStatus, Role } from '../../../common/roles';
import { requireRole } from '../../plugins/auth';
import type { BulkResult } from '../../../common/listQuery';
import {
  channelJobOf,
  startTestingAllChannels,
  startUpdatingAllBalances,
  testChannel,
  updateChannelBalance,
  type StartedJob,
} from '../../channels/channelHealth';
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

type Parsed = { value: ChannelFields } | { error: string };

/** The channel fields of a create or edit body, as its schema (inputSchemas.ts) lets them through: text, digits or numbers, or null. */
type ChannelFieldsBody = { [K in keyof ChannelFields]?: string | number | null };

/** Validates the form's fields; `current` supplies what an edit leaves out. */
export function parseChannelFields(body: ChannelFieldsBody, current?: ChannelFields): Parsed {
  const pick = <K extends keyof ChannelFields>(key: K) => (body[key] === undefined && current ? current[key] : body[key]);
  const type = Number(pick('type'));
  if (!findChannelType(type)) return { error: `unknown channel type: ${String(pick('type'))}` };
  const name = String(pick('name') ?? '').trim();
  if (!name) return { error: 'fill in channel name and key' };
  const models = splitList(String(pick('models') ?? '')).join(',');
  if (!models) return { error: 'select at least one model' };
  const group = splitList(String(pick('group') ?? 'default')).join(',') || 'default';
  const mappingText = String(pick('model_mapping') ?? '').trim() || '{}';
  let mapping: unknown;
  try {
    mapping = JSON.parse(mappingText);
  } catch {
    mapping = undefined;
  }
  if (
    !mapping ||
    typeof mapping !== 'object' ||
    Array.isArray(mapping) ||
    !Object.values(mapping).every((value) => typeof value === 'string')
  ) {
    return { error: 'model mapping must be a JSON object of model names' };
  }
  const priority = Number(pick('priority') ?? 0);
  const weight = Number(pick('weight') ?? 1);
  if (!Number.isSafeInteger(priority)) return { error: 'priority must be a whole number' };
  if (!Number.isSafeInteger(weight) || weight < 1) return { error: 'weight must be a whole number, 1 or more' };
  const baseUrl = String(pick('base_url') ?? '')
    .trim()
    .replace(/\/+$/, '');
  if (baseUrl && !/^https?:\/\/[^\s]+$/.test(baseUrl)) return { error: 'base URL must start with http:// or https://' };
  const channelType = findChannelType(type);
  if (channelType?.baseUrlRequired && !baseUrl) return { error: 'this channel type needs a base URL' };
  const other = String(pick('other') ?? '').trim() || channelType?.other?.fallback || '';
  // the test model is one of the channel's models; an edit that drops the stored one falls back to the first
  let testModel = String(pick('test_model') ?? '').trim();
  if (testModel && !splitList(models).includes(testModel)) {
    if (body.test_model !== undefined) return { error: 'the test model must be one of the channel models' };
    testModel = '';
  }
  if (otherMissing(type, other, baseUrl)) return { error: 'this channel type needs its account id (other), or a base URL that holds it' };
  return {
    value: {
      type,
      name,
      base_url: baseUrl,
      other,
      models,
      group,
      model_mapping: JSON.stringify(mapping),
      test_model: testModel,
      priority,
      weight,
    },
  };
}

/** The complaint about keys that do not have their type's `keyFormat` shape (Baidu, Spark); undefined when all fit. */
function keyFormatError(type: number, keys: readonly string[]): string | undefined {
  if (keys.every((key) => keyFitsFormat(type, key))) return undefined;
  if (findChannelType(type)?.keyKind === 'service-account-json') {
    // what is wrong with the first key that does not read, in the words of the check
    for (const key of keys) {
      const account = readServiceAccountKey(key);
      if ('problem' in account) return account.problem;
    }
  }
  return `the key must be written as ${findChannelType(type)?.keyFormat ?? 'one secret'}`;
}

/** The key text as sent, with a JSON key file (Vertex AI's, pasted over many lines) on one line, so it stays one key. */
const keyTextOf = (type: unknown, key: string | null | undefined): string => {
  const text = String(key ?? '');
  return findChannelType(Number(type))?.keyKind === 'service-account-json' ? compactJsonKeys(text) : text;
};

/** A flag as forms and JSON clients send it. */
const isTrue = (value: unknown) => value === true || value === 'true' || value === 1 || value === '1';

/** A channel's key strategy, random unless round_robin. */
const strategyOf = (value: unknown): KeyStrategy => (value === 'round_robin' ? 'round_robin' : 'random');

export function channelRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, dialect, options } = app.ctx;
  const admin = requireRole(Role.admin);

  app.get('/api/channel/', { preHandler: admin, schema: listed('channel') }, async (request) =>
    ok(
      (await listChannels(db, pageWindowOf(request.query), sortOf('channel', request.query), channelFilterOf(request.query))).map(
        toChannelRecord,
      ),
    ),
  );

  app.get('/api/channel/search', { preHandler: admin, schema: searchedList('channel') }, async (request) => {
    const keyword = (request.query.keyword ?? '').trim();
    return ok((await searchChannels(db, keyword, sortOf('channel', request.query), channelFilterOf(request.query))).map(toChannelRecord));
  });

  app.get('/api/channel/models', { preHandler: admin }, () => {
    // envelope-less, as one-api's console expects: {object, data: [{id}]}
    const names = [...new Set([...Object.keys(options.json('ModelRatio')), ...catalogModelNames()])].sort();
    return { object: 'list', data: names.map((id) => ({ id, object: 'model', created: 1677649963, owned_by: 'switchboard' })) };
  });

  // `time` and `balance` sit beside success/message, where one-api's console reads them;
  // `?model=` names one of the channel's models, else its test model (or first) is asked
  app.get('/api/channel/test/:id', { preHandler: admin, schema: channelTestSchema }, async (request, reply) => {
    const id = positiveId(request.params.id);
    const channel = id ? await findChannel(db, id) : undefined;
    if (!channel) return { ...fail('channel not found', 'channel_not_found'), time: 0 };
    const model = request.query.model?.trim() || undefined;
    if (model !== undefined && !splitList(channel.models).includes(model)) {
      return reply.code(400).send(fail(`model ${model} is not one of this channel's models`, 'model_not_in_channel'));
    }
    const result = await testChannel(app, channel, undefined, model);
    return {
      success: result.success,
      message: result.message,
      time: result.seconds,
      model: result.model,
      threshold: result.thresholdSeconds,
      slow: result.slow,
    };
  });

  app.get('/api/channel/test', { preHandler: admin }, async () =>
    jobAnswer(await startTestingAllChannels(app, { notifyWhenDone: true }), 'test already running'),
  );

  app.get('/api/channel/update_balance/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const channel = id ? await findChannel(db, id) : undefined;
    if (!channel) return fail('channel not found', 'channel_not_found');
    const result = await updateChannelBalance(app, channel);
    return 'error' in result ? fail(result.error) : { ...ok(), balance: result.balance };
  });

  app.get('/api/channel/update_balance', { preHandler: admin }, async () =>
    jobAnswer(await startUpdatingAllBalances(app), 'balance update already running'),
  );

  // a test-all or balance-all run: done of total, and each failure with its message
  app.get('/api/channel/jobs/:id', { preHandler: admin, schema: jobIdParams }, async (request) => {
    const job = await channelJobOf(app, request.params.id);
    return job ? ok(job) : fail('job not found (jobs are kept by the server that runs them, until it restarts)');
  });

  // enable, disable or delete many channels; each id is answered for on its own
  /** An admin's status change; a real change (not a repeat) is a channel.enabled or channel.disabled webhook event. */
  const setChannelStatusByAdmin = async (channel: { id: number; name: string; type: number; status: number }, status: number) => {
    const id = Number(channel.id);
    await updateChannel(db, id, { status, auto_disabled: 0 });
    if (Number(channel.status) !== status) {
      await channelStatusEvent(app, { id, name: channel.name, type: Number(channel.type) }, status, {
        automatic: false,
        reason: 'changed by an admin',
      });
    }
  };

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
      else await setChannelStatusByAdmin(found, action === 'enable' ? ChannelStatus.enabled : ChannelStatus.disabled);
      result.done.push(id);
    }
    return ok(result);
  });

  app.get('/api/channel/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    const row = id ? await findChannel(db, id) : undefined;
    return row ? ok(toChannelRecord(row)) : fail('channel not found', 'channel_not_found');
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
      await setChannelStatusByAdmin(current, status);
    } else {
      const parsed = parseChannelFields(body, {
        ...current,
        type: Number(current.type),
        priority: Number(current.priority),
        weight: Number(current.weight),
      });
      if ('error' in parsed) return fail(parsed.error);
      // the stored key goes wherever base_url points: an admin who repoints a
      // channel must know its key already, or could read it off their own host
      const moved = parsed.value.base_url !== current.base_url.replace(/\/+$/, '') || parsed.value.type !== Number(current.type);
      if (Number(current.multi_key) === 1 || isTrue(body.multi_key)) {
        const failure = await editMultiKeyChannel(current, parsed.value, body, moved);
        if (failure) return fail(failure);
        return ok(toChannelRecord((await findChannel(db, id))!));
      }
      const key = keyTextOf(parsed.value.type, body.key).trim();
      if (key.includes('\n')) return fail('one key per channel when editing');
      const misshapen = key ? keyFormatError(parsed.value.type, [key]) : undefined;
      if (misshapen) return fail(misshapen);
      if (moved && !key) return fail('changing the base URL or the type of a channel needs its key again: enter the key');
      await updateChannel(db, id, { ...parsed.value, ...(key ? { key } : {}) });
    }
    return ok(toChannelRecord((await findChannel(db, id))!));
  });

  /**
   * An edit of a multi-key channel, or of a single-key one made multi-key
   * (its key becomes its first): the keys given are added, or replace the old
   * ones when the edit repoints the channel. The complaint, or undefined.
   */
  const editMultiKeyChannel = async (
    current: ChannelRow,
    fields: ChannelFields,
    body: { key?: string | null; key_strategy?: KeyStrategy },
    moved: boolean,
  ) => {
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
  };

  /** The channel of a key route, when it is a multi-key one. */
  const multiKeyChannelOf = async (idText: string) => {
    const id = positiveId(idText);
    const channel = id ? await findChannel(db, id) : undefined;
    return channel && Number(channel.multi_key) === 1 ? channel : undefined;
  };
  const NOT_MULTI_KEY = 'channel not found, or it holds a single key';

  // the keys of a multi-key channel, masked, with their state and tallies (the relay's latest tallies written first)
  app.get('/api/channel/:id/keys', { preHandler: admin, schema: byId }, async (request) => {
    const channel = await multiKeyChannelOf(request.params.id);
    if (!channel) return fail(NOT_MULTI_KEY, 'channel_not_found');
    await channelKeyUsageOf(app).flush();
    return ok((await listChannelKeys(db, Number(channel.id))).map(toChannelKeyRecord));
  });

  // keys typed or read from a file by the console: one per line, or a JSON array; those already held are skipped
  app.post('/api/channel/:id/keys', { preHandler: admin, schema: channelKeysAddSchema }, async (request) => {
    const channel = await multiKeyChannelOf(request.params.id);
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
    const channel = await multiKeyChannelOf(request.params.id);
    const key = channel ? await findChannelKey(db, Number(channel.id), Number(request.params.keyId)) : undefined;
    if (!key) return fail('key not found', 'channel_key_not_found');
    const status = Number(request.body.status);
    if (status !== ChannelKeyStatus.enabled && status !== ChannelKeyStatus.disabled) return fail('a key can only be enabled or disabled');
    await setChannelKeyStatus(db, Number(key.id), status, status === ChannelKeyStatus.enabled ? { lastError: '' } : {});
    return ok(toChannelKeyRecord((await findChannelKey(db, Number(channel!.id), Number(key.id)))!));
  });

  app.delete('/api/channel/:id/keys/:keyId', { preHandler: admin, schema: channelKeyById }, async (request) => {
    const channel = await multiKeyChannelOf(request.params.id);
    return channel && (await deleteChannelKey(db, Number(channel.id), Number(request.params.keyId)))
      ? ok()
      : fail('key not found', 'channel_key_not_found');
  });

  // one key's test, in the shape of the channel's (`time` beside success and message); never disables anything
  app.get('/api/channel/:id/keys/:keyId/test', { preHandler: admin, schema: channelKeyById }, async (request) => {
    const channel = await multiKeyChannelOf(request.params.id);
    const key = channel ? await findChannelKey(db, Number(channel.id), Number(request.params.keyId)) : undefined;
    if (!channel || !key) return { ...fail('key not found', 'channel_key_not_found'), time: 0 };
    const result = await testChannel(app, channel, undefined, undefined, key);
    return { success: result.success, message: result.message, time: result.seconds };
  });

  app.delete('/api/channel/:id', { preHandler: admin, schema: byId }, async (request) => {
    const id = positiveId(request.params.id);
    return id && (await deleteChannel(db, id)) ? ok() : fail('channel not found', 'channel_not_found');
  });

  app.get('/api/group/', { preHandler: admin }, () => ok(Object.keys(options.json('GroupRatio')).sort()));
  return Promise.resolve();
}
