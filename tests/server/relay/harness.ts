// A listening gateway with the OpenAI emulator as its upstream, signed in as
// root with one limited API key: what every relay suite starts from.
import type { FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Config, DatabaseConfig } from '../../../server/config';
import type { BuildOptions } from '../../../server/app';
import { DEFAULT_GROUP_RATIO, DEFAULT_MODEL_RATIO } from '../../../common/options';
import { bookkeepingFor } from '../../../server/billing/bookkeeping';
import { cachedPromptRatioFor, completionRatioFor, computeQuota, lookupPrice } from '../../../server/billing/prices';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../../support/app';
import type { DatabaseTarget } from '../../support/databases';
import { startOpenAIEmulator, type OpenAIEmulator } from '../../support/openaiEmulator';

export interface RelayHarness {
  app: FastifyInstance;
  emulator: OpenAIEmulator;
  /** http://127.0.0.1:<port> of the gateway */
  baseUrl: string;
  apiKey: string;
  tokenId: number;
  admin(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<any>;
  /** A Custom (OpenAI-protocol) channel pointed at the emulator; returns its id. */
  addChannel(fields: Record<string, unknown>): Promise<number>;
  /** A body object is sent as JSON; a string is sent as it is (JSON written by hand: a 100,000-digit number). */
  post(path: string, body: unknown, key?: string, headers?: Record<string, string>): Promise<Response>;
  /** Waits until the relay has settled and logged every answered request. */
  settled(): Promise<void>;
  /** Settles first, then reads root's and a token's (default: the harness key's) balances. */
  balances(
    tokenId?: number,
  ): Promise<{ user: { quota: number; used_quota: number; request_count: number }; token: { remain_quota: number; used_quota: number } }>;
  close(): Promise<void>;
}

export const DEFAULT_MODELS = 'gpt-4,gpt-3.5-turbo,text-embedding-ada-002';

/** On in-memory SQLite unless a database is given. */
export async function startRelayHarness(
  database?: DatabaseConfig,
  overrides: Partial<Config> = {},
  buildOptions?: BuildOptions,
): Promise<RelayHarness> {
  const emulator = await startOpenAIEmulator();
  const app = await buildTestApp(overrides, database, buildOptions);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const root = await login(app, 'root', ROOT_PASSWORD);
  const admin: RelayHarness['admin'] = (method, url, payload) =>
    asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
  const token = await admin('POST', '/api/token/', { name: 'relay', remain_quota: 10_000_000 });
  const apiKey = `sk-${token.data.key}`;
  const tokenId = token.data.id as number;
  const settled = () => bookkeepingFor(app.ctx, app.log).idle();

  return {
    app,
    emulator,
    baseUrl,
    apiKey,
    tokenId,
    admin,
    async addChannel(fields) {
      const created = await admin('POST', '/api/channel/', {
        type: 8,
        base_url: emulator.baseUrl,
        models: DEFAULT_MODELS,
        group: 'default',
        ...fields,
      });
      if (!created.success) throw new Error(created.message);
      return created.data.ids[0] as number;
    },
    post: (path, body, key = apiKey, headers = {}) =>
      fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    settled,
    async balances(id = tokenId) {
      await settled();
      const user = await app.ctx.db
        .selectFrom('users')
        .select(['quota', 'used_quota', 'request_count'])
        .where('username', '=', 'root')
        .executeTakeFirstOrThrow();
      const tokenRow = await app.ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'used_quota'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return { user, token: tokenRow };
    },
    async close() {
      await app.close();
      await emulator.close();
    },
  };
}

/** A harness for the enclosing suite: started before its tests, reset before each, closed after; read it inside a test. */
export function useRelayHarness(): () => RelayHarness {
  let harness: RelayHarness | undefined;
  beforeAll(async () => {
    harness = await startRelayHarness();
  });
  afterAll(() => harness?.close());
  beforeEach(() => resetRelay(harness!));
  return () => harness!;
}

/** Clears channels (and their abilities) and resets the options suites change. */
export async function resetRelay(harness: RelayHarness): Promise<void> {
  await harness.app.ctx.db.deleteFrom('abilities').execute();
  await harness.app.ctx.db.deleteFrom('channels').execute();
  await harness.app.ctx.options.set('RetryTimes', '0');
}

/** The newest consume log row. */
export function lastConsumeLog(harness: RelayHarness) {
  return harness.app.ctx.db.selectFrom('logs').selectAll().where('type', '=', 2).orderBy('id', 'desc').executeTakeFirstOrThrow();
}

export type Balances = Awaited<ReturnType<RelayHarness['balances']>>;

/** The balances moved by exactly `amount` since `before`; the channel's used quota and the newest consume log say the same. */
export async function expectBilled(
  harness: RelayHarness,
  before: Balances,
  channelId: number,
  model: string,
  amount: number,
  log: Record<string, unknown> = {},
): Promise<void> {
  expect(amount).toBeGreaterThan(0);
  const after = await harness.balances();
  expect(before.user.quota - after.user.quota).toBe(amount);
  expect(after.user.used_quota - before.user.used_quota).toBe(amount);
  expect(before.token.remain_quota - after.token.remain_quota).toBe(amount);
  const channel = await harness.app.ctx.db
    .selectFrom('channels')
    .select('used_quota')
    .where('id', '=', channelId)
    .executeTakeFirstOrThrow();
  expect(channel.used_quota).toBe(amount);
  expect(await lastConsumeLog(harness)).toMatchObject({ quota: amount, channel_id: channelId, model_name: model, ...log });
}

/** Several calls billed at `total` together: the user's and token's balances and the channel's used quota moved by it. */
export async function expectBilledTotal(harness: RelayHarness, before: Balances, channelId: number, total: number): Promise<void> {
  const after = await harness.balances();
  expect(before.user.quota - after.user.quota).toBe(total);
  expect(before.token.remain_quota - after.token.remain_quota).toBe(total);
  const channel = await harness.app.ctx.db
    .selectFrom('channels')
    .select('used_quota')
    .where('id', '=', channelId)
    .executeTakeFirstOrThrow();
  expect(channel.used_quota).toBe(total);
}

/** Several calls billed at their own usage: the balances and the channel moved by `total`, the newest log is the last call's. */
export async function expectBilledInTotal(
  harness: RelayHarness,
  before: Balances,
  channelId: number,
  total: number,
  lastLog: Record<string, unknown>,
): Promise<void> {
  await expectBilledTotal(harness, before, channelId, total);
  expect(await lastConsumeLog(harness)).toMatchObject(lastLog);
}

/** How many consume logs there are. */
export const consumeLogCount = async (harness: RelayHarness) =>
  (await harness.app.ctx.db.selectFrom('logs').select('id').where('type', '=', 2).execute()).length;

/** The consume log written after `countBefore` of them (a stream the client left is settled once the gateway sees it gone). */
export async function nextConsumeLog(harness: RelayHarness, countBefore: number) {
  for (let wait = 0; wait < 100; wait += 1) {
    await harness.settled();
    if ((await consumeLogCount(harness)) > countBefore) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return lastConsumeLog(harness);
}

/**
 * After a client left mid-stream: waits until the gateway settled (a consume log
 * beyond `logsBefore`), then checks the balances moved by exactly the logged
 * charge and nothing stays held. Resolves to the log.
 */
export async function expectSettledAfterLeaving(harness: RelayHarness, before: Balances, logsBefore: number) {
  const log = await nextConsumeLog(harness, logsBefore);
  const after = await harness.balances();
  expect(before.user.quota - after.user.quota).toBe(log.quota);
  expect(before.token.remain_quota - after.token.remain_quota).toBe(log.quota);
  const held = await harness.app.ctx.db.selectFrom('users').select('held_quota').where('username', '=', 'root').executeTakeFirstOrThrow();
  expect(Number(held.held_quota)).toBe(0);
  return log;
}

/** A model's ratio on a fresh install: the ModelRatio option's default, else the price catalog's. */
export function defaultModelRatio(model: string): number {
  const price = lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO);
  if (!price.known) throw new Error(`${model} has no default price`);
  return price.modelRatio;
}

/** What a call of a default-priced model costs at this usage (the group ratio 1). */
export const chargeFor = (model: string, usage: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number }) =>
  computeQuota({
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedPromptTokens: usage.cachedPromptTokens ?? 0,
    cachedPromptRatio: cachedPromptRatioFor(model),
    ratio: defaultModelRatio(model),
    completionRatio: completionRatioFor(model),
  });

