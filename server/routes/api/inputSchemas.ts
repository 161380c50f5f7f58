/* eslint-disable max-lines -- one schema per console route (params, query, body) with the bounds each field may take: a table of the API's input, read by section */
// The JSON schemas of the console API's input (params, query strings, bodies).
// Fastify checks them before any handler runs, so nothing malformed reaches a
// query: ids and pages are digit strings, strings are bounded and free of NUL
// (PostgreSQL refuses NUL in text), numbers are safe integers that fit their
// columns. Limits are generous: the handlers still give the console its own
// messages (e.g. "username must be at most 12 characters"); these bounds only
// keep out what no form sends. Bodies keep the fields the console sends beside
// the ones read (it sends whole records back on edit), so extra keys are
// allowed on edits. Every fragment carries a `description`, which the error
// handler (app.ts) turns into "<field> must be <description>".
//
// Validation is compiled with coerceTypes off (app.ts): with Ajv's default
// coercion "0x1", " 1" and "1e3" would all become the integer 1 or 1000.

import { Type, type TUnsafe } from 'typebox';
import type { KeyStrategy } from '../../../common/records';
import { BULK_ACTIONS, BULK_MAX, PAGE_SIZES, SORTABLE_COLUMNS, type BulkAction, type ListResource } from '../../../common/listQuery';

const SAFE = Number.MAX_SAFE_INTEGER;
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** No NUL anywhere in the string. */
export const NO_NUL = '^[^\\u0000]*$';

/** MySQL TEXT holds 65,535 bytes: 16,000 characters fit even at 4 bytes each. */
export const LONG_TEXT_MAX = 16_000;

type Schema = Record<string, unknown>;

/**
 * The fragment as it is, typed as `T` for the handler (TypeBox's Unsafe adds
 * no enumerable key, so Ajv compiles the very same schema and its messages do
 * not change).
 */
const typed = <T>(schema: Schema): TUnsafe<T> => Type.Unsafe<T>(schema);

/** An id, quota, time or small number in a body: a JSON number or a digit string. */
export type NumberOrDigits = number | string;

/** The value of a `flag` field: the console sends booleans, forms and scripts "true"/"1". */
export type Flag = boolean | string | number | null;

/** A string of at most `maxLength` characters, without NUL. */
export const text = (maxLength: number): Schema => ({
  type: 'string',
  maxLength,
  pattern: NO_NUL,
  description: `text of at most ${maxLength} characters without NUL`,
});

/** As `text`, or null (fields of records the console echoes back). */
export const optionalText = (maxLength: number): Schema => ({
  type: ['string', 'null'],
  maxLength,
  pattern: NO_NUL,
  description: `text of at most ${maxLength} characters without NUL, or null`,
});

/** Ids in a path or a query: 1 to 15 digits (so always a safe integer), nothing else. */
const idString: Schema = { type: 'string', pattern: '^[0-9]{1,15}$', description: 'a whole number of 1 to 15 digits' };

/** An id in a body: a positive safe integer, as a JSON number or a digit string. */
const idValue: Schema = {
  anyOf: [
    { type: 'integer', minimum: 1, maximum: SAFE },
    { type: 'string', pattern: '^[0-9]{1,15}$' },
  ],
  description: 'a positive whole number',
};

/** A quota or a time: a safe integer, as a JSON number or a digit string. */
const wholeNumber: Schema = {
  anyOf: [
    { type: 'integer', minimum: -SAFE, maximum: SAFE },
    { type: 'string', pattern: '^-?[0-9]{1,15}$' },
  ],
  description: 'a whole number within ±9007199254740991',
};

/** A column of SQL type `integer` (type, status, priority, weight). */
const int32: Schema = {
  anyOf: [
    { type: 'integer', minimum: INT32_MIN, maximum: INT32_MAX },
    { type: 'string', pattern: '^-?[0-9]{1,9}$' },
  ],
  description: `a whole number within ${INT32_MIN}..${INT32_MAX}`,
};

/** As `schema`, or null: where the handler reads null as "the default" (a console form's NaN arrives as null). */
const orNull = (schema: Schema): Schema => ({ anyOf: [{ type: 'null' }, schema], description: `${String(schema.description)}, or null` });

