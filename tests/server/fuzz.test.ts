// Every /api and /v1 route, driven over real HTTP with
// malformed JSON, wrong types, huge numbers, NUL bytes, long strings and odd
// paths, as root, as a normal user and anonymously, on every database. No
// answer may be a 500, the server must keep answering, nothing may reach the
// upstream, and no balance, key or code may change. A fixed seed keeps the run
// reproducible; the review's own cases run first as a fixed list.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, register, ROOT_PASSWORD } from '../support/app';
import { databaseTargets, type TestDatabase } from '../support/databases';
import { startRelayHarness, type RelayHarness } from './relay/harness';

const targets = await databaseTargets('fuzz', { besideSqlite: 'postgres' });

// FUZZ_SEED explores other inputs locally; CI keeps the fixed one
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const API_RUNS = 1500;
const RELAY_RUNS = 600;

/** Percent-encodes every byte of the UTF-8 text but letters and digits (lone surrogates too, which encodeURIComponent refuses). */
const percentEncode = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type Caller = 'root' | 'user' | 'anonymous';

interface Route {
  method: Method;
  path: string;
  /** Body fields the handler reads. */
  fields?: string[];
  /** Query parameters the handler reads. */
  query?: string[];
}

// Every /api route with input. Left out: the ones that act without any input
// (test or re-balance every channel, regenerate the access token, delete one's
// own account), which junk cannot reach beyond their schema-free defaults.
const API_ROUTES: Route[] = [
  { method: 'GET', path: '/api/status' },
  { method: 'GET', path: '/api/notice' },
  { method: 'GET', path: '/api/user/self' },
  { method: 'GET', path: '/api/user/logout' },
  { method: 'GET', path: '/api/user/aff' },
  { method: 'GET', path: '/api/verification', query: ['email', 'turnstile'] },
  { method: 'GET', path: '/api/reset_password', query: ['email', 'turnstile'] },
  { method: 'POST', path: '/api/user/reset', fields: ['email', 'token'] },
  {
    method: 'POST',
    path: '/api/user/register',
    fields: ['username', 'password', 'password2', 'email', 'verification_code', 'aff_code'],
    query: ['turnstile'],
  },
  { method: 'POST', path: '/api/user/login', fields: ['username', 'password'] },
  { method: 'PUT', path: '/api/user/self', fields: ['username', 'display_name', 'password', 'quota', 'role'] },
  { method: 'POST', path: '/api/user/topup', fields: ['key'] },
  { method: 'GET', path: '/api/user/', query: ['p'] },
  { method: 'GET', path: '/api/user/search', query: ['keyword'] },
  { method: 'GET', path: '/api/user/:id' },
  { method: 'POST', path: '/api/user/', fields: ['username', 'password', 'display_name'] },
  { method: 'PUT', path: '/api/user/', fields: ['id', 'username', 'display_name', 'password', 'group', 'quota'] },
  { method: 'POST', path: '/api/user/manage', fields: ['username', 'action'] },
  { method: 'GET', path: '/api/option/' },
  { method: 'PUT', path: '/api/option/', fields: ['key', 'value'] },
  { method: 'GET', path: '/api/channel/', query: ['p'] },
  { method: 'GET', path: '/api/channel/search', query: ['keyword'] },
  { method: 'GET', path: '/api/channel/:id' },
  { method: 'GET', path: '/api/channel/test/:id' },
  { method: 'GET', path: '/api/channel/update_balance/:id' },
  {
    method: 'POST',
    path: '/api/channel/',
    fields: [
      'type',
      'name',
      'key',
      'base_url',
      'other',
      'models',
      'group',
      'model_mapping',
      'priority',
      'weight',
      'multi_key',
      'key_strategy',
    ],
  },
  {
    method: 'PUT',
    path: '/api/channel/',
    fields: [
      'id',
      'type',
      'name',
      'key',
      'base_url',
      'models',
      'group',
      'model_mapping',
      'priority',
      'weight',
      'status',
      'multi_key',
      'key_strategy',
    ],
  },
  { method: 'DELETE', path: '/api/channel/:id' },
  { method: 'GET', path: '/api/channel/:id/keys' },
  { method: 'POST', path: '/api/channel/:id/keys', fields: ['keys'] },
  { method: 'PUT', path: '/api/channel/1/keys/:id', fields: ['status'] },
  { method: 'DELETE', path: '/api/channel/1/keys/:id' },
  { method: 'GET', path: '/api/channel/1/keys/:id/test' },
  { method: 'GET', path: '/api/token/', query: ['p'] },
  { method: 'GET', path: '/api/token/search', query: ['keyword'] },
  { method: 'GET', path: '/api/token/:id' },
  { method: 'GET', path: '/api/token/:id/key' },
  { method: 'POST', path: '/api/token/', fields: ['name', 'remain_quota', 'expired_time', 'unlimited_quota', 'models', 'allowed_ips'] },
  {
    method: 'PUT',
    path: '/api/token/',
    fields: ['id', 'name', 'remain_quota', 'expired_time', 'unlimited_quota', 'models', 'allowed_ips', 'status'],
    query: ['status_only'],
  },
  { method: 'DELETE', path: '/api/token/:id' },
  { method: 'GET', path: '/api/redemption/', query: ['p'] },
  { method: 'GET', path: '/api/redemption/search', query: ['keyword'] },
  { method: 'GET', path: '/api/redemption/:id' },
  { method: 'GET', path: '/api/redemption/:id/key' },
  { method: 'POST', path: '/api/redemption/', fields: ['name', 'quota', 'count'] },
  { method: 'PUT', path: '/api/redemption/', fields: ['id', 'name', 'quota', 'status'], query: ['status_only'] },
  { method: 'DELETE', path: '/api/redemption/:id' },
  { method: 'GET', path: '/api/log/', query: ['p', 'type', 'username', 'token_name', 'model_name', 'start_timestamp', 'end_timestamp'] },
  { method: 'GET', path: '/api/log/stat', query: ['type', 'username', 'token_name', 'model_name', 'start_timestamp', 'end_timestamp'] },
  { method: 'GET', path: '/api/log/search', query: ['keyword'] },
  { method: 'GET', path: '/api/log/self', query: ['p', 'type', 'token_name', 'model_name', 'start_timestamp', 'end_timestamp'] },
  { method: 'GET', path: '/api/log/self/stat', query: ['type', 'token_name', 'model_name', 'start_timestamp', 'end_timestamp'] },
  { method: 'GET', path: '/api/log/self/search', query: ['keyword'] },
  { method: 'GET', path: '/api/oauth/github', query: ['code', 'state'] },
  { method: 'GET', path: '/api/oauth/wechat', query: ['code'] },
  { method: 'GET', path: '/api/oauth/wechat/bind', query: ['code'] },
  { method: 'GET', path: '/api/oauth/email/bind', query: ['email', 'code'] },
  { method: 'GET', path: '/api/group/' },
];

