// Writes the three source fixtures (one SQLite file per schema) beside this
// script: node --import tsx tests/server/import/__fixtures__/build.ts
// With `--logs <n> <file>` it writes one more file instead: the one-api
// latest fixture with n generated consume logs (bench/importLogs.ts; not committed).
// The rows are the same in every file, as far as each schema has the columns.
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';
import SQLite from 'better-sqlite3';
import { columnNames, createStatements, PRODUCTS, type Product } from '../fixtureSchemas';
import { EVERY_TYPE_CHANNEL_IDS, FIXTURE_PASSWORDS, FIXTURE_TIME, NEW_API_CHANNEL_TYPES, ONE_API_CHANNEL_TYPES } from './values';

const here = dirname(fileURLToPath(import.meta.url));
export const fixturePath = (product: Product) => join(here, `${product}.sqlite`);

/** A 48-character token key, fixed so the fixtures are reproducible. */
const tokenKey = (seed: string) => (seed.repeat(48 / seed.length + 1)).slice(0, 48);

/** Go's bcrypt writes `$2a$`; bcryptjs `$2b$` (the same algorithm): the fixtures carry Go's prefix. */
const goBcrypt = (password: string) => bcrypt.hashSync(password, 10).replace(/^\$2b\$/, '$2a$');

/** A key in the shape its type writes (Baidu's two parts, Spark's three), unique to the type. */
function fixtureKey(type: number, newApi: boolean): string {
  if (type === 15) return `fixture-ak-${type}|fixture-sk-${type}`;
  if (type === 18) return `fixture-app-${type}|fixture-secret-${type}|fixture-key-${type}`;
  // new-api's AWS keeps AK|SK|region; one-api's AWS Claude the same three in one key
  if (type === 33) return `fixture-ak-${type}|fixture-sk-${type}|us-east-1`;
  return `fixture-key-${newApi ? 'n' : 'o'}-${type}`;
}

/** A never-tested, never-used channel's other columns, on the vendor's default base URL. */
const UNUSED_CHANNEL_FIELDS = { weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: '', other: '', balance: 0, balance_updated_time: 0, group: 'default', used_quota: 0, model_mapping: '' };

/** One enabled channel of each of the product's types that `covered` (the named channels' types) lacks. */
function everyTypeChannels(newApi: boolean, covered: ReadonlySet<number>) {
  const types = newApi ? Object.entries(NEW_API_CHANNEL_TYPES).map(([type, { name }]) => [Number(type), name] as const) : Object.entries(ONE_API_CHANNEL_TYPES).map(([type, name]) => [Number(type), name] as const);
  return types
    .filter(([type]) => !covered.has(type))
    .map(([type, name]) => ({
      id: EVERY_TYPE_CHANNEL_IDS + type,
      type,
      key: fixtureKey(type, newApi),
      status: 1,
      name: `type ${type} ${name}`,
      models: `fixture-model-${type}`,
      ...UNUSED_CHANNEL_FIELDS,
    }));
}

