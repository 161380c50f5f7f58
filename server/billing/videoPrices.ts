// What a second of generated video costs, by model and size: the VideoPrices
// option (US dollars per second, keyed "model" for every size or
// "model@WIDTHxHEIGHT" for one size, which wins), seeded with OpenAI's list
// prices for Sora (common/options.ts DEFAULT_VIDEO_PRICES). A video is billed
// seconds x price x group ratio, in quota at 500,000 per dollar (the unit
// every token price uses: a ratio of 1 is $0.002 per 1K tokens). A model with
// no entry is refused (model_price_unset), as an unpriced chat model is.

/** Quota per US dollar: the fixed rate of the token prices (ratio 1 = $0.002 / 1K tokens = 1 quota per token). */
export const QUOTA_PER_DOLLAR = 500_000;

export type VideoPrice = { known: true; perSecond: number; groupRatio: number } | { known: false; reason: string };

const usable = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** The price of a second of `model` at `size` for a group: the size's entry, else the model's. */
export function videoPrice(
  model: string,
  size: string,
  group: string,
  prices: Readonly<Record<string, number>>,
  groupRatios: Readonly<Record<string, number>>,
): VideoPrice {
  const sized = Object.hasOwn(prices, `${model}@${size}`) ? prices[`${model}@${size}`] : undefined;
  const plain = Object.hasOwn(prices, model) ? prices[model] : undefined;
  let perSecond: number | undefined;
  if (usable(sized)) perSecond = sized;
  else if (usable(plain)) perSecond = plain;
  if (perSecond === undefined)
    return { known: false, reason: `model ${model} has no video price: an administrator must add it to VideoPrices` };
  const groupRatio = usable(groupRatios[group]) ? groupRatios[group] : 1;
  return { known: true, perSecond, groupRatio };
}

/** seconds x price x group ratio, in quota (rounded to the nearest unit). */
export function videoQuota(price: { perSecond: number; groupRatio: number }, seconds: number): number {
  return Math.round(seconds * price.perSecond * price.groupRatio * QUOTA_PER_DOLLAR);
}

/** The consume log's formula, e.g. "8 s × $0.1/s × 1 × 500000 = 400000". */
export function videoQuotaFormula(price: { perSecond: number; groupRatio: number }, seconds: number, quota: number): string {
  return `${seconds} s × $${price.perSecond}/s × ${price.groupRatio} × ${QUOTA_PER_DOLLAR} = ${quota}`;
}