const flag: Schema = { type: ['boolean', 'string', 'integer', 'null'], maxLength: 8, maximum: 1, minimum: 0, description: 'true or false' };

/** A 0-based page (`?p=`); empty means 0. */
const page: Schema = { type: 'string', pattern: '^[0-9]{0,15}$', description: 'a page number of at most 15 digits' };

const objectOf = (properties: Record<string, Schema>, options: { required?: string[]; closed?: boolean } = {}): Schema => ({
  type: 'object',
  properties,
  ...(options.required ? { required: options.required } : {}),
  ...(options.closed ? { additionalProperties: false } : {}),
  maxProperties: 64,
  description: 'a JSON object',
});

// ---- shared pieces -------------------------------------------------------

export const idParams = typed<{ id: string }>(objectOf({ id: idString }, { required: ['id'] }));
export const pageQuery = objectOf({ p: page });
export const keywordQuery = objectOf({ keyword: text(128) });
export const statusOnlyQuery = typed<{ status_only?: string }>(objectOf({ status_only: text(16) }));
const turnstile = text(4096);
const email = text(254);

/** `{ params: { id } }`: the `:id` routes. */
export const byId = { params: idParams };
export const searched = { querystring: keywordQuery };

// ---- lists: page size, sort, filters --------------------------------------

const pageSize: Schema = { type: 'string', enum: PAGE_SIZES.map(String), description: `one of ${PAGE_SIZES.join(', ')}` };
const order: Schema = { type: 'string', enum: ['asc', 'desc'], description: 'asc or desc' };
const sortColumn = (resource: ListResource): Schema => ({
  type: 'string',
  enum: [...SORTABLE_COLUMNS[resource]],
  description: `one of ${SORTABLE_COLUMNS[resource].join(', ')}`,
});
/** A status, type or role filter: a small whole number (digits only). */
export const smallNumber: Schema = { type: 'string', pattern: '^[0-9]{1,9}$', description: 'a whole number (digits only)' };

/** The filters each list and search accepts beside the keyword. */
export const LIST_FILTERS = {
  channel: { status: smallNumber, type: smallNumber, group: text(32) },
  token: { status: smallNumber },
  redemption: { status: smallNumber },
  user: { role: smallNumber, status: smallNumber },
} satisfies Record<Exclude<ListResource, 'log'>, Record<string, Schema>>;

const sorting = (resource: ListResource) => ({ sort: sortColumn(resource), order });

type Listed = Exclude<ListResource, 'log'>;
type FilterQuery<R extends Listed> = { [K in keyof (typeof LIST_FILTERS)[R]]?: string };
interface SortQuery {
  sort?: string;
  order?: 'asc' | 'desc';
}

/** `GET /api/{resource}/?p=&page_size=&sort=&order=&<filters>`. */
export const listed = <R extends Listed>(resource: R) => ({
  querystring: typed<SortQuery & FilterQuery<R> & { p?: string; page_size?: string }>(
    objectOf({ p: page, page_size: pageSize, ...sorting(resource), ...LIST_FILTERS[resource] }),
  ),
});

/** `GET /api/{resource}/search?keyword=&sort=&order=&<filters>` (searches are not paged). */
export const searchedList = <R extends Listed>(resource: R) => ({
  querystring: typed<SortQuery & FilterQuery<R> & { keyword?: string }>(
    objectOf({ keyword: text(128), ...sorting(resource), ...LIST_FILTERS[resource] }),
  ),
});

/** `POST /api/{channel|token|redemption}/bulk`: one action on many records. */
export const bulkSchema = {
  body: typed<{ ids: number[]; action: BulkAction }>(
    objectOf(
      {
        ids: {
          type: 'array',
          minItems: 1,
          maxItems: BULK_MAX,
          items: { type: 'integer', minimum: 1, maximum: SAFE },
          description: `a list of 1 to ${BULK_MAX} ids`,
        },
        action: { type: 'string', enum: [...BULK_ACTIONS], description: BULK_ACTIONS.join(', ') + ' (one of)' },
      },
      { required: ['ids', 'action'], closed: true },
    ),
  ),
};

/** `GET /api/channel/jobs/:id`. */
export const jobIdParams = {
  params: typed<{ id: string }>(
    objectOf({ id: { type: 'string', pattern: '^[0-9a-z-]{1,40}$', description: 'a job id' } }, { required: ['id'] }),
  ),
};