const HUGE = [1e19, -1e19, 2 ** 53, -(2 ** 53), 1e308, -1, 0.5, -0.5, 1e-7];
// short (under the 8 characters of a password), NUL-laden or long: never a valid name, password, key or id
const ODD_TEXT = [
  'NaN',
  '1e19',
  '0x1',
  ' 1',
  '1\n',
  '-0',
  'Inf',
  '',
  '\u0000',
  'a\u0000b',
  'x'.repeat(100_000),
  '\u0000'.repeat(300),
  '9'.repeat(25),
  '%00',
  '\uD800',
];

/** A value that is wrong for every field the routes read. */
const badValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(...HUGE, ...ODD_TEXT, true, false, null, [], {}, [1e19], { id: 1 }, ['\u0000']),
  // no digit strings: "2" is a valid id
  fc.string({ maxLength: 7 }).filter((text) => !/^\s*-?\d+\s*$/.test(text)),
  fc.string({ minLength: 1, maxLength: 20 }).map((text) => `${text}\u0000`),
  fc.string({ minLength: 200, maxLength: 400 }),
  fc.double().filter((value) => !Number.isInteger(value)),
  fc.integer().map((value) => -Math.abs(value) - 1),
);

/** Query values: anything bad, with the number-like strings that once slipped through parseInt and Number. */
const queryValue: fc.Arbitrary<unknown> = fc.oneof(
  badValue,
  fc.constantFrom('1e19', '10000000000000000000', '9007199254740993', '-1', '0x10', ' 1', '1.5', 'NaN', '%00', '\u0000'),
  fc.bigInt({ min: 10n ** 15n, max: 10n ** 30n }).map(String),
);

