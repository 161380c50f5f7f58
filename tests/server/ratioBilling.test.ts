// A GroupRatio saved through PUT /api/option/ prices the very next relayed
// request: no restart, no cache to wait for.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPTION_SPECS } from '../../common/options';
import { computeQuota } from '../../server/billing/prices';
import { resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

let harness: RelayHarness;
beforeAll(async () => {
  harness = await startRelayHarness();
});
afterAll(() => harness.close());
beforeEach(() => resetRelay(harness));

async function chargeOfOneRequest(): Promise<number> {
  const before = await harness.balances();
  const response = await harness.post('/v1/chat/completions', {
    model: 'gpt-4',
    messages: [{ role: 'user', content: 'hello there friend' }],
  });
  expect(response.status).toBe(200);
  await response.text();
  const after = await harness.balances();
  return before.user.quota - after.user.quota;
}

describe('ratios take effect at once', () => {
  it('bills the next request with a changed GroupRatio, and ModelRatio likewise', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good' });
    // the emulator answers 3 prompt and 5 completion tokens; gpt-4 costs 15 with completions at 2x
    const base = computeQuota({ promptTokens: 3, completionTokens: 5, ratio: 15, completionRatio: 2 });
    expect(await chargeOfOneRequest()).toBe(base);

    expect(await harness.admin('PUT', '/api/option/', { key: 'GroupRatio', value: '{"default":3,"vip":1,"svip":1}' })).toEqual({
      success: true,
      message: '',
    });
    expect(await chargeOfOneRequest()).toBe(base * 3);

    const refused = await harness.admin('PUT', '/api/option/', { key: 'GroupRatio', value: '{"default":0.5,' });
    expect(refused).toEqual({ success: false, message: 'group ratio is not a valid JSON string' });
    expect(await chargeOfOneRequest()).toBe(base * 3);

    const modelRatio = { ...harness.app.ctx.options.json('ModelRatio'), 'gpt-4': 30 };
    expect((await harness.admin('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify(modelRatio) })).success).toBe(true);
    expect(await chargeOfOneRequest()).toBe(base * 6);
  });
});

// Today's models relay out of the box with the default ModelRatio, billed
// exactly: prompt x ratio + completion x completionRatio x ratio, the cached
// part of the prompt at its own share. The emulator counts one token per word.
describe('default prices of current models, through the relay', () => {
  const NEW_MODELS = 'gpt-4o-mini,gpt-4.1-nano,o4-mini,deepseek-chat,claude-sonnet-4-20250514,text-embedding-3-small,acme-unpriced-1';
  const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(' ');
  beforeEach(async () => {
    // the suite above leaves its own ratios behind: start from the shipped defaults
    for (const key of ['ModelRatio', 'GroupRatio', 'CacheReadRatio'] as const)
      await harness.app.ctx.options.set(key, OPTION_SPECS[key].default);
  });

  async function chargeOf(path: string, body: Record<string, unknown>): Promise<{ charge: number; text: string }> {
    const before = await harness.balances();
    const response = await harness.post(path, body);
    expect(response.status).toBe(200);
    const text = await response.text();
    const after = await harness.balances();
    return { charge: before.user.quota - after.user.quota, text };
  }

  it('bills gpt-4o-mini at $0.15 / $0.60 per 1M with cached input at half price, plain and streamed', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: NEW_MODELS });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: words(1000) }], emulator: { chunks: 50, cached_tokens: 400 } };
    // (600 uncached + 400 x 0.5 + 50 x 4) x 0.075 = 75
    const expected = computeQuota({
      promptTokens: 1000,
      cachedPromptTokens: 400,
      completionTokens: 50,
      ratio: 0.075,
      completionRatio: 4,
      cachedPromptRatio: 0.5,
    });
    expect(expected).toBe(75);
    expect((await chargeOf('/v1/chat/completions', body)).charge).toBe(expected);
    expect((await chargeOf('/v1/chat/completions', { ...body, stream: true })).charge).toBe(expected);
  });

  it("bills cached input at the CacheReadRatio option's share once the operator sets one", async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: NEW_MODELS });
    expect((await harness.admin('PUT', '/api/option/', { key: 'CacheReadRatio', value: '{"gpt-4o-mini":0.25}' })).success).toBe(true);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: words(1000) }], emulator: { chunks: 50, cached_tokens: 400 } };
    // (600 uncached + 400 x 0.25 + 50 x 4) x 0.075 = 67.5 -> 67
    const expected = computeQuota({
      promptTokens: 1000,
      cachedPromptTokens: 400,
      completionTokens: 50,
      ratio: 0.075,
      completionRatio: 4,
      cachedPromptRatio: 0.25,
    });
    expect(expected).toBe(67);
    expect((await chargeOf('/v1/chat/completions', body)).charge).toBe(expected);
  });

  it('bills o4-mini reasoning tokens as output (they are part of completion_tokens) and cached input at a quarter', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: NEW_MODELS });
    const body = {
      model: 'o4-mini',
      messages: [{ role: 'user', content: words(2000) }],
      emulator: { chunks: 10, reasoning_tokens: 990, cached_tokens: 1000 },
    };
    // (1000 + 1000 x 0.25 + (10 + 990) x 4) x 0.55 = 2887.5 -> 2887
    const expected = computeQuota({
      promptTokens: 2000,
      cachedPromptTokens: 1000,
      completionTokens: 1000,
      ratio: 0.55,
      completionRatio: 4,
      cachedPromptRatio: 0.25,
    });
    expect(expected).toBe(2887);
    const plain = await chargeOf('/v1/chat/completions', body);
    expect(JSON.parse(plain.text).usage.completion_tokens_details).toEqual({ reasoning_tokens: 990 });
    expect(plain.charge).toBe(expected);
    expect((await chargeOf('/v1/chat/completions', { ...body, stream: true })).charge).toBe(expected);
  });

  it('bills gpt-4.1-nano, deepseek-chat cache hits, a Claude model and embeddings at their published prices', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: NEW_MODELS });
    const chat = (model: string, cached: number) => ({
      model,
      messages: [{ role: 'user', content: words(1000) }],
      emulator: { chunks: 100, cached_tokens: cached },
    });
    // (800 + 200 x 0.25 + 400) x 0.05 = 62.5 -> 62
    expect((await chargeOf('/v1/chat/completions', chat('gpt-4.1-nano', 200))).charge).toBe(62);
    // the catalog's deepseek-chat ($0.27 in, $0.07 cached, $1.10 out): (200 + 800 x 7/27 + floor(100 x 110/27)) x 0.135 = 109.9 -> 109
    expect((await chargeOf('/v1/chat/completions', chat('deepseek-chat', 800))).charge).toBe(109);
    // (1000 + 0 + 500) x 1.5 = 2250
    expect((await chargeOf('/v1/chat/completions', chat('claude-sonnet-4-20250514', 0))).charge).toBe(2250);
    // 1000 prompt tokens at 0.01 = 10
    expect((await chargeOf('/v1/embeddings', { model: 'text-embedding-3-small', input: words(1000) })).charge).toBe(10);
  });

  it('still refuses a model nobody priced, before calling the upstream', async () => {
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: NEW_MODELS });
    const calls = harness.emulator.requests.length;
    const response = await harness.post('/v1/chat/completions', { model: 'acme-unpriced-1', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(403);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('model_price_unset');
    expect(error.message).toContain('ModelRatio');
    expect(harness.emulator.requests.length).toBe(calls);
  });
});
