import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO, DEFAULT_MODEL_MAX_OUTPUT_TOKENS } from '../../../common/options';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../../common/options';
import {
  affordableOutputTokens,
  CACHED_PROMPT_RATIO_BY_MODEL,
  cachedPromptRatioFor,
  COMPLETION_RATIO_BY_MODEL,
  completionRatioFor,
  computeQuota,
  DEFAULT_CACHED_PROMPT_RATIO,
  imageQuota,
  lookupPrice,
  MIN_LOWERED_OUTPUT_TOKENS,
  maxOutputTokensFor,
  reservationQuota,
} from '../../../server/billing/prices';
import { defaultModelRatio } from './harness';

describe('billing arithmetic', () => {
  it('reproduces the reference worked examples', () => {
    // v0.5.3's gpt-3.5-turbo price, set by the operator over the catalog's
    const turbo = lookupPrice('gpt-3.5-turbo', 'default', { 'gpt-3.5-turbo': 0.75 }, DEFAULT_GROUP_RATIO, { 'gpt-3.5-turbo': 4 / 3 });
    expect(turbo).toMatchObject({ known: true, ratio: 0.75, modelRatio: 0.75, groupRatio: 1, completionRatio: 4 / 3, source: 'option' });
    // 100 prompt + floor(50 x 4/3) = 166 x 0.75 = 124.5 -> 124
    expect(
      computeQuota({
        promptTokens: 100,
        completionTokens: 50,
        ratio: 0.75,
        completionRatio: completionRatioFor('gpt-3.5-turbo', { 'gpt-3.5-turbo': 4 / 3 }),
      }),
    ).toBe(124);
    // 1000 + 500 x 2 = 2000 x 15 = 30000
    expect(computeQuota({ promptTokens: 1000, completionTokens: 500, ratio: 15, completionRatio: completionRatioFor('gpt-4-0613') })).toBe(
      30000,
    );
  });

  it('applies the group ratio and prices an unknown group at 1', () => {
    expect(lookupPrice('gpt-4', 'vip', DEFAULT_MODEL_RATIO, { vip: 2 })).toMatchObject({
      known: true,
      ratio: 30,
      modelRatio: 15,
      groupRatio: 2,
      completionRatio: 2,
    });
    expect(lookupPrice('gpt-4', 'nobody', DEFAULT_MODEL_RATIO, { vip: 2 })).toMatchObject({
      known: true,
      ratio: 15,
      modelRatio: 15,
      groupRatio: 1,
    });
  });

  it('refuses to invent a price for an unknown model', () => {
    const lookup = lookupPrice('mystery-model', 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO);
    expect(lookup.known).toBe(false);
    if (!lookup.known) expect(lookup.reason).toContain('ModelRatio');
  });

  it('charges at least 1 for a priced request, 0 when nothing was used, and free models stay free', () => {
    expect(computeQuota({ promptTokens: 1, completionTokens: 0, ratio: 0.05, completionRatio: 1 })).toBe(1);
    expect(computeQuota({ promptTokens: 0, completionTokens: 0, ratio: 15, completionRatio: 2 })).toBe(0);
    expect(computeQuota({ promptTokens: 100, completionTokens: 100, ratio: 0, completionRatio: 2 })).toBe(0);
  });

  it('prices cached prompt tokens on their own and never below zero', () => {
    // 1000 prompt of which 600 cached at 0.5: 400 + 300 = 700, + 0 completion, x 1
    expect(computeQuota({ promptTokens: 1000, cachedPromptTokens: 600, completionTokens: 0, ratio: 1, completionRatio: 1 })).toBe(700);
    // an upstream claiming more cached than prompt tokens cannot make the bill negative
    expect(
      computeQuota({ promptTokens: 10, cachedPromptTokens: 50, completionTokens: 0, ratio: 1, completionRatio: 1, cachedPromptRatio: 0 }),
    ).toBe(1);
    expect(computeQuota({ promptTokens: -5, completionTokens: -5, ratio: 1, completionRatio: 1 })).toBe(0);
  });

  it("reserves prompt + max_tokens, or the model's maximum output when max_tokens is absent, for each of n answers", () => {
    expect(reservationQuota({ promptTokens: 100, maxTokens: 50, maxOutputTokens: 8192, ratio: 15, completionRatio: 2 })).toBe(3000);
    // gpt-4 without max_tokens: 10 prompt + 8192 x 2 output, at 15
    expect(reservationQuota({ promptTokens: 10, maxOutputTokens: 8192, ratio: 15, completionRatio: 2 })).toBe((10 + 16384) * 15);
    expect(reservationQuota({ promptTokens: 10, maxTokens: 50, maxOutputTokens: 8192, n: 3, ratio: 15, completionRatio: 2 })).toBe(
      (10 + 300) * 15,
    );
    expect(reservationQuota({ promptTokens: 1000, maxOutputTokens: 0, ratio: 1, completionRatio: 1 })).toBe(1000);
    expect(maxOutputTokensFor('gpt-4', { 'gpt-4': 8192 })).toBe(8192);
    expect(maxOutputTokensFor('unlisted', { 'gpt-4': 8192 })).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    // the catalog's limit when the table has none
    expect(maxOutputTokensFor('gpt-4.1', {})).toBe(32768);
  });

  it('lowers the output limit to what a balance pays for, never below the floor', () => {
    const price = { promptTokens: 10, maxOutputTokens: 4096, ratio: 0.75, completionRatio: 4 / 3 };
    for (const available of [100, 1000, 2999, 3750]) {
      const tokens = affordableOutputTokens({ ...price, available });
      expect(tokens).toBeGreaterThanOrEqual(MIN_LOWERED_OUTPUT_TOKENS);
      expect(reservationQuota({ ...price, maxTokens: tokens })).toBeLessThanOrEqual(available);
      expect(reservationQuota({ ...price, maxTokens: tokens + 1 })).toBeGreaterThan(available);
    }
    expect(affordableOutputTokens({ ...price, available: 10_000_000 })).toBe(4096);
    expect(affordableOutputTokens({ ...price, available: 20 })).toBe(0);
    const four = affordableOutputTokens({ ...price, available: 1000, n: 4 });
    expect(reservationQuota({ ...price, maxTokens: four, n: 4 })).toBeLessThanOrEqual(1000);
    expect(reservationQuota({ ...price, maxTokens: four + 1, n: 4 })).toBeGreaterThan(1000);
  });

  it('prices images per image by size, as v0.5.3 documents', () => {
    expect([undefined, '256x256', '512x512', '1024x1024'].map((size) => imageQuota(8, size, 1))).toEqual([8000, 8000, 9000, 10000]);
    expect(imageQuota(8, '1024x1024', 3)).toBe(30000);
    expect(imageQuota(8, '512x512', 0)).toBe(0);
  });
});