/** Path segments standing where an id goes; none of them may be read as an id. */
const ODD_IDS = [
  '0x1',
  '1%0A',
  '1e3',
  '%201',
  '1.0',
  '-1',
  '0',
  '00',
  '1e19',
  '10000000000000000000',
  '9007199254740993',
  '%00',
  '1%00',
  '%2e%2e',
  '..',
  'NaN',
  'Infinity',
  '+1',
  '1_0',
  '%EF%BC%91',
];
const oddId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ODD_IDS),
  fc
    .string({ minLength: 1, maxLength: 30, unit: 'binary' })
    .filter((text) => !/^[0-9]+$/.test(text.trim()))
    .map(percentEncode),
);

const MALFORMED_JSON = [
  '{',
  '{"a":',
  '[1,2',
  'null',
  '"text"',
  '1e999',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{}}}',
  '{"id":1e19}',
  '{"id":"1\\u0000"}',
  '\u0000',
  '{"a":1}{"b":2}',
  ' ',
];

interface Generated {
  method: Method;
  url: string;
  caller: Caller;
  contentType?: string;
  body?: string | Buffer;
}

function queryString(entries: Array<[string, unknown]>): string {
  if (entries.length === 0) return '';
  return `?${entries.map(([key, value]) => `${key}=${percentEncode(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))}`).join('&')}`;
}

const apiRequest: fc.Arbitrary<Generated> = fc
  .record({
    route: fc.constantFrom(...API_ROUTES),
    caller: fc.constantFrom<Caller>('root', 'user', 'anonymous'),
    id: oddId,
    bodyKind: fc.constantFrom('fields', 'fields', 'fields', 'malformed', 'array', 'text', 'none'),
    picks: fc.array(fc.tuple(fc.nat(20), badValue), { maxLength: 5 }),
    extra: fc.dictionary(fc.string({ maxLength: 10 }), badValue, { maxKeys: 3 }),
    queryPicks: fc.array(fc.tuple(fc.nat(20), queryValue), { maxLength: 3 }),
    malformed: fc.constantFrom(...MALFORMED_JSON),
  })
  .map(({ route, caller, id, bodyKind, picks, extra, queryPicks, malformed }) => {
    const path = route.path.replace(':id', id);
    const query = route.query ?? [];
    const url = path + queryString(queryPicks.filter(() => query.length > 0).map(([index, value]) => [query[index % query.length], value]));
    if (route.method === 'GET' || bodyKind === 'none') return { method: route.method, url, caller };
    if (bodyKind === 'malformed') return { method: route.method, url, caller, contentType: 'application/json', body: malformed };
    if (bodyKind === 'array')
      return { method: route.method, url, caller, contentType: 'application/json', body: JSON.stringify(picks.map(([, value]) => value)) };
    if (bodyKind === 'text') return { method: route.method, url, caller, contentType: 'text/plain', body: 'username=root&password=x' };
    const fields = route.fields ?? [];
    const body: Record<string, unknown> = { ...extra };
    for (const [index, value] of picks) if (fields.length > 0) body[fields[index % fields.length]] = value;
    return { method: route.method, url, caller, contentType: 'application/json', body: JSON.stringify(body) };
  });

// A valid model with one read field out of range, or a bad model: either way the gateway must refuse before reserving.
const BAD_READ_FIELDS: Record<string, unknown[]> = {
  max_tokens: [1e19, -1, 2 ** 53, 0.5, '100', 'NaN', true, [], {}, 10_000_001],
  max_completion_tokens: [1e19, -1, '1e3', 2 ** 63],
  n: [0, -1, 129, 1e19, '1', 1.5, true],
  stream: ['true', 1, 0, 'false', [], {}],
  stream_options: ['x', [], 1, { include_usage: 'yes' }, { include_usage: 1 }],
  model: [42, [], {}, true, 'gpt-4\u0000', 'm'.repeat(200), 'x'.repeat(100_000)],
};

const RELAY_JSON_PATHS: Array<[string, string]> = [
  ['/v1/chat/completions', 'gpt-4'],
  ['/v1/completions', 'gpt-3.5-turbo'],
  ['/v1/edits', 'gpt-4'],
  ['/v1/embeddings', 'text-embedding-ada-002'],
  ['/v1/engines/text-embedding-ada-002/embeddings', 'text-embedding-ada-002'],
  ['/v1/moderations', 'gpt-4'],
  ['/v1/images/generations', 'dall-e'],
  ['/v1/audio/speech', 'gpt-4'],
  ['/v1/rerank', 'rerank-v3.5'],
];

