// Channels and the routing index (abilities). A channel's abilities are
// rewritten in the same transaction as the channel, so routing never sees a
// channel without them. Keys never leave this module except to the relay.
import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { ChannelRecord, KeyStrategy } from '../../common/records';
import { ChannelStatus } from '../../common/roles';
import { insertReturningId, type Database } from '../db/database';
import type { DatabaseConfig } from '../config';
import type { ChannelsTable } from '../db/schema/channels';
import { addChannelKeys } from './channelKeys';
import { idOf, likeText, orderedBy, SEARCH_LIMIT, startsWith, type ListSort, type PageWindow } from './pagination';

export type ChannelRow = Selectable<ChannelsTable>;
type Executor = Kysely<Database>;

/** What the channel form writes (the key and status have their own paths). */
export type ChannelFields = Pick<
  ChannelRecord,
  'type' | 'name' | 'base_url' | 'other' | 'models' | 'group' | 'model_mapping' | 'test_model' | 'priority' | 'weight'
>;

const listColumns = [
  'id',
  'type',
  'status',
  'name',
  'weight',
  'priority',
  'auto_disabled',
  'created_time',
  'test_time',
  'response_time',
  'base_url',
  'other',
  'balance',
  'balance_updated_time',
  'models',
  'group',
  'used_quota',
  'model_mapping',
  'test_error',
  'multi_key',
  'key_strategy',
  'test_model',
] as const;

/** The channel list's facets: status, type, and one group of the comma list. */
export interface ChannelFilter {
  status?: number;
  type?: number;
  group?: string;
}

function filtered<O>(query: SelectQueryBuilder<Database, 'channels', O>, filter: ChannelFilter) {
  let result = query;
  if (filter.status !== undefined) result = result.where('status', '=', filter.status);
  if (filter.type !== undefined) result = result.where('type', '=', filter.type);
  const group = filter.group;
  if (group) {
    // `group` is a comma list written by splitList (no spaces): the name alone, first, last or between
    result = result.where((eb) =>
      eb.or([
        eb('group', '=', group),
        likeText('group', '', group, ',%'),
        likeText('group', '%,', group, ''),
        likeText('group', '%,', group, ',%'),
      ]),
    );
  }
  return result;
}

/** Splits a comma list, trimmed and without duplicates. */
export function splitList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
}

export async function writeAbilities(
  transaction: Executor,
  channelId: number,
  channel: { models: string; group: string; status: number; priority: number; weight: number },
) {
  await transaction.deleteFrom('abilities').where('channel_id', '=', channelId).execute();
  const rows = splitList(channel.group).flatMap((group) =>
    splitList(channel.models).map((model) => ({
      group,
      model,
      channel_id: channelId,
      enabled: channel.status === 1 ? 1 : 0,
      priority: channel.priority,
      weight: channel.weight,
    })),
  );
  if (rows.length) await transaction.insertInto('abilities').values(rows).execute();
}

export function listChannels(db: Executor, window: PageWindow, sort: ListSort, filter: ChannelFilter = {}) {
  return orderedBy(filtered(db.selectFrom('channels').select(listColumns), filter), sort)
    .limit(window.limit)
    .offset(window.offset)
    .execute();
}

export function searchChannels(db: Executor, keyword: string, sort: ListSort, filter: ChannelFilter = {}) {
  const id = idOf(keyword);
  const query = db
    .selectFrom('channels')
    .select(listColumns)
    .where((eb) => eb.or([...(id === undefined ? [] : [eb('id', '=', id)]), startsWith('name', keyword)]));
  return orderedBy(filtered(query, filter), sort).limit(SEARCH_LIMIT).execute();
}

export function findChannel(db: Executor, id: number): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The names of these channels, by id (a deleted channel is missing). */
export async function channelNames(db: Executor, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('channels').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [Number(row.id), String(row.name)]));
}

/**
 * The models a group reaches (its enabled abilities), each with the type of a
 * channel that serves it (none when the channel is gone): by model, then the
 * highest priority, then the lowest channel id.
 */
export function groupModelChannels(db: Executor, group: string, model?: string) {
  let query = db
    .selectFrom('abilities')
    .leftJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['abilities.model', 'channels.type'])
    .where('abilities.group', '=', group)
    .where('abilities.enabled', '=', 1);
  if (model !== undefined) query = query.where('abilities.model', '=', model);
  return query.orderBy('abilities.model').orderBy('abilities.priority', 'desc').orderBy('abilities.channel_id').execute();
}

/** Every model an enabled channel serves, in any group, with the type of each channel serving it (the admins' price table). */
export function servedModelChannels(db: Executor) {
  return db
    .selectFrom('abilities')
    .innerJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['abilities.model', 'channels.type'])
    .where('abilities.enabled', '=', 1)
    .distinct()
    .orderBy('abilities.model')
    .execute();
}

export type ChannelHealthRow = Pick<ChannelRow, 'id' | 'name' | 'status' | 'auto_disabled' | 'test_time' | 'response_time' | 'test_error'>;