// USD per 1M tokens as the providers publish them (sources cited in common/options.ts):
// [input, cached input, output], for the models priced by hand. Ratio 1 = $0.002 per
// 1K tokens = $2 per 1M. The catalog's prices are pinned in tests/server/catalog.test.ts.
const PUBLISHED: Record<string, [number, number | null, number]> = {
  'llama-3.3-70b-versatile': [0.59, null, 0.79],
  'llama-3.1-8b-instant': [0.05, null, 0.08],
  'meta-llama/llama-4-scout-17b-16e-instruct': [0.11, null, 0.34],
  'meta-llama/llama-4-maverick-17b-128e-instruct': [0.2, null, 0.6],
  'qwen-max': [1.6, null, 6.4],
  'qwen-plus': [0.4, null, 1.2],
  'qwen-turbo': [0.05, null, 0.2],
  'text-embedding-v3': [0.07, null, 0.07],
  'meta-llama/Llama-3.3-70B-Instruct-Turbo': [0.88, null, 0.88],
  'google/gemini-2.5-flash': [0.3, 0.03, 2.5],
};

// Yuan per 1M tokens as the Chinese providers publish them, converted at v0.5.3's ¥7 = US$1
// (common/options.ts): [input, cached input, output]. The ratios are written to 6 decimals.
const PUBLISHED_CNY: Record<string, [number, number | null, number]> = {
  'qwen-long': [0.5, null, 2],
  'embedding-3': [0.5, null, 0.5],
  'ERNIE-4.0-8K': [30, null, 90],
  'ERNIE-3.5-8K': [0.8, null, 2],
  'Qwen/Qwen2.5-72B-Instruct': [4.13, null, 4.13],
};