/** The other client protocols' paths: a body that is not JSON (or not sent as JSON) is refused there too, unrelayed. */
const CLIENT_PROTOCOL_PATHS: Array<[string, string]> = [
  ['/v1/messages', 'gpt-4'],
  ['/v1/responses', 'gpt-4'],
  ['/v1beta/models/gpt-4:generateContent', 'gpt-4'],
  ['/v1beta/models/gpt-4:streamGenerateContent?alt=sse', 'gpt-4'],
];

type RelayCaller = 'user' | 'root' | 'anonymous' | 'bogus';

interface GeneratedRelay extends Omit<Generated, 'caller'> {
  caller: RelayCaller;
}

const relayRequest: fc.Arbitrary<GeneratedRelay> = fc.oneof(
  fc
    .record({
      route: fc.constantFrom(...RELAY_JSON_PATHS),
      caller: fc.constantFrom<RelayCaller>('user', 'user', 'root', 'anonymous', 'bogus'),
      field: fc.constantFrom(...Object.keys(BAD_READ_FIELDS)),
      pick: fc.nat(20),
      rest: fc.dictionary(fc.constantFrom('messages', 'prompt', 'input', 'instruction', 'size', 'user', 'temperature', 'tools'), badValue, {
        maxKeys: 4,
      }),
    })
    .map(({ route: [path, model], caller, field, pick, rest }) => {
      const values = BAD_READ_FIELDS[field];
      const body = { ...rest, model, [field]: values[pick % values.length] };
      return { method: 'POST' as const, url: path, caller, contentType: 'application/json', body: JSON.stringify(body) };
    }),
  fc
    .record({
      // a bare JSON object is a valid request where the model has a default (moderations) or comes from the path
      route: fc.constantFrom(
        ...RELAY_JSON_PATHS.filter(([path]) => path !== '/v1/moderations' && !path.includes('/engines/')),
        ...CLIENT_PROTOCOL_PATHS,
      ),
      caller: fc.constantFrom<RelayCaller>('user', 'root', 'anonymous'),
      malformed: fc.constantFrom(...MALFORMED_JSON),
      type: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
    })
    .map(({ route: [path], caller, malformed, type }) => ({
      method: 'POST' as const,
      url: path,
      caller,
      contentType: type,
      body: malformed,
    })),
  fc
    .record({
      caller: fc.constantFrom<RelayCaller>('user', 'root', 'bogus'),
      model: fc.constantFrom<unknown>(...BAD_READ_FIELDS.model.filter((value) => typeof value === 'string'), ''),
      garbage: fc.uint8Array({ maxLength: 200 }),
    })
    .map(({ caller, model, garbage }) => {
      const boundary = 'fuzzboundary';
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\n${String(model)}\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.mp3"\r\n\r\n`,
        ),
        Buffer.from(garbage),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      return {
        method: 'POST' as const,
        url: '/v1/audio/transcriptions',
        caller,
        contentType: `multipart/form-data; boundary=${boundary}`,
        body,
      };
    }),
  fc
    .record({
      caller: fc.constantFrom<RelayCaller>('user', 'root', 'anonymous', 'bogus'),
      path: fc.constantFrom(
        '/v1/models',
        '/v1/models/:id',
        '/v1/dashboard/billing/subscription',
        '/dashboard/billing/usage',
        '/v1/files/:id',
        '/v1/fine-tunes/:id/events',
      ),
      id: oddId,
    })
    .map(({ caller, path, id }) => ({ method: 'GET' as const, url: path.replace(':id', id), caller })),
);

interface Snapshot {
  users: unknown[];
  tokens: unknown[];
  redemptions: unknown[];
  channels: unknown[];
}