/** The prices the size-honest suites set, so their figures do not move with the catalog. */
export const HONEST_MODEL_RATIO = {
  'gpt-4o': 1.25,
  'gpt-3.5-turbo-instruct': 3,
  'text-embedding-3-small': 1,
  'claude-sonnet-4-5': 1.5,
  'gemini-2.5-flash': 0.15,
  'jina-reranker-v2-base-multilingual': 0.01,
  'tts-1': 7.5,
  'gpt-4o-mini-tts': 0.3,
  'dall-e-2': 8,
  'whisper-1': 15,
  'gpt-4o-transcribe': 1.25,
};

/** Those prices, and an OpenAI, an Anthropic, a Gemini and a Jina channel at the size-honest upstream (tests/support/emulators/sizeHonest.ts). */
export async function addSizeHonestChannels(harness: RelayHarness, baseUrl: string): Promise<void> {
  await resetRelay(harness);
  await harness.app.ctx.options.set('ModelRatio', JSON.stringify(HONEST_MODEL_RATIO));
  const channel = async (type: number, models: string) => {
    const created = await harness.admin('POST', '/api/channel/', {
      type,
      name: `honest-${type}`,
      key: 'sk-honest',
      base_url: baseUrl,
      models,
      group: 'default',
    });
    expect(created.success, created.message).toBe(true);
  };
  await channel(1, 'gpt-4o,gpt-3.5-turbo-instruct,text-embedding-3-small,tts-1,gpt-4o-mini-tts,dall-e-2,whisper-1,gpt-4o-transcribe');
  await channel(14, 'claude-sonnet-4-5');
  await channel(24, 'gemini-2.5-flash');
  // Jina AI: rerank in Jina's shape
  await channel(52, 'jina-reranker-v2-base-multilingual');
}

/** The sum of a key's consume logs. */
export async function loggedSpend(harness: RelayHarness, tokenId: number): Promise<number> {
  const logged = await harness.app.ctx.db
    .selectFrom('logs')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('sum'))
    .where('type', '=', 2)
    .where('token_id', '=', tokenId)
    .executeTakeFirstOrThrow();
  return Number(logged.sum);
}

/**
 * A database that several gateways can share: a fresh one on PostgreSQL or MySQL, a file in a folder of its own on
 * SQLite (as two processes on one machine would share it). `drop` removes it.
 */
export async function sharedDatabase(target: DatabaseTarget): Promise<{ config: DatabaseConfig; drop(): Promise<void> }> {
  if (target.name !== 'sqlite') {
    const database = await target.create();
    return { config: database.config, drop: () => database.drop() };
  }
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-shared-'));
  return {
    config: { dialect: 'sqlite', path: join(folder, 'shared.db') },
    drop: () => Promise.resolve(rmSync(folder, { recursive: true, force: true })),
  };
}

/** Starts `app` listening on a free loopback port; its base URL. */
export async function listenOnFreePort(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}