describe('default prices of current models', () => {
  const close = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThan(1e-9);

  it.each(Object.entries(PUBLISHED))('%s costs what its provider publishes', (model, [input, cached, output]) => {
    close(DEFAULT_MODEL_RATIO[model] * 2, input);
    close(DEFAULT_MODEL_RATIO[model] * 2 * completionRatioFor(model), output);
    close(DEFAULT_MODEL_RATIO[model] * 2 * cachedPromptRatioFor(model), cached ?? input * DEFAULT_CACHED_PROMPT_RATIO);
  });

  it.each(Object.entries(PUBLISHED_CNY))('%s costs what its provider publishes in yuan', (model, [input, cached, output]) => {
    const yuan = (ratio: number) => ratio * 2 * 7;
    const near = (actual: number, expected: number) => expect(Math.abs(actual - expected) / expected).toBeLessThan(1e-5);
    near(yuan(DEFAULT_MODEL_RATIO[model]), input);
    near(yuan(DEFAULT_MODEL_RATIO[model] * completionRatioFor(model)), output);
    near(yuan(DEFAULT_MODEL_RATIO[model] * cachedPromptRatioFor(model)), cached ?? input * DEFAULT_CACHED_PROMPT_RATIO);
  });

  it('prices the free models at 0: known, never refused, and charged nothing', () => {
    for (const model of [
      'glm-4-flash',
      'ERNIE-Speed-8K',
      'ERNIE-Lite-8K',
      'ERNIE-Tiny-8K',
      'lite',
      'Qwen/Qwen2.5-7B-Instruct',
      'BAAI/bge-m3',
    ]) {
      const price = lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO);
      expect(price, model).toMatchObject({ known: true, ratio: 0, modelRatio: 0, groupRatio: 1 });
      expect(computeQuota({ promptTokens: 5000, completionTokens: 3000, ratio: 0, completionRatio: completionRatioFor(model) })).toBe(0);
      expect(
        reservationQuota({
          promptTokens: 5000,
          maxOutputTokens: maxOutputTokensFor(model, DEFAULT_MODEL_MAX_OUTPUT_TOKENS),
          ratio: 0,
          completionRatio: 1,
        }),
      ).toBe(0);
    }
  });

  it('leaves the models whose price is uncertain unpriced, so they stay refused', () => {
    // (command-r, command-r-plus and kimi-k2-turbo-preview were here until the catalog priced them)
    // (deepseek-ai/DeepSeek-V3 was here until it was priced at the higher of Together's and SiliconFlow's prices)
    for (const model of ['text-embedding-004', 'generalv3', 'generalv3.5', '4.0Ultra', 'pro-128k', 'max-32k']) {
      expect(lookupPrice(model, 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO), model).toMatchObject({ known: false });
    }
  });

  it('bills a few models by hand: Gemini 2.5 Flash with a cache hit, Groq Llama 70B, grok-3-mini, ERNIE 4.0', () => {
    // gemini-2.5-flash: 2000 prompt (1000 cached at 0.1) + floor(300 x 25/3) = 2500 → (1000 + 100 + 2500) x 0.15 = 540
    // ($0.30 x 1000 + $0.03 x 1000 + $2.50 x 300 per 1M = $0.00108 = 540 quota at 500 000 per dollar)
    const flash = {
      ratio: defaultModelRatio('gemini-2.5-flash'),
      completionRatio: completionRatioFor('gemini-2.5-flash'),
      cachedPromptRatio: cachedPromptRatioFor('gemini-2.5-flash'),
    };
    expect(computeQuota({ promptTokens: 2000, cachedPromptTokens: 1000, completionTokens: 300, ...flash })).toBe(540);
    // llama-3.3-70b-versatile: 1000 prompt + floor(1000 x 0.79/0.59) = 1338 → 2338 x 0.295 = 689.71 → 689
    // ($0.59 + $0.79 per 1M for 1000 each = $0.00138 = 690 quota; the floor of the completion part costs one)
    expect(
      computeQuota({
        promptTokens: 1000,
        completionTokens: 1000,
        ratio: DEFAULT_MODEL_RATIO['llama-3.3-70b-versatile'],
        completionRatio: completionRatioFor('llama-3.3-70b-versatile'),
      }),
    ).toBe(689);
    // grok-3-mini: 10 000 prompt (4000 cached at 0.25) + floor(6000 x 5/3) = 10 000 → (6000 + 1000 + 10 000) x 0.15 = 2550
    // ($0.30 x 6000 + $0.075 x 4000 + $0.50 x 6000 per 1M = $0.0051 = 2550 quota)
    expect(
      computeQuota({
        promptTokens: 10_000,
        cachedPromptTokens: 4000,
        completionTokens: 6000,
        ratio: defaultModelRatio('grok-3-mini'),
        completionRatio: completionRatioFor('grok-3-mini'),
        cachedPromptRatio: cachedPromptRatioFor('grok-3-mini'),
      }),
    ).toBe(2550);
    // ERNIE-4.0-8K: 1400 prompt + 1400 x 3 = 5600 → 5600 x 2.142857 = 11 999.99 → 11 999
    // (¥0.03 x 1.4 + ¥0.09 x 1.4 = ¥0.168 = $0.024 at ¥7 = 12 000 quota, less the 6-decimal rounding)
    expect(
      computeQuota({
        promptTokens: 1400,
        completionTokens: 1400,
        ratio: DEFAULT_MODEL_RATIO['ERNIE-4.0-8K'],
        completionRatio: completionRatioFor('ERNIE-4.0-8K'),
      }),
    ).toBe(11_999);
  });

  it("prices v0.5.3's models: from the catalog where it knows them, else by v0.5.3's own row and prefix", () => {
    // the catalog's (@pydantic/genai-prices 0.1.8): gpt-3.5-turbo is $0.50 / $1.50 (v0.5.3: 0.75 and 4/3), claude-2 $8 / $24 (v0.5.3: 5.51 and 2.965517)
    expect(['gpt-4', 'gpt-3.5-turbo', 'claude-2', 'text-embedding-ada-002'].map(defaultModelRatio)).toEqual([15, 0.25, 4, 0.05]);
    expect(['gpt-4-0613', 'gpt-3.5-turbo', 'claude-2'].map((model) => completionRatioFor(model))).toEqual([2, 3, 3]);
    expect(completionRatioFor('gpt-3.5-turbo-16k')).toBeCloseTo(4 / 3);
    // not in the catalog: v0.5.3's row and prefix
    expect(DEFAULT_MODEL_RATIO).toMatchObject({ SparkDesk: 0.8572, 'claude-instant-1': 0.815, 'dall-e': 8, 'whisper-1': 10 });
    expect(completionRatioFor('claude-instant-1')).toBe(3.38);
  });

  it('prices new families by exact name, so a shared prefix never lends them an older price', () => {
    // gpt-4o, gpt-4.1 and gpt-4-turbo all start with the v0.5.3 prefix gpt-4 (2x)
    expect(['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4-turbo'].map((model) => completionRatioFor(model))).toEqual([4, 4, 4, 3]);
    // an unlisted relative keeps the prefix answer and the default cache share, and has no price at all
    expect(completionRatioFor('gpt-4o-mini-2099-01-01')).toBe(2);
    expect(cachedPromptRatioFor('gpt-4o-mini-2099-01-01')).toBe(DEFAULT_CACHED_PROMPT_RATIO);
    expect(lookupPrice('gpt-4o-mini-2099-01-01', 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO).known).toBe(false);
  });

  it('gives every hand-priced model a completion ratio and every model a maximum output, and prices nothing it does not list', () => {
    for (const model of Object.keys(COMPLETION_RATIO_BY_MODEL)) {
      expect(DEFAULT_MODEL_RATIO[model], model).toBeGreaterThan(0);
    }
    for (const model of Object.keys(CACHED_PROMPT_RATIO_BY_MODEL)) expect(defaultModelRatio(model), model).toBeGreaterThan(0);
    for (const model of ['gpt-4.1', 'o4-mini', 'deepseek-chat', 'deepseek-reasoner'])
      expect(maxOutputTokensFor(model, DEFAULT_MODEL_MAX_OUTPUT_TOKENS), model).toBeGreaterThan(4096);
    expect(DEFAULT_MODEL_MAX_OUTPUT_TOKENS['text-embedding-3-small']).toBe(0);
    expect(DEFAULT_MODEL_MAX_OUTPUT_TOKENS['text-embedding-3-large']).toBe(0);
    for (const model of ['gemini-embedding-001', 'mistral-embed', 'embed-v4.0', 'text-embedding-v3', 'embedding-3', 'BAAI/bge-m3'])
      expect(DEFAULT_MODEL_MAX_OUTPUT_TOKENS[model], model).toBe(0);
  });

  it('bills gpt-4o-mini with a cached prompt part and deepseek-chat cache hits at their own shares', () => {
    // 1000 prompt (400 cached at 0.5) + floor(200 x 4), x 0.075: (600 + 200 + 800) x 0.075 = 120
    expect(
      computeQuota({
        promptTokens: 1000,
        cachedPromptTokens: 400,
        completionTokens: 200,
        ratio: 0.075,
        completionRatio: 4,
        cachedPromptRatio: cachedPromptRatioFor('gpt-4o-mini'),
      }),
    ).toBe(120);
    // the catalog's deepseek-chat, $0.27 in, $0.07 cached, $1.10 out: 1000 prompt (800 cached at 7/27)
    // + floor(100 x 110/27), x 0.135: (200 + 207.4 + 407) x 0.135 = 109.9 -> 109
    expect(
      computeQuota({
        promptTokens: 1000,
        cachedPromptTokens: 800,
        completionTokens: 100,
        ratio: 0.135,
        completionRatio: completionRatioFor('deepseek-chat'),
        cachedPromptRatio: cachedPromptRatioFor('deepseek-chat'),
      }),
    ).toBe(109);
  });
});