// ---- users ---------------------------------------------------------------

export const registerSchema = {
  querystring: typed<{ turnstile?: string }>(objectOf({ turnstile })),
  body: typed<{
    username?: string;
    password?: string;
    password2?: string;
    email?: string | null;
    verification_code?: string | null;
    aff_code?: string | null;
  }>(
    objectOf({
      username: text(64),
      password: text(128),
      password2: text(128),
      email: optionalText(254),
      verification_code: optionalText(64),
      aff_code: optionalText(64),
    }),
  ),
};

export const loginSchema = { body: typed<{ username?: string; password?: string }>(objectOf({ username: text(64), password: text(128) })) };

/** The console sends the whole loaded user back; only these fields are read. */
export const selfUpdateSchema = {
  body: typed<{ username?: string | null; display_name?: string | null; password?: string | null; original_password?: string | null }>(
    objectOf({
      username: optionalText(64),
      display_name: optionalText(64),
      password: optionalText(128),
      original_password: optionalText(128),
    }),
  ),
};

export const userCreateSchema = {
  body: typed<{
    username?: string;
    password?: string;
    display_name?: string | null;
    group?: string | null;
    quota?: NumberOrDigits | null;
    // not in the schema (extra keys pass): the handler checks them as the edit does
    budget_period?: unknown;
    budget_quota?: unknown;
  }>(
    objectOf({
      username: text(64),
      password: text(128),
      display_name: optionalText(64),
      group: optionalText(64),
      quota: orNull(wholeNumber),
    }),
  ),
};

/** A per-minute rate limit override: null (inherit) or a whole number; the handler checks the range. */
const rateLimitValue = orNull(wholeNumber);

export const userUpdateSchema = {
  body: typed<{
    id?: NumberOrDigits;
    username?: string | null;
    display_name?: string | null;
    password?: string | null;
    group?: string;
    quota?: NumberOrDigits;
    rpm_limit?: NumberOrDigits | null;
    tpm_limit?: NumberOrDigits | null;
    // not in the schema (extra keys pass): the handler checks them itself
    concurrency_limit?: unknown;
    budget_period?: unknown;
    budget_quota?: unknown;
  }>(
    objectOf({
      id: idValue,
      username: optionalText(64),
      display_name: optionalText(64),
      password: optionalText(128),
      // users.group is varchar(64)
      group: text(64),
      quota: wholeNumber,
      rpm_limit: rateLimitValue,
      tpm_limit: rateLimitValue,
    }),
  ),
};

/** A six-digit TOTP code or a recovery code (`xxxxx-xxxxx`). */
export const twoFactorCodeSchema = { body: typed<{ code: string }>(objectOf({ code: text(32) }, { required: ['code'] })) };

export const userManageSchema = { body: typed<{ username?: string; action?: string }>(objectOf({ username: text(64), action: text(16) })) };

// ---- e-mail, reset, OAuth ------------------------------------------------

export const emailQuerySchema = { querystring: typed<{ email?: string; turnstile?: string }>(objectOf({ email, turnstile })) };
export const resetSchema = { body: typed<{ email?: string; token?: string }>(objectOf({ email, token: text(128) })) };
export const emailBindSchema = { querystring: typed<{ email?: string; code?: string }>(objectOf({ email, code: text(64) })) };
export const githubSchema = { querystring: typed<{ code?: string; state?: string }>(objectOf({ code: text(512), state: text(128) })) };
export const wechatSchema = { querystring: typed<{ code?: string }>(objectOf({ code: text(128) })) };
/** The provider's answer to a single sign-on, as the console's callback page passes it on (RFC 9207 adds `iss`). */
export const oidcCallbackSchema = {
  querystring: typed<{ code?: string; state?: string; iss?: string; error?: string; error_description?: string }>(
    objectOf({ code: text(2048), state: text(256), iss: text(512), error: text(128), error_description: text(1024) }),
  ),
};

// ---- tokens --------------------------------------------------------------

