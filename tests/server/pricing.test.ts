// GET /api/pricing: any signed-in user reads the models of their own group in
// US$ per million tokens, the group's ratio applied, with cache prices where
// the catalog has them and the operator's ModelRatio taking precedence; models
// without a price and models of other groups are not listed.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asBrowser, buildTestApp, login, register, ROOT_PASSWORD } from '../support/app';

/** A chat model on an OpenAI channel: its own chat API and the three the gateway translates into chat. */
const CHAT = ['chat', 'responses', 'messages', 'gemini'];

let app: FastifyInstance;
let root: string;
let user: string;

const prices = async (cookie: string | undefined) => {
  const response = await asBrowser(app, cookie, { method: 'GET', url: '/api/pricing' });
  return { status: response.statusCode, body: response.json() };
};

beforeAll(async () => {
  app = await buildTestApp();
  root = await login(app, 'root', ROOT_PASSWORD);
  await register(app, 'pricing-user');
  user = await login(app, 'pricing-user', 'password-123');
  const admin = (method: 'POST' | 'PUT', url: string, payload: unknown) =>
    asBrowser(app, root, { method, url, payload: payload as never }).then((response) => response.json());
  expect(
    (
      await admin('POST', '/api/channel/', {
        name: 'default models',
        type: 1,
        key: 'sk-a',
        models: 'gpt-4o,claude-sonnet-4-5,gpt-3.5-turbo,house-model-without-price,text-embedding-3-small',
        group: 'default',
      })
    ).success,
  ).toBe(true);
  expect(
    (await admin('POST', '/api/channel/', { name: 'vip models', type: 1, key: 'sk-b', models: 'gpt-4o-mini', group: 'vip' })).success,
  ).toBe(true);
  expect((await admin('PUT', '/api/option/', { key: 'GroupRatio', value: JSON.stringify({ default: 1, vip: 2 }) })).success).toBe(true);
});
afterAll(async () => {
  await app.close();
});

describe('GET /api/pricing', () => {
  it('lists the models of the caller group in dollars per million tokens, from the catalog', async () => {
    const { status, body } = await prices(user);
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.data).toEqual([
      { model: 'claude-sonnet-4-5', input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, source: 'catalog', endpoints: CHAT },
      { model: 'gpt-3.5-turbo', input: 0.5, output: 1.5, source: 'catalog', endpoints: CHAT },
      { model: 'gpt-4o', input: 2.5, output: 10, cache_read: 1.25, source: 'catalog', endpoints: CHAT },
      { model: 'text-embedding-3-small', input: 0.02, output: 0.02, source: 'catalog', endpoints: ['embeddings'] },
    ]);
  });

  it("applies the group ratio and the operator's own model ratio", async () => {
    await app.ctx.db.updateTable('users').set({ group: 'vip' }).where('username', '=', 'pricing-user').execute();
    app.ctx.relayCache.clear();
    const vip = await login(app, 'pricing-user', 'password-123');
    expect((await prices(vip)).body.data).toEqual([
      { model: 'gpt-4o-mini', input: 0.3, output: 1.2, cache_read: 0.15, source: 'catalog', endpoints: CHAT },
    ]);

    const saved = await asBrowser(app, root, {
      method: 'PUT',
      url: '/api/option/',
      payload: { key: 'ModelRatio', value: JSON.stringify({ 'gpt-4o-mini': 1 }) },
    });
    expect(saved.json().success).toBe(true);
    // ratio 1 is US$2 per million input tokens; the vip group pays double
    expect((await prices(vip)).body.data).toEqual([
      { model: 'gpt-4o-mini', input: 4, output: 16, cache_read: 2, source: 'option', endpoints: CHAT },
    ]);
  });

  it('is not open to guests', async () => {
    expect((await prices(undefined)).status).toBe(401);
  });
});