function rows(product: Product) {
  const newApi = product === 'new-api-latest';
  const latest = product !== 'one-api-v0.5.3';
  const users = [
    { id: 1, username: 'root', password: goBcrypt(FIXTURE_PASSWORDS.root), display_name: 'Root User', role: 100, status: 1, email: 'root@example.com', github_id: '', wechat_id: '', access_token: '0123456789abcdef0123456789abcdef', quota: 500_000_000, used_quota: 1_500, request_count: 3, group: 'default', aff_code: 'r00t', inviter_id: 0 },
    { id: 2, username: 'alice', password: goBcrypt(FIXTURE_PASSWORDS.alice), display_name: 'Alice', role: 1, status: 1, email: 'alice@example.com', github_id: 'alice-gh', wechat_id: '', access_token: 'fedcba9876543210fedcba9876543210', quota: 2_000_000, used_quota: 150_000, request_count: 12, group: 'vip', aff_code: 'al1c', inviter_id: 1 },
    { id: 3, username: 'bob', password: goBcrypt(FIXTURE_PASSWORDS.bob), display_name: 'Bob', role: 10, status: 1, email: '', github_id: '', wechat_id: 'bob-wx', access_token: null, quota: 75_000, used_quota: 7, request_count: 1, group: 'default', aff_code: 'b0bb', inviter_id: 0 },
    { id: 5, username: 'carol', password: goBcrypt(FIXTURE_PASSWORDS.carol), display_name: 'Carol', role: 1, status: 2, email: 'carol@example.com', github_id: '', wechat_id: '', access_token: null, quota: 1_234_567, used_quota: 0, request_count: 0, group: 'default', aff_code: null, inviter_id: 2 },
    ...(newApi
      ? [{ id: 6, username: 'dave', password: goBcrypt('dave-password-1'), display_name: 'Dave', role: 1, status: 1, email: '', github_id: '', wechat_id: '', access_token: null, quota: 999, used_quota: 1, request_count: 1, group: 'default', aff_code: 'dav3', inviter_id: 0, deleted_at: '2025-01-02 03:04:05' }]
      : []),
  ].map((user) => (newApi ? { aff_count: user.id === 1 ? 1 : 0, aff_quota: 0, aff_history: 0, linux_do_id: user.id === 2 ? 'ld-alice' : '', remark: user.id === 3 ? 'ops' : null, deleted_at: null, ...user } : latest ? { lark_id: user.id === 3 ? 'lark-bob' : '', oidc_id: '', ...user } : user));

  const tokens = [
    { id: 1, user_id: 2, key: tokenKey('AliceChatApp'), status: 1, name: 'chat app', created_time: FIXTURE_TIME, accessed_time: FIXTURE_TIME, expired_time: -1, remain_quota: 1_000_000, unlimited_quota: 0, used_quota: 50_000 },
    { id: 2, user_id: 2, key: tokenKey('AliceScript7'), status: 1, name: 'script', created_time: FIXTURE_TIME, accessed_time: FIXTURE_TIME, expired_time: -1, remain_quota: 0, unlimited_quota: 1, used_quota: 0 },
    { id: 3, user_id: 3, key: tokenKey('BobOldKey999'), status: 3, name: 'expired', created_time: FIXTURE_TIME, accessed_time: FIXTURE_TIME, expired_time: FIXTURE_TIME + 86_400, remain_quota: 5_000, unlimited_quota: 0, used_quota: 10 },
    { id: 4, user_id: 1, key: tokenKey('RootKey12345'), status: 1, name: 'root key', created_time: FIXTURE_TIME, accessed_time: FIXTURE_TIME, expired_time: -1, remain_quota: 42, unlimited_quota: 0, used_quota: 0 },
    ...(newApi ? [{ id: 7, user_id: 2, key: tokenKey('AliceGone000'), status: 1, name: 'deleted', created_time: FIXTURE_TIME, accessed_time: FIXTURE_TIME, expired_time: -1, remain_quota: 300, unlimited_quota: 0, used_quota: 0, deleted_at: '2025-01-02 03:04:05' }] : []),
  ].map((token) => {
    if (newApi) return { model_limits_enabled: token.id === 1 ? 1 : 0, model_limits: token.id === 1 ? 'gpt-4,gpt-3.5-turbo' : '', allow_ips: token.id === 1 ? '127.0.0.1\n10.0.0.0/8' : '', group: token.id === 2 ? 'vip' : '', deleted_at: null, ...token };
    if (latest) return { models: token.id === 1 ? 'gpt-4,gpt-3.5-turbo' : null, subnet: token.id === 1 ? '127.0.0.0/8' : '', ...token };
    return token;
  });

  const unrelayed = newApi ? { type: 2, name: 'midjourney' } : { type: 34, name: 'coze' };
  const deepSeekType = newApi ? 43 : 36;
  // Cloudflare: new-api's 39 keeps the account id in `other`, one-api's 37 in `config` (user_id)
  const cloudflare = newApi ? { type: 39, other: 'cf-account-fixture' } : { type: 37, other: '', config: '{"user_id":"cf-account-fixture"}' };
  const named = [
    { id: 1, type: 1, key: 'sk-good', status: 1, name: 'openai main', weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: 'http://127.0.0.1:9', other: '', balance: 12.5, balance_updated_time: FIXTURE_TIME, models: 'gpt-4,gpt-3.5-turbo', group: 'default,vip', used_quota: 3_000_000, model_mapping: '' },
    { id: 2, type: 14, key: 'sk-ant-fixture', status: 3, name: 'claude', weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: '', other: '', balance: 0, balance_updated_time: 0, models: 'claude-2', group: 'default', used_quota: 0, model_mapping: '' },
    { id: 3, type: 3, key: 'azure-fixture-key', status: 2, name: 'azure', weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: 'https://example.openai.azure.com', other: '2023-05-15', balance: 0, balance_updated_time: 0, models: 'gpt-35-turbo', group: 'default', used_quota: 0, model_mapping: '{"gpt-3.5-turbo":"gpt-35-turbo"}' },
    { id: 4, type: unrelayed.type, key: 'unrelayed-fixture-key', status: 1, name: unrelayed.name, weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: '', other: '', balance: 0, balance_updated_time: 0, models: 'mj-chat', group: 'default', used_quota: 0, model_mapping: '' },
    ...(latest ? [{ id: 5, type: deepSeekType, key: 'sk-deepseek-fixture', status: 1, name: 'deepseek', weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: '', other: '', balance: 0, balance_updated_time: 0, models: 'deepseek-chat', group: 'default', used_quota: 0, model_mapping: '' }] : []),
    // new-api's multi-key channel: its keys one per line, the second set aside automatically, taken in turn
    ...(newApi
      ? [
          {
            id: 6,
            type: 1,
            key: 'sk-multi-fixture-one\nsk-multi-fixture-two\nsk-multi-fixture-three',
            status: 1,
            name: 'openai pool',
            weight: 0,
            created_time: FIXTURE_TIME,
            test_time: 0,
            response_time: 0,
            base_url: '',
            other: '',
            balance: 0,
            balance_updated_time: 0,
            models: 'gpt-4o-mini',
            group: 'default',
            used_quota: 0,
            model_mapping: '',
            channel_info: JSON.stringify({
              is_multi_key: true,
              multi_key_size: 3,
              multi_key_status_list: { 1: 3 },
              multi_key_disabled_reason: { 1: 'Incorrect API key provided' },
              multi_key_polling_index: 0,
              multi_key_mode: 'polling',
            }),
          },
        ]
      : []),
    ...(latest ? [{ id: 7, key: 'cf-fixture-token', status: 1, name: 'cloudflare', weight: 0, created_time: FIXTURE_TIME, test_time: 0, response_time: 0, base_url: '', balance: 0, balance_updated_time: 0, models: '@cf/meta/llama-3.1-8b-instruct', group: 'default', used_quota: 0, model_mapping: '', ...cloudflare }] : []),
  ];
  // the latest schemas hold a channel of every type their product numbers
  const channels = [...named, ...(latest ? everyTypeChannels(newApi, new Set(named.map((channel) => channel.type))) : [])].map((channel) => {
    if (newApi) return { priority: channel.id === 1 ? 5 : 0, auto_ban: 1, tag: channel.id === 1 ? 'main' : null, param_override: channel.id === 3 ? '{"temperature":0}' : null, ...channel };
    if (latest) return { priority: channel.id === 1 ? 5 : 0, config: channel.id === 3 ? '{"region":"eastus"}' : '', system_prompt: null, ...channel };
    return channel;
  });

  const abilities = channels.flatMap((channel) =>
    channel.group.split(',').flatMap((group) => channel.models.split(',').map((model) => ({ group, model, channel_id: channel.id, enabled: channel.status === 1 ? 1 : 0, ...(latest ? { priority: (channel as { priority?: number }).priority ?? 0 } : {}) }))),
  );

  const redemptions = [
    { id: 1, user_id: 1, key: '11111111111111111111111111111111', status: 1, name: 'gift', quota: 100_000, created_time: FIXTURE_TIME, redeemed_time: 0 },
    { id: 2, user_id: 1, key: '22222222222222222222222222222222', status: 3, name: 'spent', quota: 50_000, created_time: FIXTURE_TIME, redeemed_time: FIXTURE_TIME + 60 },
  ].map((code) => (newApi ? { used_user_id: code.status === 3 ? 2 : 0, deleted_at: null, expired_time: 0, ...code } : code));

  const options = [
    { key: 'SystemName', value: 'Our One API' },
    { key: 'QuotaPerUnit', value: '500000' },
    { key: 'RegisterEnabled', value: 'false' },
    { key: 'ModelRatio', value: '{"gpt-4":15,"gpt-3.5-turbo":0.75,"our-fine-tune":3}' },
    { key: 'GroupRatio', value: '{"default":1,"vip":1,"svip":1}' },
    { key: 'SMTPToken', value: 'smtp-secret-fixture' },
    { key: 'Logo', value: 'javascript:alert(1)' },
    { key: 'FileUploadPermission', value: '0' },
    ...(newApi ? [{ key: 'DrawingEnabled', value: 'true' }, { key: 'TopupGroupRatio', value: '{"default":1}' }] : []),
    ...(product === 'one-api-latest' ? [{ key: 'MessagePusherAddress', value: '' }] : []),
  ];

  const logs = [
    { id: 1, user_id: 2, created_at: FIXTURE_TIME + 10, type: 1, content: 'top-up 100000', username: 'alice', token_name: '', model_name: '', quota: 0, prompt_tokens: 0, completion_tokens: 0 },
    { id: 2, user_id: 2, created_at: FIXTURE_TIME + 20, type: 2, content: 'model ratio 15', username: 'alice', token_name: 'chat app', model_name: 'gpt-4', quota: 1_000, prompt_tokens: 20, completion_tokens: 30 },
    { id: 3, user_id: 1, created_at: FIXTURE_TIME + 30, type: 2, content: 'model ratio 0.75', username: 'root', token_name: 'root key', model_name: 'gpt-3.5-turbo', quota: 500, prompt_tokens: 100, completion_tokens: 200 },
  ].map((log) => {
    if (newApi) return { use_time: log.type === 2 ? 2 : 0, is_stream: log.id === 3 ? 1 : 0, channel_id: log.type === 2 ? 1 : 0, token_id: log.id === 2 ? 1 : log.id === 3 ? 4 : 0, group: 'default', ip: '', other: '', ...log };
    if (latest) return { channel_id: log.type === 2 ? 1 : 0, request_id: '', elapsed_time: log.type === 2 ? 1_234 : 0, is_stream: log.id === 3 ? 1 : 0, system_prompt_reset: 0, ...log };
    return log;
  });

  return { users, tokens, channels, abilities, redemptions, options, logs };
}

