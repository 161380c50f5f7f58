// A model's price as `GET /api/pricing` gives it to a signed-in user: US$ per
// million tokens, the user's group ratio applied.
export interface ModelPrice {
  model: string;
  input: number;
  output: number;
  /** Cached input, where the catalog or the provider's price table has it (absent: billed at the default share). */
  cache_read?: number;
  /** Input written to the vendor's prompt cache, where the vendor bills it apart. */
  cache_write?: number;
  /** Where the model's price comes from: the operator's ModelRatio, or the maintained catalog. */
  source: 'option' | 'catalog';
}

/**
 * The client-side APIs a model is reached through, as the price list names them:
 * OpenAI's chat, completions, embeddings, images, audio, moderations, rerank and
 * realtime, and the APIs the gateway translates into chat (OpenAI Responses,
 * Anthropic Messages, Gemini's generateContent).
 */
export const MODEL_ENDPOINTS = [
  'chat',
  'responses',
  'messages',
  'gemini',
  'completions',
  'embeddings',
  'images',
  'audio',
  'moderations',
  'rerank',
  'realtime',
] as const;
export type ModelEndpoint = (typeof MODEL_ENDPOINTS)[number];

/** A model on the price list (`GET /api/pricing`): its prices and the APIs the channels serving it answer. */
export interface ListedModelPrice extends ModelPrice {
  endpoints: ModelEndpoint[];
}

/**
 * What a model costs when the operator overrides nothing, in the gateway's
 * ratios (`GET /api/pricing/defaults`, admins): the catalog's price, or the
 * built-in ModelRatio default for a model the catalog lacks. A model the
 * operator priced that has no default comes without `model_ratio`.
 */
export interface DefaultModelPrice {
  model: string;
  /** Input price per million tokens x 1 000 000 / QuotaPerUnit; absent: no default price (the model is refused unless ModelRatio lists it). */
  model_ratio?: number;
  /** Output price / input price. */
  completion_ratio: number;
  /** Cache-read price / input price, where the catalog or the provider's price table has one. */
  cache_read_ratio?: number;
  /** Cache-write price / input price, where the vendor bills cache writes apart. */
  cache_write_ratio?: number;
  /** True when an enabled channel (of any group) serves the model. */
  served?: boolean;
}

/** A model's ratios, as the four ratio options hold them for one model. */
export interface PriceRatioSet {
  modelRatio: number;
  completionRatio: number;
  cacheReadRatio?: number;
  cacheWriteRatio?: number;
}

/** A model's prices in US$ per million tokens. */
export type DollarPrices = Pick<ModelPrice, 'input' | 'output' | 'cache_read' | 'cache_write'>;

/**
 * A ratio to 15 significant digits: drops the float noise of a division
 * (0.6 / 0.15 = 3.9999999999999996 -> 4) and keeps every digit a double holds
 * for sure, so a ratio is as exact as the prices it came from.
 */
export const tidyRatio = (value: number) => Number(value.toPrecision(15));

/** A price to 12 significant digits, three fewer than a ratio: the noise of the ratio's multiplication goes, and a price saved as ratios reads back as it was typed. */
export const tidyPrice = (value: number) => Number(value.toPrecision(12));

/** Ratios as US$ per million tokens when `quotaPerUnit` quota make a dollar (ratio 1 = 1 quota per token). */
export function ratiosToDollars(ratios: PriceRatioSet, quotaPerUnit: number): DollarPrices {
  const input = (ratios.modelRatio * 1_000_000) / quotaPerUnit;
  const share = (ratio: number) => tidyPrice(input * ratio);
  return {
    input: tidyPrice(input),
    output: share(ratios.completionRatio),
    ...(ratios.cacheReadRatio !== undefined ? { cache_read: share(ratios.cacheReadRatio) } : {}),
    ...(ratios.cacheWriteRatio !== undefined ? { cache_write: share(ratios.cacheWriteRatio) } : {}),
  };
}

/**
 * ratiosToDollars backwards: the model ratio from the input price, the other
 * three as shares of it. Refused (undefined) when a price is negative or not a
 * number, or when the input is free but another price is not, because the
 * ratios can only say what a token costs relative to an input token.
 */
export function dollarsToRatios(prices: DollarPrices, quotaPerUnit: number): PriceRatioSet | undefined {
  const values = [prices.input, prices.output, prices.cache_read, prices.cache_write].filter((value) => value !== undefined);
  if (!(quotaPerUnit > 0) || values.some((value) => !Number.isFinite(value) || value < 0)) return undefined;
  const modelRatio = tidyRatio((prices.input * quotaPerUnit) / 1_000_000);
  if (prices.input === 0) {
    if (values.some((value) => value > 0)) return undefined;
    return {
      modelRatio: 0,
      completionRatio: 1,
      ...(prices.cache_read !== undefined ? { cacheReadRatio: 0 } : {}),
      ...(prices.cache_write !== undefined ? { cacheWriteRatio: 0 } : {}),
    };
  }
  const share = (price: number) => tidyRatio(price / prices.input);
  return {
    modelRatio,
    completionRatio: share(prices.output),
    ...(prices.cache_read !== undefined ? { cacheReadRatio: share(prices.cache_read) } : {}),
    ...(prices.cache_write !== undefined ? { cacheWriteRatio: share(prices.cache_write) } : {}),
  };
}
