// Moves a one-api or new-api database into Switchboard's (see docs/migrating.md, "Moving
// from one-api or new-api"). Every table of the source is read and mapped in
// memory first, so a dry run and an import report the same plan; an import
// then writes users, tokens, channels (with their abilities), redemptions and
// options in ONE transaction, which also checks that the quota totals moved
// by exactly what was carried and rolls everything back if not. Logs, which
// can be millions of rows, follow in batches, each batch with its rollups in
// its own transaction, under the source's ids (offset like every other id),
// so a batch already written is recognised and skipped when the same command
// runs again after a failure (the target then holds exactly the source's
// users: the import resumes with the logs, nothing else is written twice).
// Keys (tokens', channels', redemptions', access tokens) are never put in
// the report, an error or a log line.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ImportProgress } from '../../common/importJob';
import { isOptionKey, isSafeLink, isUrlOption, isValidRatioJson, OPTION_SPECS } from '../../common/options';
import { Role } from '../../common/roles';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import { hashAccessToken } from '../plugins/auth';
import { writeAbilities } from '../repositories/channels';
import { logRow, type NewLog } from '../repositories/logs';
import { rollupsOf, upsertRollups } from '../repositories/usageRollups';
import { detectProduct, importedKey, importedOther, targetChannelType, unrelayedReason, type Detected } from './products';
import type { SourceDatabase } from './source';

export type { ImportProgress } from '../../common/importJob';

type Db = Kysely<Database>;
type Row = Record<string, unknown>;

export interface ImportOptions {
  /** Write (the default is a dry run that writes nothing). */
  apply?: boolean;
  /** Add to a target that already holds users: ids are offset, clashes renamed or left out. */
  merge?: boolean;
  /** Also move the logs (and build the dashboard's rollups from them). */
  withLogs?: boolean;
  /** Logs per batch (default 5000). */
  logBatchSize?: number;
  onProgress?: (progress: ImportProgress) => void;
}

/** The money: what users hold, what they used, and what their tokens may still spend. */
export interface QuotaTotals {
  userQuota: number;
  userUsedQuota: number;
  tokenRemainQuota: number;
}

export interface TableOutcome {
  table: string;
  /** Rows in the source. */
  source: number;
  /** Rows carried over (or that would be, in a dry run). */
  carried: number;
  /** Rows left out, by reason, with a few examples (ids and names, never keys). */
  leftOut: Array<{ reason: string; count: number; examples: string[] }>;
}

export interface ImportReport {
  source: string;
  detected: Detected;
  applied: boolean;
  merge: boolean;
  withLogs: boolean;
  /** Set when the target holds data and --merge was not given: nothing is written. */
  refused?: string;
  tables: TableOutcome[];
  /** Option keys with no meaning here (left out). */
  unknownOptions: string[];
  /** Usernames and keys that clashed with the target's (--merge). */
  clashes: string[];
  /** Source settings that have no place here, counted per field. */
  notCarried: string[];
  /** Channels whose type number changed on the way (new-api numbers its types its own way). */
  renumbered: string[];
  /** Set when users, tokens, channels, codes and options were imported by an earlier run: only the logs are copied (from where they stopped). */
  resumed?: boolean;
  /** The fresh install's root account the import replaces, if any. */
  replacedRoot?: string;
  totals: {
    /** The source's live rows. */
    source: QuotaTotals;
    /** What is carried over. */
    carried: QuotaTotals;
    targetBefore: QuotaTotals;
    /** After the import (in a dry run: what it would be). */
    targetAfter: QuotaTotals;
  };
  elapsedMs: number;
}

const num = (value: unknown, fallback = 0): number => {
  if (value === null || value === undefined || value === '') return fallback;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : fallback;
};
// eslint-disable-next-line @typescript-eslint/no-base-to-string -- a source column as its driver returns it (text, number, bigint, Buffer, Date): String() turns each into its text
const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
/** A key or code: PostgreSQL pads char(n) columns with blanks when it reads them. */
const keyText = (value: unknown): string => text(value).trimEnd();
const flag = (value: unknown): number => (value === true || num(value) === 1 ? 1 : 0);
const isDeleted = (row: Row) => row.deleted_at !== null && row.deleted_at !== undefined;