export function writeFixture(product: Product, path: string, extraConsumeLogs = 0): void {
  if (existsSync(path)) rmSync(path);
  const database = new SQLite(path);
  for (const statement of createStatements(product, 'sqlite')) database.exec(statement);
  const data = rows(product);
  const insert = database.transaction(() => {
    for (const [table, tableRows] of Object.entries(data)) {
      const known = columnNames(product, table);
      for (const row of tableRows as Array<Record<string, unknown>>) {
        const entries = Object.entries(row).filter(([column]) => known.has(column));
        const missing = [...Object.keys(row)].filter((column) => !known.has(column));
        if (missing.length) throw new Error(`${product}.${table} has no column ${missing.join(', ')}`);
        database.prepare(`insert into "${table}" (${entries.map(([column]) => `"${column}"`).join(', ')}) values (${entries.map(() => '?').join(', ')})`).run(...entries.map(([, value]) => value));
      }
    }
    if (extraConsumeLogs > 0) {
      const statement = database.prepare(
        'insert into logs (user_id, created_at, type, content, username, token_name, model_name, quota, prompt_tokens, completion_tokens, channel_id, elapsed_time, is_stream) values (?, ?, 2, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)',
      );
      const models = ['gpt-4', 'gpt-3.5-turbo'];
      for (let index = 0; index < extraConsumeLogs; index += 1) {
        const alice = index % 3 !== 0;
        statement.run(alice ? 2 : 1, FIXTURE_TIME - 86_400 * 90 + index * 77, 'model ratio 15', alice ? 'alice' : 'root', alice ? 'chat app' : 'root key', models[index % 2], 10 + (index % 500), 5 + (index % 40), 7 + (index % 60), 200 + (index % 5000), index % 4 === 0 ? 1 : 0);
      }
    }
  });
  insert();
  database.close();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const logsAt = process.argv.indexOf('--logs');
  if (logsAt >= 0) {
    writeFixture('one-api-latest', process.argv[logsAt + 2], Number(process.argv[logsAt + 1]));
  } else {
    for (const product of PRODUCTS) writeFixture(product, fixturePath(product));
  }
}