// PublicPricingEnabled: visitors read the default group's list; signed-in callers still read their own group's.
describe('public prices', () => {
  const publish = async (on: boolean) => {
    const saved = await asBrowser(app, root, {
      method: 'PUT',
      url: '/api/option/',
      payload: { key: 'PublicPricingEnabled', value: String(on) },
    });
    expect(saved.json().success).toBe(true);
  };
  const status = async () => (await asBrowser(app, undefined, { method: 'GET', url: '/api/status' })).json().data;

  it('answers a visitor 401 while off (the default), and says so in the status', async () => {
    expect((await status()).public_pricing).toBe(false);
    const { status: code, body } = await prices(undefined);
    expect(code).toBe(401);
    expect(body).toMatchObject({ success: false, code: 'not_logged_in' });
  });

  it("answers a visitor the default group's models with their endpoints once on, and 401 again once off", async () => {
    await publish(true);
    try {
      expect((await status()).public_pricing).toBe(true);
      const { status: code, body } = await prices(undefined);
      expect(code).toBe(200);
      const listed = body.data as Array<{ model: string; endpoints: string[] }>;
      // the default group's channel only: the vip channel's gpt-4o-mini is not listed
      expect(listed.map((price) => price.model)).toEqual(['claude-sonnet-4-5', 'gpt-3.5-turbo', 'gpt-4o', 'text-embedding-3-small']);
      expect(Object.fromEntries(listed.map((price) => [price.model, price.endpoints.join(' · ')]))).toMatchObject({
        'gpt-4o': 'chat · responses · messages · gemini',
        'text-embedding-3-small': 'embeddings',
      });
      // a signed-in caller still needs a valid session: a stale cookie is not read as a visitor
      expect((await prices('session=stale')).status).toBe(401);
    } finally {
      await publish(false);
    }
    expect((await prices(undefined)).status).toBe(401);
  });
});

// GET /api/pricing/defaults: what the settings' price table shows as each
// model's default and resets a row to.
describe('GET /api/pricing/defaults', () => {
  const defaults = async (cookie: string) => {
    const response = await asBrowser(app, cookie, { method: 'GET', url: '/api/pricing/defaults' });
    return { status: response.statusCode, body: response.json() };
  };

  it("lists the catalog's models, the built-in table's and the operator's, each with its default ratios", async () => {
    const saved = await asBrowser(app, root, {
      method: 'PUT',
      url: '/api/option/',
      payload: { key: 'CacheWriteRatio', value: JSON.stringify({ 'house-model': 2 }) },
    });
    expect(saved.json().success).toBe(true);
    const { status, body } = await defaults(root);
    expect(status).toBe(200);
    const byModel = new Map((body.data as Array<{ model: string }>).map((row) => [row.model, row]));
    // the catalog's $3 / $15 / $0.30 / $3.75 as ratios (1 = $2 per million)
    expect(byModel.get('claude-sonnet-4-5')).toEqual({
      model: 'claude-sonnet-4-5',
      model_ratio: 1.5,
      completion_ratio: 5,
      cache_read_ratio: 0.1,
      cache_write_ratio: 1.25,
      served: true,
    });
    // the built-in table's price, whatever the ModelRatio option says now
    expect(byModel.get('qwen-max')).toEqual({ model: 'qwen-max', model_ratio: 0.8, completion_ratio: 4 });
    // named only by an option: listed, with no default price
    expect(byModel.get('house-model')).toEqual({ model: 'house-model', completion_ratio: 1 });
    // served by a channel but priced nowhere: listed, so the operator can price it
    expect(byModel.get('house-model-without-price')).toEqual({ model: 'house-model-without-price', completion_ratio: 1, served: true });
    // served: what the channels of every group list, and nothing else
    expect((body.data as Array<{ model: string; served?: boolean }>).filter((row) => row.served).map((row) => row.model)).toEqual([
      'claude-sonnet-4-5',
      'gpt-3.5-turbo',
      'gpt-4o',
      'gpt-4o-mini',
      'house-model-without-price',
      'text-embedding-3-small',
    ]);
    const names = (body.data as Array<{ model: string }>).map((row) => row.model);
    expect(names).toEqual([...names].sort());
  });

  it('is for admins only', async () => {
    expect((await defaults(user)).body).toEqual({ success: false, message: 'insufficient permission', code: 'permission_denied' });
  });
});

// A cache price the operator sets shows on the users' price list too.
describe('cache overrides on GET /api/pricing', () => {
  it('prices cached input at the CacheReadRatio entry', async () => {
    await app.ctx.db.updateTable('users').set({ group: 'default' }).where('username', '=', 'pricing-user').execute();
    app.ctx.relayCache.clear();
    const member = await login(app, 'pricing-user', 'password-123');
    const saved = await asBrowser(app, root, {
      method: 'PUT',
      url: '/api/option/',
      payload: { key: 'CacheReadRatio', value: JSON.stringify({ 'gpt-3.5-turbo': 0.2 }) },
    });
    expect(saved.json().success).toBe(true);
    const turbo = ((await prices(member)).body.data as Array<{ model: string }>).find((price) => price.model === 'gpt-3.5-turbo');
    expect(turbo).toEqual({ model: 'gpt-3.5-turbo', input: 0.5, output: 1.5, cache_read: 0.1, source: 'catalog', endpoints: CHAT });
  });
});