const ZERO: QuotaTotals = { userQuota: 0, userUsedQuota: 0, tokenRemainQuota: 0 };
const addTotals = (left: QuotaTotals, right: QuotaTotals, sign = 1): QuotaTotals => ({
  userQuota: left.userQuota + sign * right.userQuota,
  userUsedQuota: left.userUsedQuota + sign * right.userUsedQuota,
  tokenRemainQuota: left.tokenRemainQuota + sign * right.tokenRemainQuota,
});
const sameTotals = (left: QuotaTotals, right: QuotaTotals) =>
  left.userQuota === right.userQuota && left.userUsedQuota === right.userUsedQuota && left.tokenRemainQuota === right.tokenRemainQuota;

export async function quotaTotals(db: Db): Promise<QuotaTotals> {
  const users = await db
    .selectFrom('users')
    .select((eb) => [eb.fn.sum<number>('quota').as('quota'), eb.fn.sum<number>('used_quota').as('used')])
    .executeTakeFirst();
  const tokens = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.sum<number>('remain_quota').as('remain'))
    .executeTakeFirst();
  return { userQuota: num(users?.quota), userUsedQuota: num(users?.used), tokenRemainQuota: num(tokens?.remain) };
}

/** One table's left-out rows, by reason. */
class Outcome {
  readonly leftOut = new Map<string, { count: number; examples: string[] }>();
  carried = 0;
  constructor(
    readonly table: string,
    readonly source: number,
  ) {}
  leave(reason: string, example: string) {
    const entry = this.leftOut.get(reason) ?? { count: 0, examples: [] };
    entry.count += 1;
    if (entry.examples.length < 5) entry.examples.push(example);
    this.leftOut.set(reason, entry);
  }
  toJSON(): TableOutcome {
    return {
      table: this.table,
      source: this.source,
      carried: this.carried,
      leftOut: [...this.leftOut].map(([reason, entry]) => ({ reason, ...entry })),
    };
  }
}

/** Counts the rows where a source field that has no place here is set. */
class Uncarried {
  private readonly counts = new Map<string, number>();
  note(table: string, row: Row, fields: readonly string[]) {
    for (const field of fields) {
      const value = row[field];
      if (value === null || value === undefined || value === '' || value === 0 || value === false || value === '0' || value === '{}')
        continue;
      const label = `${table}.${field}`;
      this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
    }
  }
  list(): string[] {
    return [...this.counts].map(([label, count]) => `${label} (set on ${count} row${count === 1 ? '' : 's'})`);
  }
}

/** Source fields Switchboard has no column or meaning for. */
const UNCARRIED_FIELDS = {
  users: [
    'lark_id',
    'oidc_id',
    'telegram_id',
    'discord_id',
    'linux_do_id',
    'aff_count',
    'aff_quota',
    'aff_history',
    'setting',
    'remark',
    'stripe_customer',
  ],
  tokens: ['group', 'cross_group_retry', 'billing_type'],
  channels: [
    'config',
    'system_prompt',
    'tag',
    'setting',
    'settings',
    'param_override',
    'header_override',
    'status_code_mapping',
    'openai_organization',
    'remark',
    'other_info',
  ],
  redemptions: ['expired_time'],
} as const;

/**
 * A new-api multi-key channel (channel_info.is_multi_key): its keys, one per
 * line of `key` or a JSON array (service-account files), each with its state
 * from multi_key_status_list (by index; absent is enabled) and why it was set
 * aside; its mode, polling being our round_robin. Undefined for a channel of one key.
 */