/** models and allowed_ips: a comma list or an array; both end up in a TEXT column. */
const list: Schema = {
  anyOf: [
    { type: ['string', 'null'], maxLength: LONG_TEXT_MAX, pattern: NO_NUL },
    { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 128, pattern: NO_NUL } },
  ],
  description: `a comma-separated list of at most ${LONG_TEXT_MAX} characters (or an array of at most 100 names of 128 characters), without NUL`,
};

const tokenFields = {
  name: optionalText(64),
  remain_quota: wholeNumber,
  expired_time: wholeNumber,
  unlimited_quota: flag,
  models: list,
  allowed_ips: list,
  rpm_limit: rateLimitValue,
  tpm_limit: rateLimitValue,
};

/** What a token form sends (a type alias, not an interface, so it passes as the parser's Record<string, unknown>). */
type TokenBody = {
  name?: string | null;
  remain_quota?: NumberOrDigits;
  expired_time?: NumberOrDigits;
  unlimited_quota?: Flag;
  models?: string | string[] | null;
  allowed_ips?: string | string[] | null;
  rpm_limit?: NumberOrDigits | null;
  tpm_limit?: NumberOrDigits | null;
  // not in the schema (extra keys pass): the handler checks them itself
  concurrency_limit?: unknown;
  budget_period?: unknown;
  budget_quota?: unknown;
};

export const tokenCreateSchema = { body: typed<TokenBody>(objectOf(tokenFields)) };
export const tokenUpdateSchema = {
  querystring: statusOnlyQuery,
  body: typed<TokenBody & { id?: NumberOrDigits; status?: NumberOrDigits }>(objectOf({ ...tokenFields, id: idValue, status: int32 })),
};

// ---- redemptions ---------------------------------------------------------

export const redemptionCreateSchema = {
  body: typed<{ name?: string; quota?: NumberOrDigits; count?: NumberOrDigits | null }>(
    objectOf({ name: text(64), quota: wholeNumber, count: orNull(wholeNumber) }),
  ),
};
export const redemptionUpdateSchema = {
  querystring: statusOnlyQuery,
  body: typed<{ id?: NumberOrDigits; name?: string | null; quota?: NumberOrDigits; status?: NumberOrDigits }>(
    objectOf({ id: idValue, name: optionalText(64), quota: wholeNumber, status: int32 }),
  ),
};
export const topUpSchema = { body: typed<{ key?: string }>(objectOf({ key: text(128) })) };

// ---- channels ------------------------------------------------------------

const channelFields = {
  type: int32,
  name: optionalText(128),
  // one key per line when creating several channels at once
  key: optionalText(LONG_TEXT_MAX),
  base_url: optionalText(512),
  other: optionalText(512),
  models: optionalText(LONG_TEXT_MAX),
  group: optionalText(512),
  model_mapping: optionalText(LONG_TEXT_MAX),
  test_model: optionalText(255),
  priority: orNull(int32),
  weight: orNull(int32),
  status: int32,
  // absent: one-api's wire (several keys make several channels); true: one channel holding them all
  multi_key: flag,
  key_strategy: { type: 'string', enum: ['random', 'round_robin'], description: 'random or round_robin' },
};

/** What a channel form sends (a type alias, not an interface, so it passes as the parser's Record<string, unknown>). */
type ChannelBody = {
  type?: NumberOrDigits;
  name?: string | null;
  key?: string | null;
  base_url?: string | null;
  other?: string | null;
  models?: string | null;
  group?: string | null;
  model_mapping?: string | null;
  test_model?: string | null;
  priority?: NumberOrDigits | null;
  weight?: NumberOrDigits | null;
  status?: NumberOrDigits;
  multi_key?: Flag;
  key_strategy?: KeyStrategy;
};

/** `GET /api/channel/test/:id?model=`: the model to test, one of the channel's. */
export const channelTestSchema = { ...byId, querystring: typed<{ model?: string }>(objectOf({ model: text(255) })) };

export const channelCreateSchema = { body: typed<ChannelBody>(objectOf(channelFields)) };
export const channelUpdateSchema = { body: typed<ChannelBody & { id?: NumberOrDigits }>(objectOf({ ...channelFields, id: idValue })) };

