import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO } from '../../../common/options';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../../common/options';
import { affordableOutputTokens, completionRatioFor, computeQuota, imageQuota, lookupPrice, MIN_LOWERED_OUTPUT_TOKENS, maxOutputTokensFor, reservationQuota } from '../../../server/relay/billing';

describe('billing arithmetic', () => {
  it('reproduces the reference worked examples', () => {
    const turbo = lookupPrice('gpt-3.5-turbo', 'default', DEFAULT_MODEL_RATIO, DEFAULT_GROUP_RATIO);
    expect(turbo).toEqual({ known: true, ratio: 0.75, modelRatio: 0.75, groupRatio: 1 });
    // 100 prompt + floor(50 x 4/3) = 166 x 0.75 = 124.5 -> 124
    expect(computeQuota({ promptTokens: 100, completionTokens: 50, ratio: 0.75, completionRatio: completionRatioFor('gpt-3.5-turbo') })).toBe(124);
    // 1000 + 500 x 2 = 2000 x 15 = 30000
    expect(computeQuota({ promptTokens: 1000, completionTokens: 500, ratio: 15, completionRatio: completionRatioFor('gpt-4-0613') })).toBe(30000);
  });

  it('applies the group ratio and prices an unknown group at 1', () => {
    expect(lookupPrice('gpt-4', 'vip', DEFAULT_MODEL_RATIO, { vip: 2 })).toEqual({ known: true, ratio: 30, modelRatio: 15, groupRatio: 2 });
    expect(lookupPrice('gpt-4', 'nobody', DEFAULT_MODEL_RATIO, { vip: 2 })).toEqual({ known: true, ratio: 15, modelRatio: 15, groupRatio: 1 });
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
    expect(computeQuota({ promptTokens: 10, cachedPromptTokens: 50, completionTokens: 0, ratio: 1, completionRatio: 1, cachedPromptRatio: 0 })).toBe(1);
    expect(computeQuota({ promptTokens: -5, completionTokens: -5, ratio: 1, completionRatio: 1 })).toBe(0);
  });

  it("reserves prompt + max_tokens, or the model's maximum output when max_tokens is absent, for each of n answers", () => {
    expect(reservationQuota({ promptTokens: 100, maxTokens: 50, maxOutputTokens: 8192, ratio: 15, completionRatio: 2 })).toBe(3000);
    // gpt-4 without max_tokens: 10 prompt + 8192 x 2 output, at 15
    expect(reservationQuota({ promptTokens: 10, maxOutputTokens: 8192, ratio: 15, completionRatio: 2 })).toBe((10 + 16384) * 15);
    expect(reservationQuota({ promptTokens: 10, maxTokens: 50, maxOutputTokens: 8192, n: 3, ratio: 15, completionRatio: 2 })).toBe((10 + 300) * 15);
    expect(reservationQuota({ promptTokens: 1000, maxOutputTokens: 0, ratio: 1, completionRatio: 1 })).toBe(1000);
    expect(maxOutputTokensFor('gpt-4', { 'gpt-4': 8192 })).toBe(8192);
    expect(maxOutputTokensFor('unlisted', { 'gpt-4': 8192 })).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
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