function multiKeyOf(
  row: Row,
): { keys: Array<{ key: string; status: number; last_error: string }>; strategy: 'random' | 'round_robin' } | undefined {
  let info:
    { is_multi_key?: unknown; multi_key_status_list?: unknown; multi_key_disabled_reason?: unknown; multi_key_mode?: unknown } | undefined;
  try {
    info = JSON.parse(text(row.channel_info) || '{}') as typeof info;
  } catch {
    return undefined;
  }
  if (!info || info.is_multi_key !== true) return undefined;
  const statuses = (
    info.multi_key_status_list && typeof info.multi_key_status_list === 'object' ? info.multi_key_status_list : {}
  ) as Record<string, unknown>;
  const reasons = (
    info.multi_key_disabled_reason && typeof info.multi_key_disabled_reason === 'object' ? info.multi_key_disabled_reason : {}
  ) as Record<string, unknown>;
  const raw = text(row.key).trim();
  let keys: string[] | undefined;
  if (raw.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (Array.isArray(parsed)) keys = parsed.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
    } catch {
      keys = undefined;
    }
  }
  keys ??= raw.split('\n');
  const carried = keys
    .map((key, index) => {
      const status = num(statuses[String(index)], 1);
      return {
        key: key.trim(),
        status: status === 2 || status === 3 ? status : 1,
        last_error: text(reasons[String(index)]).slice(0, 1000),
      };
    })
    .filter((key) => key.key);
  return { keys: carried, strategy: info.multi_key_mode === 'polling' ? 'round_robin' : 'random' };
}

const RATIO_OPTIONS = new Set(['ModelRatio', 'CompletionRatio', 'GroupRatio', 'ModelMaxOutputTokens']);

interface Plan {
  users: Array<Record<string, unknown> & { id: number }>;
  tokens: Array<Record<string, unknown> & { id: number }>;
  channels: Array<
    Record<string, unknown> & { id: number; models: string; group: string; status: number; priority: number; weight: number }
  >;
  /** The keys of new-api's multi-key channels, each its own row here. */
  channelKeys: Array<{ channel_id: number; key: string; status: number; last_error: string; created_time: number }>;
  redemptions: Array<Record<string, unknown> & { id: number }>;
  options: Array<{ key: string; value: string }>;
  offsets: { users: number; tokens: number; channels: number; logs: number };
}

async function readTable(source: SourceDatabase, table: string): Promise<Row[]> {
  if (!source.columns.has(table)) return [];
  const rows = (await source.db.selectFrom(table).selectAll().orderBy('id').execute()) as Row[];
  // PostgreSQL returns column names as created; GORM creates them lower case, but be lenient
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key.toLowerCase(), value])));
}

async function readOptions(source: SourceDatabase): Promise<Row[]> {
  if (!source.columns.has('options')) return [];
  return await source.db.selectFrom('options').selectAll().execute();
}

const maxId = async (db: Db, table: 'users' | 'tokens' | 'channels' | 'redemptions' | 'logs') =>
  num(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.max<number>('id').as('id'))
        .executeTakeFirst()
    )?.id,
  );

const countOf = async (db: Db, table: 'users' | 'tokens' | 'channels' | 'redemptions') =>
  num(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirst()
    )?.count,
  );

/**
 * What the target holds: a fresh install (nothing, or only the root account
 * it made on first start, unused, and no tokens, channels or codes) takes the
 * source's ids as they are, the fresh root giving way to the source's users;
 * anything more needs --merge.
 */
/** Whether the target's users are exactly the source's live users, under their ids and names (an earlier import of this source). */
async function holdsSourceUsers(db: Db, sourceUsers: Row[]): Promise<boolean> {
  const live = sourceUsers.filter((row) => !isDeleted(row));
  const target = await db.selectFrom('users').select(['id', 'username']).execute();
  if (live.length === 0 || target.length !== live.length) return false;
  const names = new Map(target.map((row) => [num(row.id), row.username]));
  return live.every((row) => names.get(num(row.id)) === text(row.username));
}

async function targetState(
  db: Db,
): Promise<{ fresh: boolean; freshRoot?: { id: number; username: string; quota: number; used: number }; summary: string }> {
  const [users, tokens, channels, redemptions] = await Promise.all([
    countOf(db, 'users'),
    countOf(db, 'tokens'),
    countOf(db, 'channels'),
    countOf(db, 'redemptions'),
  ]);
  const summary = `${users} user(s), ${tokens} token(s), ${channels} channel(s), ${redemptions} redemption code(s)`;
  if (tokens + channels + redemptions > 0 || users > 1) return { fresh: false, summary };
  if (users === 0) return { fresh: true, summary };
  const root = await db
    .selectFrom('users')
    .select(['id', 'username', 'role', 'quota', 'used_quota', 'request_count'])
    .executeTakeFirstOrThrow();
  const untouched = num(root.role) >= Role.root && num(root.used_quota) === 0 && num(root.request_count) === 0;
  return untouched
    ? { fresh: true, freshRoot: { id: num(root.id), username: root.username, quota: num(root.quota), used: 0 }, summary }
    : { fresh: false, summary };
}

