// The settings' price table shows ratios as US$ per million tokens and saves
// typed prices back as ratios: both ways must agree, so that saving a row
// unchanged writes the ratios it was shown from, and a typed price reads back
// as typed.
import { describe, expect, it } from 'vitest';
import { dollarsToRatios, ratiosToDollars, tidyPrice } from '../../common/pricing';
import { DEFAULT_MODEL_RATIO } from '../../common/options';
import { defaultModelPrice } from '../../server/billing/prices';
import { catalogModelNames } from '../../server/billing/catalog';

describe('ratios and dollars per million tokens', () => {
  it('reads ratio 1 as $2 per million at the default 500 000 quota a dollar, and the rest as shares of the input', () => {
    expect(ratiosToDollars({ modelRatio: 1, completionRatio: 2, cacheReadRatio: 0.5, cacheWriteRatio: 1.25 }, 500_000)).toEqual({
      input: 2,
      output: 4,
      cache_read: 1,
      cache_write: 2.5,
    });
    expect(ratiosToDollars({ modelRatio: 0.075, completionRatio: 4 }, 500_000)).toEqual({ input: 0.15, output: 0.6 });
    // an operator who counts 1 000 000 quota a dollar: ratio 1 is $1
    expect(ratiosToDollars({ modelRatio: 1, completionRatio: 3 }, 1_000_000)).toEqual({ input: 1, output: 3 });
  });

  it('turns typed prices into ratios without float noise', () => {
    expect(dollarsToRatios({ input: 0.15, output: 0.6, cache_read: 0.075 }, 500_000)).toEqual({
      modelRatio: 0.075,
      completionRatio: 4,
      cacheReadRatio: 0.5,
    });
    expect(dollarsToRatios({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, 500_000)).toEqual({
      modelRatio: 1.5,
      completionRatio: 5,
      cacheReadRatio: 0.1,
      cacheWriteRatio: 1.25,
    });
  });

  it('refuses prices the ratios cannot hold', () => {
    expect(dollarsToRatios({ input: -1, output: 1 }, 500_000)).toBeUndefined();
    expect(dollarsToRatios({ input: Number.NaN, output: 1 }, 500_000)).toBeUndefined();
    // a free input with a paid output: no share of nothing says what the output costs
    expect(dollarsToRatios({ input: 0, output: 1 }, 500_000)).toBeUndefined();
    expect(dollarsToRatios({ input: 0, output: 0 }, 500_000)).toEqual({ modelRatio: 0, completionRatio: 1 });
  });

  it('round-trips every default price: ratios to dollars and back give the same ratios', () => {
    const models = [...catalogModelNames(), ...Object.keys(DEFAULT_MODEL_RATIO)];
    expect(models.length).toBeGreaterThan(100);
    for (const quotaPerUnit of [500_000, 1_000_000, 7_300_000]) {
      for (const model of models) {
        const price = defaultModelPrice(model, DEFAULT_MODEL_RATIO);
        if (price.model_ratio === undefined || price.model_ratio === 0) continue;
        const ratios = {
          modelRatio: price.model_ratio,
          completionRatio: price.completion_ratio,
          cacheReadRatio: price.cache_read_ratio,
          cacheWriteRatio: price.cache_write_ratio,
        };
        const back = dollarsToRatios(ratiosToDollars(ratios, quotaPerUnit), quotaPerUnit);
        const close = (actual: number | undefined, expected: number | undefined) => {
          if (expected === undefined) return expect(actual, model).toBeUndefined();
          expect(Math.abs((actual as number) - expected) / Math.max(expected, 1e-12), model).toBeLessThan(1e-10);
        };
        close(back?.modelRatio, ratios.modelRatio);
        close(back?.completionRatio, ratios.completionRatio);
        close(back?.cacheReadRatio, ratios.cacheReadRatio);
        close(back?.cacheWriteRatio, ratios.cacheWriteRatio);
      }
    }
  });

  it('round-trips typed prices exactly: dollars to ratios and back read as typed', () => {
    const typed = [0.05, 0.1, 0.15, 0.3, 0.6, 1.1, 1.25, 2.5, 3, 3.75, 7, 15, 60, 0.0725, 0.0001];
    for (const input of typed) {
      for (const output of typed) {
        const prices = { input, output, cache_read: output / 10, cache_write: input * 1.25 };
        const ratios = dollarsToRatios(prices, 500_000);
        expect(ratios).toBeDefined();
        expect(ratiosToDollars(ratios!, 500_000)).toEqual({
          input,
          output,
          cache_read: tidyPrice(output / 10),
          cache_write: tidyPrice(input * 1.25),
        });
      }
    }
  });
});