/** A channel and one of its keys, in the path. */
const channelKeyParams = typed<{ id: string; keyId: string }>(objectOf({ id: idString, keyId: idString }, { required: ['id', 'keyId'] }));
export const channelKeyById = { params: channelKeyParams };
/** Keys to add to a multi-key channel: one per line, or a JSON array (the text of an uploaded file). */
export const channelKeysAddSchema = {
  params: idParams,
  body: typed<{ keys: string }>(objectOf({ keys: text(1_000_000) }, { required: ['keys'], closed: true })),
};
/** A key enabled (1) or disabled (2) by an admin. */
export const channelKeyStatusSchema = {
  params: channelKeyParams,
  body: typed<{ status: NumberOrDigits }>(
    objectOf({ status: { ...int32, description: '1 (enabled) or 2 (disabled)' } }, { required: ['status'], closed: true }),
  ),
};

// ---- logs ----------------------------------------------------------------

const timestamp: Schema = { type: 'string', pattern: '^[0-9]{0,15}$', description: 'a Unix time in seconds (digits only)' };
const logType: Schema = { type: 'string', pattern: '^[0-9]{0,9}$', description: 'a log type (digits only)' };

/** What a log list, stat or export's query holds once validated (a type alias, so it passes as a Record<string, unknown>). */
type LogQuery = SortQuery & {
  p?: string;
  page_size?: string;
  channel?: string;
  type?: string;
  username?: string;
  token_name?: string;
  model_name?: string;
  start_timestamp?: string;
  end_timestamp?: string;
  request_id?: string;
};

export const logQuerySchema = {
  querystring: typed<LogQuery>(
    objectOf({
      p: page,
      page_size: pageSize,
      ...sorting('log'),
      // the channel a row was relayed through (admins only)
      channel: smallNumber,
      type: logType,
      username: text(64),
      token_name: text(64),
      model_name: text(128),
      start_timestamp: timestamp,
      end_timestamp: timestamp,
      // a relayed request's X-Request-Id, exactly
      request_id: text(128),
    }),
  ),
};

/** `GET /api/log/search` and `/api/log/self/search`: a keyword, narrowed by a type or a request id. */
export const logSearchSchema = {
  querystring: typed<{ keyword?: string; type?: string; request_id?: string }>(
    objectOf({ keyword: text(128), type: logType, request_id: text(128) }),
  ),
};

// ---- dashboard -----------------------------------------------------------

/** What the dashboard's query holds once validated: digit strings, and the granularity. */
export interface DashboardQuery {
  start?: string;
  end?: string;
  granularity?: 'hour' | 'day';
  user_id?: string;
  token_id?: string;
  model?: string;
  channel_id?: string;
}

/** GET /api/dashboard and /api/dashboard/admin (common/dashboard.ts). */
export const dashboardQuerySchema = {
  querystring: typed<DashboardQuery>(
    objectOf({
      start: timestamp,
      end: timestamp,
      granularity: { type: 'string', enum: ['hour', 'day'], description: "'hour' or 'day'" },
      user_id: idString,
      token_id: idString,
      model: text(128),
      channel_id: idString,
    }),
  ),
};

// ---- options -------------------------------------------------------------

export const optionUpdateSchema = {
  body: typed<{ key?: string; value?: string | number | boolean | null }>(
    objectOf({
      key: text(64),
      value: {
        type: ['string', 'number', 'boolean', 'null'],
        maxLength: LONG_TEXT_MAX,
        pattern: NO_NUL,
        description: `text of at most ${LONG_TEXT_MAX} characters without NUL`,
      },
    }),
  ),
};

/** POST /api/import/: the source (a file path or a DSN) and the switches of `npm run import`. */
export const importStartSchema = {
  body: typed<{ source: string; apply?: Flag; merge?: Flag; with_logs?: Flag }>(
    objectOf({ source: text(2048), apply: flag, merge: flag, with_logs: flag }, { required: ['source'], closed: true }),
  ),
};

// ---- webhooks -------------------------------------------------------------

/** A webhook's create or edit: the handler gives the console its messages; this keeps out NUL and absurd sizes (PostgreSQL refuses NUL in text). */
export const webhookBody = {
  body: objectOf({
    name: text(256),
    url: text(4096),
    secret: optionalText(256),
    events: { type: 'array', maxItems: 64, items: text(64), description: 'a list of event names' },
  }),
};
export const webhookEdit = { ...byId, ...webhookBody };