export async function runImport(
  source: SourceDatabase,
  target: { db: Db; dialect: DatabaseConfig['dialect'] },
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = Date.now();
  const { db } = target;
  const merge = options.merge === true;
  const progress = options.onProgress ?? (() => undefined);
  const detected = detectProduct(source.columns);
  const newApi = detected.product === 'new-api';
  progress({ step: 'read', done: 0, total: 1 });

  const state = await targetState(db);
  const targetBefore = await quotaTotals(db);

  const [sourceUsers, sourceTokens, sourceChannels, sourceRedemptions, sourceOptions] = await Promise.all([
    readTable(source, 'users'),
    readTable(source, 'tokens'),
    readTable(source, 'channels'),
    readTable(source, 'redemptions'),
    readOptions(source),
  ]);
  progress({ step: 'read', done: 1, total: 1 });

  // the same command run again after the logs stopped half-way: the rest of the source is here already
  const resumed = !state.fresh && !merge && options.withLogs === true && (await holdsSourceUsers(db, sourceUsers));
  const refused =
    !state.fresh && !merge && !resumed
      ? `the target already holds data (${state.summary}); give --merge to add the source to it`
      : undefined;
  const replaceRoot = state.fresh && !merge ? state.freshRoot : undefined;
  // a fresh target keeps the source's ids (logs too, when it has none, so a resumed copy finds its batches)
  const offsets = resumed
    ? { users: 0, tokens: 0, channels: 0, redemptions: 0, logs: 0 }
    : {
        users: replaceRoot ? 0 : await maxId(db, 'users'),
        tokens: await maxId(db, 'tokens'),
        channels: await maxId(db, 'channels'),
        redemptions: await maxId(db, 'redemptions'),
        logs: await maxId(db, 'logs'),
      };
  const clashes: string[] = [];
  const uncarried = new Uncarried();
  const sourceTotals = { ...ZERO };
  const carried = { ...ZERO };

  // users
  const userOutcome = new Outcome('users', sourceUsers.length);
  const takenNames = new Set(merge ? (await db.selectFrom('users').select('username').execute()).map((row) => row.username) : []);
  const takenAccessTokens = new Set(
    merge ? (await db.selectFrom('users').select('access_token_hash').execute()).map((row) => row.access_token_hash) : [],
  );
  const takenAffCodes = new Set(merge ? (await db.selectFrom('users').select('aff_code').execute()).map((row) => row.aff_code) : []);
  const liveUsers = new Map<number, string>();
  const users: Plan['users'] = [];
  const now = Math.floor(Date.now() / 1000);
  for (const row of sourceUsers) {
    const sourceId = num(row.id);
    const original = text(row.username);
    if (isDeleted(row)) {
      userOutcome.leave('deleted in the source', `#${sourceId} ${original}`);
      continue;
    }
    sourceTotals.userQuota += num(row.quota);
    sourceTotals.userUsedQuota += num(row.used_quota);
    let username = original;
    for (let attempt = 0; takenNames.has(username); attempt += 1) username = `${original}.${sourceId}${attempt ? `.${attempt}` : ''}`;
    if (username !== original)
      clashes.push(`username "${original}" (source user #${sourceId}) is taken in the target: imported as "${username}"`);
    takenNames.add(username);
    const accessToken = keyText(row.access_token);
    let accessTokenHash: string | null = accessToken ? hashAccessToken(accessToken) : null;
    if (accessTokenHash && takenAccessTokens.has(accessTokenHash)) {
      clashes.push(`the access token of "${original}" (source user #${sourceId}) is already a target user's: not carried`);
      accessTokenHash = null;
    }
    let affCode: string | null = keyText(row.aff_code) || null;
    if (affCode && takenAffCodes.has(affCode)) {
      clashes.push(`the invite code of "${original}" (source user #${sourceId}) is already a target user's: not carried`);
      affCode = null;
    }
    uncarried.note('users', row, UNCARRIED_FIELDS.users);
    liveUsers.set(sourceId, username);
    users.push({
      id: offsets.users + sourceId,
      username,
      password_hash: text(row.password),
      display_name: text(row.display_name) || username,
      role: num(row.role, 1),
      status: num(row.status, 1),
      email: text(row.email),
      github_id: text(row.github_id),
      wechat_id: text(row.wechat_id),
      access_token_hash: accessTokenHash,
      quota: num(row.quota),
      used_quota: num(row.used_quota),
      request_count: num(row.request_count),
      group: text(row.group) || 'default',
      aff_code: affCode,
      inviter_id: num(row.inviter_id) ? offsets.users + num(row.inviter_id) : 0,
      session_version: 0,
      created_at: now,
    });
    carried.userQuota += num(row.quota);
    carried.userUsedQuota += num(row.used_quota);
  }
  userOutcome.carried = users.length;

  // tokens
  const tokenOutcome = new Outcome('tokens', sourceTokens.length);
  const takenKeys = new Set(merge ? (await db.selectFrom('tokens').select('key').execute()).map((row) => row.key) : []);
  const tokens: Plan['tokens'] = [];
  for (const row of sourceTokens) {
    const sourceId = num(row.id);
    const label = `#${sourceId} ${text(row.name)}`;
    if (isDeleted(row)) {
      tokenOutcome.leave('deleted in the source', label);
      continue;
    }
    const owner = liveUsers.get(num(row.user_id));
    if (!owner) {
      tokenOutcome.leave('its user no longer exists in the source', label);
      continue;
    }
    sourceTotals.tokenRemainQuota += num(row.remain_quota);
    const key = keyText(row.key);
    if (key.length === 0 || key.length > 64) {
      tokenOutcome.leave('its key is empty or longer than 64 characters', label);
      continue;
    }
    if (takenKeys.has(key)) {
      tokenOutcome.leave('its key is already a key in the target', label);
      clashes.push(`token ${label} of "${owner}": its key is already a target token's key: left out`);
      continue;
    }
    takenKeys.add(key);
    uncarried.note('tokens', row, UNCARRIED_FIELDS.tokens);
    const models = newApi ? (flag(row.model_limits_enabled) ? text(row.model_limits) : '') : text(row.models);
    const ips = text(newApi ? row.allow_ips : row.subnet)
      .split(/[\s,]+/)
      .filter(Boolean)
      .join(',');
    tokens.push({
      id: offsets.tokens + sourceId,
      user_id: offsets.users + num(row.user_id),
      key,
      status: num(row.status, 1),
      name: text(row.name).slice(0, 64),
      created_time: num(row.created_time),
      accessed_time: num(row.accessed_time),
      expired_time: num(row.expired_time, -1),
      remain_quota: num(row.remain_quota),
      unlimited_quota: flag(row.unlimited_quota),
      used_quota: num(row.used_quota),
      models: models || null,
      allowed_ips: ips || null,
    });
    carried.tokenRemainQuota += num(row.remain_quota);
  }
  tokenOutcome.carried = tokens.length;

  // channels
  const channelOutcome = new Outcome('channels', sourceChannels.length);
  const channels: Plan['channels'] = [];
  const channelKeys: Plan['channelKeys'] = [];
  const renumbered: string[] = [];
  for (const row of sourceChannels) {
    const sourceId = num(row.id);
    const label = `#${sourceId} ${text(row.name)}`;
    if (isDeleted(row)) {
      channelOutcome.leave('deleted in the source', label);
      continue;
    }
    const type = targetChannelType(detected.product, num(row.type));
    if (type === undefined) {
      channelOutcome.leave(unrelayedReason(detected.product, num(row.type)), label);
      continue;
    }
    if (type !== num(row.type)) renumbered.push(`${label}: ${detected.product} type ${num(row.type)} is type ${type} here`);
    uncarried.note('channels', row, UNCARRIED_FIELDS.channels);
    // one-api and new-api: 1 enabled, 2 disabled by hand, 3 disabled automatically
    const sourceStatus = num(row.status, 1);
    const multiKey = newApi ? multiKeyOf(row) : undefined;
    if (multiKey) {
      for (const key of multiKey.keys)
        channelKeys.push({ ...key, channel_id: offsets.channels + sourceId, created_time: num(row.created_time) });
    }
    channels.push({
      id: offsets.channels + sourceId,
      type,
      key: multiKey ? '' : importedKey(detected.product, num(row.type), text(row.key), row.config),
      multi_key: multiKey ? 1 : 0,
      key_strategy: multiKey?.strategy ?? 'random',
      status: sourceStatus === 1 ? 1 : 2,
      auto_disabled: sourceStatus === 3 ? 1 : 0,
      name: text(row.name).slice(0, 128),
      weight: num(row.weight),
      priority: num(row.priority),
      created_time: num(row.created_time),
      test_time: num(row.test_time),
      response_time: num(row.response_time),
      base_url: text(row.base_url),
      other: importedOther(detected.product, num(row.type), text(row.other), row.config),
      balance: num(row.balance),
      balance_updated_time: num(row.balance_updated_time),
      models: text(row.models),
      group: text(row.group) || 'default',
      used_quota: num(row.used_quota),
      model_mapping: text(row.model_mapping),
      test_model: text(row.test_model).slice(0, 255),
    });
  }
  channelOutcome.carried = channels.length;

  // redemption codes
  const redemptionOutcome = new Outcome('redemptions', sourceRedemptions.length);
  const takenCodes = new Set(merge ? (await db.selectFrom('redemptions').select('key').execute()).map((row) => row.key) : []);
  const redemptions: Plan['redemptions'] = [];
  for (const row of sourceRedemptions) {
    const sourceId = num(row.id);
    const label = `#${sourceId} ${text(row.name)}`;
    if (isDeleted(row)) {
      redemptionOutcome.leave('deleted in the source', label);
      continue;
    }
    const key = keyText(row.key);
    if (takenCodes.has(key)) {
      redemptionOutcome.leave('its code is already a code in the target', label);
      clashes.push(`redemption code ${label}: the code is already a target code: left out`);
      continue;
    }
    takenCodes.add(key);
    uncarried.note('redemptions', row, UNCARRIED_FIELDS.redemptions);
    const redeemedBy = num(row.used_user_id);
    redemptions.push({
      id: offsets.redemptions + sourceId,
      user_id: num(row.user_id) ? offsets.users + num(row.user_id) : 0,
      key,
      status: num(row.status, 1),
      name: text(row.name).slice(0, 64),
      quota: num(row.quota),
      created_time: num(row.created_time),
      redeemed_time: num(row.redeemed_time),
      redeemed_by: redeemedBy ? offsets.users + redeemedBy : 0,
    });
  }
  redemptionOutcome.carried = redemptions.length;

  // options
  const optionOutcome = new Outcome('options', sourceOptions.length);
  const unknownOptions: string[] = [];
  const optionRows: Plan['options'] = [];
  const targetOptions = new Map((await db.selectFrom('options').select(['key', 'value']).execute()).map((row) => [row.key, row.value]));
  for (const row of sourceOptions) {
    const key = text(row.key);
    const value = text(row.value);
    if (!isOptionKey(key)) {
      unknownOptions.push(key);
      optionOutcome.leave('no meaning in Switchboard', key);
    } else if (merge) {
      optionOutcome.leave("--merge keeps the target's own settings", key);
    } else if (RATIO_OPTIONS.has(key)) {
      if (!isValidRatioJson(value)) optionOutcome.leave('not a JSON object of numbers', key);
      // the source's prices win; models it never priced keep ours
      else
        optionRows.push({
          key,
          value: JSON.stringify({ ...JSON.parse(targetOptions.get(key) ?? OPTION_SPECS[key].default), ...JSON.parse(value) }),
        });
    } else if (isUrlOption(key) && !isSafeLink(value)) {
      optionOutcome.leave('not an http(s) link or a site path', key);
    } else {
      optionRows.push({ key, value });
    }
  }
  optionOutcome.carried = optionRows.length;

  let logOutcome: Outcome | undefined;
  let logCount = 0;
  if (options.withLogs && source.columns.has('logs')) {
    logCount = num(
      (
        await source.db
          .selectFrom('logs')
          .select((eb) => eb.fn.countAll().as('count'))
          .executeTakeFirst()
      )?.count,
    );
    logOutcome = new Outcome('logs', logCount);
    logOutcome.carried = logCount;
  }

  const report: ImportReport = {
    source: source.label,
    detected,
    applied: false,
    merge,
    withLogs: options.withLogs === true,
    refused,
    resumed: resumed || undefined,
    tables: [userOutcome, tokenOutcome, channelOutcome, redemptionOutcome, optionOutcome, ...(logOutcome ? [logOutcome] : [])].map(
      (outcome) => outcome.toJSON(),
    ),
    unknownOptions,
    clashes,
    notCarried: uncarried.list(),
    renumbered,
    replacedRoot: replaceRoot
      ? `the fresh install's account "${replaceRoot.username}" (#${replaceRoot.id}) gives way to the source's users`
      : undefined,
    totals: {
      source: sourceTotals,
      carried,
      targetBefore,
      targetAfter: addTotals(
        addTotals(targetBefore, carried),
        replaceRoot ? { userQuota: replaceRoot.quota, userUsedQuota: replaceRoot.used, tokenRemainQuota: 0 } : ZERO,
        -1,
      ),
    },
    elapsedMs: 0,
  };
  if (!options.apply || refused) {
    report.elapsedMs = Date.now() - started;
    return report;
  }

  if (resumed) {
    report.totals.carried = { ...ZERO };
    report.totals.targetAfter = targetBefore;
  }
  const plan: Plan = { users, tokens, channels, channelKeys, redemptions, options: optionRows, offsets };
  if (!resumed)
    await db.transaction().execute(async (transaction) => {
      if (replaceRoot) {
        await transaction.deleteFrom('sessions').where('user_id', '=', replaceRoot.id).execute();
        await transaction.deleteFrom('users').where('id', '=', replaceRoot.id).execute();
      }
      await insertChunked(transaction, 'users', plan.users, (done) => progress({ step: 'users', done, total: plan.users.length }));
      await insertChunked(transaction, 'tokens', plan.tokens, (done) => progress({ step: 'tokens', done, total: plan.tokens.length }));
      await insertChunked(transaction, 'channels', plan.channels, (done) =>
        progress({ step: 'channels', done, total: plan.channels.length }),
      );
      for (const channel of plan.channels) await writeAbilities(transaction, channel.id, channel);
      await insertChunked(transaction, 'channel_keys', plan.channelKeys, () => undefined);
      await insertChunked(transaction, 'redemptions', plan.redemptions, (done) =>
        progress({ step: 'redemptions', done, total: plan.redemptions.length }),
      );
      for (const option of plan.options) {
        await transaction.deleteFrom('options').where('key', '=', option.key).execute();
        await transaction.insertInto('options').values(option).execute();
      }
      progress({ step: 'options', done: plan.options.length, total: plan.options.length });
      const after = await quotaTotals(transaction);
      if (!sameTotals(after, report.totals.targetAfter)) {
        throw new Error(
          `the quota totals after the import (${JSON.stringify(after)}) differ from the expected ${JSON.stringify(report.totals.targetAfter)}: nothing was written`,
        );
      }
      if (target.dialect === 'postgres') await resetSequences(transaction, ['users', 'tokens', 'channels', 'redemptions']);
    });
  report.applied = true;

  if (logOutcome) await copyLogs(source, target, newApi, offsets, options.logBatchSize ?? 5000, logCount, progress);
  report.totals.targetAfter = await quotaTotals(db);
  progress({ step: 'done', done: 1, total: 1 });
  report.elapsedMs = Date.now() - started;
  return report;
}