for (const target of targets) {
  describe.runIf(target.available)(`fuzz on ${target.name}`, () => {
    let database: TestDatabase;
    let harness: RelayHarness;
    const cookies: Partial<Record<Caller, string>> = {};
    const keys: Partial<Record<RelayCaller, string>> = {};
    const statuses = new Map<number, number>();
    let sent = 0;

    const snapshot = async (): Promise<Snapshot> => {
      await harness.settled();
      const { db } = harness.app.ctx;
      return {
        users: await db
          .selectFrom('users')
          .select(['id', 'quota', 'held_quota', 'used_quota', 'role', 'status', 'group', 'password_hash', 'access_token_hash'])
          .orderBy('id')
          .execute(),
        tokens: await db
          .selectFrom('tokens')
          .select(['id', 'key', 'remain_quota', 'held_quota', 'used_quota', 'status', 'unlimited_quota', 'expired_time', 'models'])
          .orderBy('id')
          .execute(),
        redemptions: await db.selectFrom('redemptions').select(['id', 'key', 'status', 'quota', 'redeemed_by']).orderBy('id').execute(),
        channels: await db
          .selectFrom('channels')
          .select(['id', 'key', 'status', 'base_url', 'models', 'priority', 'weight', 'used_quota'])
          .orderBy('id')
          .execute(),
      };
    };

    /** Sends one request over real HTTP; a 500, a dropped connection or a hang fails the property. */
    const send = async (generated: Generated | GeneratedRelay): Promise<number> => {
      const headers: Record<string, string> = { 'sec-fetch-site': 'same-origin' };
      if (generated.contentType) headers['content-type'] = generated.contentType;
      const relay = generated.url.startsWith('/v1') || generated.url.startsWith('/dashboard');
      if (relay) {
        const key = keys[generated.caller];
        if (key) headers.authorization = `Bearer ${key}`;
      } else {
        const cookie = cookies[generated.caller as Caller];
        if (cookie) headers.cookie = cookie;
      }
      const response = await request(`${harness.baseUrl}${generated.url}`, {
        method: generated.method,
        headers,
        body: generated.body,
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
      const text = await response.body.text();
      sent += 1;
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      if (response.statusCode >= 500 && response.statusCode !== 501) {
        throw new Error(
          `${generated.method} ${generated.url.slice(0, 200)} (${generated.caller}) answered ${response.statusCode}: ${text.slice(0, 300)}`,
        );
      }
      return response.statusCode;
    };

    let before: Snapshot;
    let upstreamBefore: number;

    beforeAll(async () => {
      database = await target.create();
      harness = await startRelayHarness(database.config);
      await harness.addChannel({ name: 'emu', key: 'sk-good', models: 'gpt-4,gpt-3.5-turbo,text-embedding-ada-002,dall-e' });
      cookies.root = await login(harness.app, 'root', ROOT_PASSWORD);
      await register(harness.app, 'fuzzer', 'fuzzer-password');
      cookies.user = await login(harness.app, 'fuzzer', 'fuzzer-password');
      await harness.app.ctx.db.updateTable('users').set({ quota: 1_000_000 }).where('username', '=', 'fuzzer').execute();
      const created = await harness.app.inject({
        method: 'POST',
        url: '/api/token/',
        headers: { cookie: cookies.user },
        payload: { name: 'fuzz', remain_quota: 500_000 },
      });
      keys.user = `sk-${created.json().data.key}`;
      keys.root = harness.apiKey;
      keys.bogus = `sk-${'Z'.repeat(48)}-1e19`;
      await harness.app.inject({
        method: 'POST',
        url: '/api/redemption/',
        headers: { cookie: cookies.root },
        payload: { name: 'fuzz', quota: 1000, count: 2 },
      });
      before = await snapshot();
      upstreamBefore = harness.emulator.requests.length;
    });

    afterAll(async () => {
      console.log(
        `[fuzz ${target.name}] ${sent} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
      );
      await harness?.close();
      await database?.drop();
    });

    it("answers the review's cases with 400, never 500", async () => {
      const cases: Array<Generated & { expected: number }> = [
        { method: 'GET', url: '/api/channel/?p=1e19', caller: 'root', expected: 400 },
        { method: 'GET', url: '/api/channel/?p=10000000000000000000', caller: 'root', expected: 400 },
        { method: 'GET', url: '/api/log/?p=10000000000000000000', caller: 'root', expected: 400 },
        { method: 'GET', url: '/api/log/self?p=10000000000000000000', caller: 'user', expected: 400 },
        { method: 'GET', url: '/api/token/?p=10000000000000000000', caller: 'user', expected: 400 },
        { method: 'GET', url: '/api/user/?p=10000000000000000000', caller: 'root', expected: 400 },
        { method: 'GET', url: '/api/redemption/?p=10000000000000000000', caller: 'root', expected: 400 },
        {
          method: 'POST',
          url: '/api/user/login',
          caller: 'anonymous',
          contentType: 'application/json',
          body: JSON.stringify({ username: 'root\u0000', password: 'x' }),
          expected: 400,
        },
        {
          method: 'POST',
          url: '/api/user/register',
          caller: 'anonymous',
          contentType: 'application/json',
          body: JSON.stringify({ username: 'a\u0000', password: 'password-1' }),
          expected: 400,
        },
        { method: 'GET', url: '/api/user/search?keyword=%00', caller: 'root', expected: 400 },
        { method: 'GET', url: '/api/log/self?model_name=%00', caller: 'user', expected: 400 },
        {
          method: 'POST',
          url: '/api/user/topup',
          caller: 'user',
          contentType: 'application/json',
          body: JSON.stringify({ key: '\u0000' }),
          expected: 400,
        },
        {
          method: 'POST',
          url: '/api/token/',
          caller: 'user',
          contentType: 'application/json',
          body: JSON.stringify({ name: 'long', models: 'm'.repeat(100_000) }),
          expected: 400,
        },
        {
          method: 'PUT',
          url: '/api/user/',
          caller: 'root',
          contentType: 'application/json',
          body: JSON.stringify({ id: 2, group: 'a,b'.repeat(40) }),
          expected: 400,
        },
        {
          method: 'PUT',
          url: '/api/option/',
          caller: 'root',
          contentType: 'application/json',
          body: JSON.stringify({ key: 'Notice', value: 'x'.repeat(100_000) }),
          expected: 400,
        },
        { method: 'GET', url: '/api/channel/0x1', caller: 'root', expected: 400 },
        { method: 'DELETE', url: '/api/channel/1%0A', caller: 'root', expected: 400 },
        { method: 'DELETE', url: '/api/token/1e3', caller: 'user', expected: 400 },
        { method: 'GET', url: '/api/redemption/%201/key', caller: 'root', expected: 400 },
        {
          method: 'POST',
          url: '/v1/chat/completions',
          caller: 'user',
          contentType: 'application/json',
          body: JSON.stringify({ model: 'gpt-4', max_tokens: 1e19, messages: [] }),
          expected: 400,
        },
        {
          method: 'POST',
          url: '/v1/chat/completions',
          caller: 'user',
          contentType: 'application/json',
          body: JSON.stringify({ model: 'gpt-4\u0000', messages: [] }),
          expected: 400,
        },
        { method: 'GET', url: '/v1/models/gpt-4%00', caller: 'user', expected: 400 },
        // found by this fuzz: a long run of digits was taken for a log type and overflowed PostgreSQL's integer
        { method: 'GET', url: '/api/log/search?keyword=501137186727512802293075815721', caller: 'root', expected: 200 },
        { method: 'GET', url: '/api/log/self/search?keyword=99999999999', caller: 'user', expected: 200 },
      ];
      for (const { expected, ...generated } of cases) {
        expect(await send(generated), `${generated.method} ${generated.url}`).toBe(expected);
      }
    });

    it('never answers 500 to generated console requests', async () => {
      await fc.assert(
        fc.asyncProperty(apiRequest, async (generated) => {
          await send(generated);
        }),
        { seed: SEED, numRuns: API_RUNS, endOnFailure: true },
      );
    }, 120_000);

    it('never answers 500 to generated relay requests, and relays none of them', async () => {
      await fc.assert(
        fc.asyncProperty(relayRequest, async (generated) => {
          const status = await send(generated);
          if (
            generated.caller === 'user' &&
            generated.url !== '/v1/models' &&
            !generated.url.includes('billing') &&
            generated.method === 'POST'
          ) {
            expect(status).toBeGreaterThanOrEqual(400);
          }
        }),
        { seed: SEED, numRuns: RELAY_RUNS, endOnFailure: true },
      );
      expect(harness.emulator.requests.length).toBe(upstreamBefore);
    }, 120_000);

    it('changed no balance, key, code or channel, and still answers', async () => {
      // a generated token name can be a valid one, and creating a token is no balance change: rows made meanwhile are left out
      const after = await snapshot();
      const existed = (table: keyof Snapshot) => {
        const ids = new Set(before[table].map((row) => (row as { id: number }).id));
        return after[table].filter((row) => ids.has((row as { id: number }).id));
      };
      expect({
        users: existed('users'),
        tokens: existed('tokens'),
        redemptions: existed('redemptions'),
        channels: existed('channels'),
      }).toEqual(before);
      expect(after.redemptions.length).toBe(before.redemptions.length);
      expect(after.users.length).toBe(before.users.length);
      const status = await request(`${harness.baseUrl}/api/status`);
      expect(status.statusCode).toBe(200);
      await status.body.text();
      expect(statuses.get(500) ?? 0).toBe(0);
    });
  });
}