/** Every channel's state and last test, without its key: what the dashboard's health panel counts. */
export function listChannelHealth(db: Executor): Promise<ChannelHealthRow[]> {
  return db.selectFrom('channels').select(['id', 'name', 'status', 'auto_disabled', 'test_time', 'response_time', 'test_error']).execute();
}

/** Channels with their keys, for the test, balance and health jobs only (never for the console). */
export function listChannelsToCheck(
  db: Executor,
  filter: { status: number; autoDisabled?: boolean; types?: readonly number[] },
): Promise<ChannelRow[]> {
  let query = db.selectFrom('channels').selectAll().where('status', '=', filter.status);
  if (filter.autoDisabled !== undefined) query = query.where('auto_disabled', '=', filter.autoDisabled ? 1 : 0);
  if (filter.types) query = query.where('type', 'in', [...filter.types]);
  return query.orderBy('id', 'desc').execute();
}

/** The longest test error kept (the column is varchar(1024)). */
const TEST_ERROR_MAX = 1000;

/**
 * Saves a test's outcome: its duration (when a request went out) and its
 * error ('' when it passed). The abilities do not change, so they are not rewritten.
 */
export async function recordChannelTest(db: Executor, id: number, outcome: { responseTimeMs?: number; error: string }): Promise<void> {
  const testError = [...outcome.error].slice(0, TEST_ERROR_MAX).join('');
  await db
    .updateTable('channels')
    .set({
      ...(outcome.responseTimeMs === undefined ? {} : { response_time: outcome.responseTimeMs }),
      test_time: Math.floor(Date.now() / 1000),
      test_error: testError,
    })
    .where('id', '=', id)
    .execute();
}

export async function recordChannelBalance(db: Executor, id: number, balance: number): Promise<void> {
  await db
    .updateTable('channels')
    .set({ balance, balance_updated_time: Math.floor(Date.now() / 1000) })
    .where('id', '=', id)
    .execute();
}

/**
 * One channel per key, each with its abilities, all or nothing; `status` is
 * enabled (1) unless the admin created them disabled (2). With `multiKey`, one
 * channel holds all the keys (its channel_keys), spread over by that strategy.
 */
export async function createChannels(
  db: Executor,
  dialect: DatabaseConfig['dialect'],
  fields: ChannelFields,
  keys: string[],
  status: number = ChannelStatus.enabled,
  multiKey?: { strategy: KeyStrategy },
): Promise<number[]> {
  return db.transaction().execute(async (transaction) => {
    const ids: number[] = [];
    for (const key of multiKey ? [''] : keys) {
      const id = await insertReturningId(
        dialect,
        transaction.insertInto('channels').values({
          ...fields,
          key,
          ...(multiKey ? { multi_key: 1, key_strategy: multiKey.strategy } : {}),
          status,
          auto_disabled: 0,
          created_time: Math.floor(Date.now() / 1000),
          test_time: 0,
          response_time: 0,
          balance: 0,
          balance_updated_time: 0,
          used_quota: 0,
        }),
      );
      await writeAbilities(transaction, id, { ...fields, status });
      if (multiKey) await addChannelKeys(transaction, id, keys);
      ids.push(id);
    }
    return ids;
  });
}

export async function updateChannel(
  db: Executor,
  id: number,
  patch: Partial<ChannelFields & { key: string; status: number; auto_disabled: number; multi_key: number; key_strategy: KeyStrategy }>,
): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    if (Object.keys(patch).length) await transaction.updateTable('channels').set(patch).where('id', '=', id).execute();
    const channel = await transaction
      .selectFrom('channels')
      .select(['models', 'group', 'status', 'priority', 'weight'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (channel)
      await writeAbilities(transaction, id, {
        ...channel,
        status: Number(channel.status),
        priority: Number(channel.priority),
        weight: Number(channel.weight),
      });
  });
}

export async function deleteChannel(db: Executor, id: number): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('abilities').where('channel_id', '=', id).execute();
    await transaction.deleteFrom('channel_keys').where('channel_id', '=', id).execute();
    const result = await transaction.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/** The channel as the console sees it: never its key. */
export function toChannelRecord(row: Omit<ChannelRow, 'key'> & { key?: string }): ChannelRecord & { auto_disabled: boolean } {
  return {
    id: Number(row.id),
    type: Number(row.type),
    name: row.name,
    key: '',
    status: Number(row.status),
    base_url: row.base_url,
    other: row.other,
    models: row.models,
    group: row.group,
    model_mapping: row.model_mapping,
    priority: Number(row.priority),
    weight: Number(row.weight),
    response_time: Number(row.response_time),
    test_time: Number(row.test_time),
    test_error: row.test_error ?? '',
    test_model: row.test_model ?? '',
    balance: Number(row.balance),
    balance_updated_time: Number(row.balance_updated_time),
    used_quota: Number(row.used_quota),
    created_time: Number(row.created_time),
    auto_disabled: Number(row.auto_disabled) === 1,
    multi_key: Number(row.multi_key) === 1,
    key_strategy: row.key_strategy === 'round_robin' ? 'round_robin' : 'random',
  };
}