/** Rows per INSERT: well under every dialect's bound-parameter limit. */
const ROWS_PER_INSERT = 400;

async function insertChunked(
  transaction: Transaction<Database>,
  table: 'users' | 'tokens' | 'channels' | 'channel_keys' | 'redemptions',
  rows: Array<Record<string, unknown>>,
  onChunk: (done: number) => void,
) {
  for (let index = 0; index < rows.length; index += ROWS_PER_INSERT) {
    const chunk = rows.slice(index, index + ROWS_PER_INSERT);
    try {
      await transaction
        .insertInto(table)
        .values(chunk as never)
        .execute();
    } catch (error) {
      throw keyless(table, error);
    }
    onChunk(Math.min(rows.length, index + ROWS_PER_INSERT));
  }
}

/** A database error without the values the driver quotes in it (a key in a duplicate-entry message, say). */
function keyless(table: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`writing ${table} failed: ${message.replace(/'[^']*'/g, "'…'").replace(/\([^)]*\)=\([^)]*\)/g, '(…)')}`);
}

/** PostgreSQL's bigserial sequences do not move when ids are given: start them after the highest. */
async function resetSequences(db: Kysely<Database>, tables: string[]) {
  for (const table of tables) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(
      db,
    );
  }
}

/**
 * The logs, streamed by id in batches; each batch and its rollups commit
 * together. A batch whose ids are already in the target (an import run again
 * after it stopped) is skipped, so nothing is counted twice.
 */
async function copyLogs(
  source: SourceDatabase,
  target: { db: Db; dialect: DatabaseConfig['dialect'] },
  newApi: boolean,
  offsets: Plan['offsets'],
  batchSize: number,
  total: number,
  progress: (progress: ImportProgress) => void,
) {
  const columns = source.columns.get('logs')!;
  let lastId = -1;
  let done = 0;
  for (;;) {
    const rows = (await source.db
      .selectFrom('logs')
      .selectAll()
      .where('id', '>', lastId)
      .orderBy('id')
      .limit(batchSize)
      .execute()) as Row[];
    if (rows.length === 0) break;
    lastId = num(rows[rows.length - 1].id);
    const firstTargetId = offsets.logs + num(rows[0].id);
    const present = await target.db
      .selectFrom('logs')
      .select('id')
      .where('id', '>=', firstTargetId)
      .where('id', '<=', offsets.logs + lastId)
      .limit(1)
      .executeTakeFirst();
    done += rows.length;
    if (present) {
      progress({ step: 'logs', done, total });
      continue;
    }
    const logs: NewLog[] = rows.map((row) => ({
      userId: num(row.user_id) ? offsets.users + num(row.user_id) : 0,
      username: text(row.username).slice(0, 64),
      type: num(row.type),
      content: text(row.content),
      quota: num(row.quota),
      tokenName: text(row.token_name).slice(0, 64),
      tokenId: num(row.token_id) ? offsets.tokens + num(row.token_id) : 0,
      modelName: text(row.model_name).slice(0, 128),
      channelId: num(row.channel_id) ? offsets.channels + num(row.channel_id) : 0,
      promptTokens: num(row.prompt_tokens),
      completionTokens: num(row.completion_tokens),
      // one-api counts milliseconds (elapsed_time), new-api whole seconds (use_time)
      elapsedMs: newApi ? num(row.use_time) * 1000 : columns.has('elapsed_time') ? num(row.elapsed_time) : 0,
      isStream: flag(row.is_stream) === 1,
      createdAt: num(row.created_at),
    }));
    const values = logs.map((log, index) => ({ ...logRow(log), id: offsets.logs + num(rows[index].id) }));
    await target.db.transaction().execute(async (transaction) => {
      for (let index = 0; index < values.length; index += ROWS_PER_INSERT) {
        await transaction
          .insertInto('logs')
          .values(values.slice(index, index + ROWS_PER_INSERT))
          .execute();
      }
      // consume logs are the rollups' requests, error logs (new-api numbers them 5 too) their errors
      await upsertRollups(transaction, rollupsOf(logs));
    });
    progress({ step: 'logs', done, total });
  }
  if (target.dialect === 'postgres') await resetSequences(target.db, ['logs']);
}
