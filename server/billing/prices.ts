// Quota arithmetic for relayed requests, kept pure so every rule is tested in
// isolation. Formulas follow one-api v0.5.3 (1 quota = 1 token at model ratio 1,
// 500 000 quota = US$1) with its money defects fixed: no silent price for an
// unknown model, cached prompt tokens priced on their own, never a negative charge.
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../common/options';
import { tidyRatio, type DefaultModelPrice, type ModelPrice } from '../../common/pricing';
import type { Usage } from '../../common/usage';
import { catalogMaxOutputTokens, catalogPrice } from './catalog';

/**
 * v0.5.3's completion-token multipliers by model-name prefix (longest prefix
 * wins), kept for its models the catalog does not price. Asked after the
 * catalog and COMPLETION_RATIO_BY_MODEL: `gpt-4o`, `gpt-4.1` and `gpt-4-turbo`
 * all start with `gpt-4` yet have other output prices, which the catalog knows.
 */
export const COMPLETION_RATIO_BY_PREFIX: Readonly<Record<string, number>> = {
  'gpt-3.5': 4 / 3,
  'gpt-4': 2,
  'claude-instant-1': 3.38,
  'claude-2': 2.965517,
};

/**
 * Output price / input price for the models DEFAULT_MODEL_RATIO prices by hand
 * (common/options.ts cites each provider's price page): the catalog prices
 * every other model, and a test keeps entries it covers out of this table.
 * Reasoning tokens need no entry of their own: providers count them inside
 * completion_tokens and bill them as output.
 */
export const COMPLETION_RATIO_BY_MODEL: Readonly<Record<string, number>> = {
  // Groq: $0.79 / $0.59, $0.08 / $0.05, $0.34 / $0.11, $0.60 / $0.20
  'llama-3.3-70b-versatile': 0.79 / 0.59,
  'llama-3.1-8b-instant': 0.08 / 0.05,
  'meta-llama/llama-4-scout-17b-16e-instruct': 0.34 / 0.11,
  'meta-llama/llama-4-maverick-17b-128e-instruct': 3,
  // Qwen: $6.40 / $1.60, $1.20 / $0.40, $0.20 / $0.05, ¥2 / ¥0.5
  'qwen-max': 4,
  'qwen-plus': 3,
  'qwen-turbo': 4,
  'qwen-long': 4,
  // Baidu: ¥0.09 / ¥0.03 per 1K, ¥0.002 / ¥0.0008 per 1K
  'ERNIE-4.0-8K': 3,
  'ERNIE-3.5-8K': 2.5,
  // OpenRouter, first-party prices: $0.60 / $0.15, $2.50 / $0.30
  'openai/gpt-4o-mini': 4,
  'google/gemini-2.5-flash': 2.5 / 0.3,
  // Replicate: $0.25 / $0.05, $2.75 / $0.65; Llama 3.1 405B prices both alike
  'meta/meta-llama-3-8b-instruct': 5,
  'meta/meta-llama-3-70b-instruct': 2.75 / 0.65,
  // Zhipu, SiliconFlow and Together price input and output alike: ratio 1 (the default).
  // The defaults added on 2026-11-27 (common/options.ts gives each page); a model
  // priced alike both ways (360, Baichuan, 01.AI, Spark, embeddings) needs no entry.
  // Highest of the vendors serving the name: $0.40 / $0.38
  'qwen/qwen-2.5-72b-instruct': 0.4 / 0.38,
  'deepseek/deepseek-chat': 0.89 / 0.38,
  'openai/gpt-oss-120b': 4,
  'openai/gpt-oss-20b': 4,
  'deepseek-ai/DeepSeek-R1': 4,
  'hunyuan-turbos-latest': 2.5,
  'hunyuan-t1-latest': 4,
  'hunyuan-standard': 2.5,
  'MiniMax-Text-01': 8,
  'step-2-16k': 120 / 38,
  'step-2-mini': 2,
  'step-1-8k': 4,
  'step-1-32k': 70 / 15,
  'step-1v-8k': 4,
  'doubao-seed-1-6-250615': 16 / 1.2,
  'doubao-1-5-pro-32k-250115': 2.5,
  'doubao-1-5-lite-32k-250115': 2,
  'ernie-4.5-turbo-128k': 4,
  'ernie-4.0-8k': 3,
  'ernie-3.5-8k': 2.5,
  // AWS Bedrock (its Llama is priced alike both ways)
  'amazon.nova-pro-v1:0': 4,
  'amazon.nova-lite-v1:0': 4,
  'amazon.nova-micro-v1:0': 4,
  'mistral.mistral-large-2407-v1:0': 3,
  'cohere.command-r-plus-v1:0': 5,
};

/** Cached prompt tokens cost this share of a normal prompt token when neither the catalog nor the table below says. */
export const DEFAULT_CACHED_PROMPT_RATIO = 0.5;

/** Cached-input price / input price where the provider publishes one and the catalog has none. */
export const CACHED_PROMPT_RATIO_BY_MODEL: Readonly<Record<string, number>> = {
  // Gemini 1.5 Pro: cached input at a quarter (https://ai.google.dev/gemini-api/docs/pricing)
  'gemini-1.5-pro': 0.25,
  // OpenRouter passes on its providers' cache prices
  'openai/gpt-4o-mini': 0.5,
  'google/gemini-2.5-flash': 0.1,
};

/** An operator's entry of a ratio option, when it is a usable ratio. */
const overrideOf = (overrides: Readonly<Record<string, number>>, model: string) =>
  Object.hasOwn(overrides, model) && Number.isFinite(overrides[model]) && overrides[model] >= 0 ? overrides[model] : undefined;

/** The share of a prompt token's price a cached prompt token costs for this model: the CacheReadRatio option's entry, else the catalog, else the hand table. */
export function cachedPromptRatioFor(model: string, overrides: Readonly<Record<string, number>> = {}): number {
  const ratio = overrideOf(overrides, model) ?? catalogPrice(model)?.cacheReadRatio ?? CACHED_PROMPT_RATIO_BY_MODEL[model];
  return Number.isFinite(ratio) ? ratio : DEFAULT_CACHED_PROMPT_RATIO;
}

/**
 * What a prompt token written to the vendor's prompt cache costs, as a share
 * of an ordinary prompt token, where the vendor bills cache writes apart: the
 * catalog's 5-minute write price, else Anthropic's 1.25 x base input for the
 * Claude models it does not list
 * (https://docs.anthropic.com/en/docs/about-claude/pricing). Everyone else
 * bills a cache write as an ordinary prompt token (1).
 */
const CACHE_CREATION_RATIO_BY_PREFIX: Readonly<Record<string, number>> = { claude: 1.25 };

/** The prefix table as pairs, made once: walked on every admission. */
const CACHE_CREATION_PREFIXES = Object.entries(CACHE_CREATION_RATIO_BY_PREFIX);

export function cacheCreationRatioFor(model: string, overrides: Readonly<Record<string, number>> = {}): number {
  const catalogRatio = overrideOf(overrides, model) ?? catalogPrice(model)?.cacheWriteRatio;
  if (catalogRatio !== undefined) return catalogRatio;
  for (const [prefix, ratio] of CACHE_CREATION_PREFIXES) if (model.startsWith(prefix)) return ratio;
  return 1;
}

/** The prefix table's answer per model name, found once (bounded: model names come from clients). */
const ratioByModel = new Map<string, number>();
const MAX_CACHED_MODELS = 1000;

/** The CompletionRatio option's entry, else the catalog, else the hand tables, else 1. */
export function completionRatioFor(model: string, overrides: Readonly<Record<string, number>> = {}): number {
  if (Number.isFinite(overrides[model]) && overrides[model] >= 0) return overrides[model];
  const catalogRatio = catalogPrice(model)?.completionRatio;
  if (catalogRatio !== undefined) return catalogRatio;
  if (Object.hasOwn(COMPLETION_RATIO_BY_MODEL, model)) return COMPLETION_RATIO_BY_MODEL[model];
  let ratio = ratioByModel.get(model);
  if (ratio === undefined) {
    let best = '';
    for (const prefix of Object.keys(COMPLETION_RATIO_BY_PREFIX)) {
      if (model.startsWith(prefix) && prefix.length > best.length) best = prefix;
    }
    ratio = best ? COMPLETION_RATIO_BY_PREFIX[best] : 1;
    if (ratioByModel.size >= MAX_CACHED_MODELS) ratioByModel.clear();
    ratioByModel.set(model, ratio);
  }
  return ratio;
}

/** The ratios a charge is computed with, so a log row can spell out its formula. */
export interface PriceRatios {
  /** modelRatio x groupRatio */
  ratio: number;
  modelRatio: number;
  groupRatio: number;
  completionRatio: number;
  cachedPromptRatio: number;
  cacheCreationRatio: number;
  /** Where modelRatio came from: the ModelRatio option, or the catalog's default. */
  source: 'option' | 'catalog';
}

export type PriceLookup = ({ known: true } & PriceRatios) | { known: false; reason: string };

/**
 * The price of a model for a group: the ModelRatio option's entry, else the
 * catalog's. Policy for a model in neither: it is not billed at a made-up
 * ratio; the lookup fails and the relay refuses the request with a message
 * telling the operator to add the model to ModelRatio. An unknown group is
 * priced at 1 (the group only scales a known price).
 */
export function lookupPrice(
  model: string,
  group: string,
  modelRatio: Readonly<Record<string, number>>,
  groupRatio: Readonly<Record<string, number>>,
  completionRatio: Readonly<Record<string, number>> = {},
): PriceLookup {
  const price = modelPrice(model, group, modelRatio, groupRatio);
  if (!price.known) return price;
  const fromOption = Object.hasOwn(modelRatio, model) && Number.isFinite(modelRatio[model]) && modelRatio[model] >= 0;
  return {
    known: true,
    ratio: price.ratio,
    modelRatio: price.modelRatio,
    groupRatio: price.groupRatio,
    completionRatio: completionRatioFor(model, completionRatio),
    cachedPromptRatio: cachedPromptRatioFor(model),
    cacheCreationRatio: cacheCreationRatioFor(model),
    source: fromOption ? 'option' : 'catalog',
  };
}

export type AdmissionPrice = { known: true; ratio: number; modelRatio: number; groupRatio: number } | { known: false; reason: string };

/**
 * lookupPrice's ratio alone (what an admission holds): the ModelRatio option's
 * entry, else the catalog's, times the group's; without the completion and
 * cache ratios, which only a settlement reads.
 */
export function modelPrice(
  model: string,
  group: string,
  modelRatio: Readonly<Record<string, number>>,
  groupRatio: Readonly<Record<string, number>>,
): AdmissionPrice {
  const configured = Object.hasOwn(modelRatio, model) ? modelRatio[model] : undefined;
  const fromOption = Number.isFinite(configured) && (configured as number) >= 0;
  const base = fromOption ? (configured as number) : catalogPrice(model)?.modelRatio;
  if (base === undefined) {
    return { known: false, reason: `model ${model} has no price: an administrator must add it to ModelRatio` };
  }
  const groupFactor = Number.isFinite(groupRatio[group]) && groupRatio[group] >= 0 ? groupRatio[group] : 1;
  return { known: true, ratio: base * groupFactor, modelRatio: base, groupRatio: groupFactor };
}

/** What computeQuota prices: the usage (an absent cache read is none) and the ratios. */
export interface ChargeInput extends Omit<Usage, 'cachedPromptTokens' | 'reasoningTokens'> {
  cachedPromptTokens?: number;
  /** modelRatio x groupRatio */
  ratio: number;
  completionRatio: number;
  cachedPromptRatio?: number;
  /** What a cache-write token costs as a share of a prompt token (1 when absent). */
  cacheCreationRatio?: number;
}

const nonNegativeInteger = (value: number | undefined) =>
  Number.isFinite(value) && (value as number) > 0 ? Math.floor(value as number) : 0;

/**
 * quota = floor((uncachedPrompt + cached x cachedRatio + written x writtenRatio + floor(completion x completionRatio)) x ratio),
 * at least 1 for any priced request that used tokens, 0 when no token was used.
 */
export function computeQuota(input: ChargeInput): number {
  const prompt = nonNegativeInteger(input.promptTokens);
  const completion = nonNegativeInteger(input.completionTokens);
  const cached = Math.min(nonNegativeInteger(input.cachedPromptTokens), prompt);
  const written = Math.min(nonNegativeInteger(input.cacheCreationTokens), prompt - cached);
  if (prompt + completion === 0) return 0;
  const cachedRatio = input.cachedPromptRatio ?? DEFAULT_CACHED_PROMPT_RATIO;
  const writtenRatio = input.cacheCreationRatio ?? 1;
  const weightedTokens =
    prompt - cached - written + cached * cachedRatio + written * writtenRatio + Math.floor(completion * input.completionRatio);
  const quota = Math.floor(weightedTokens * input.ratio);
  if (input.ratio > 0 && quota <= 0) return 1;
  return Math.max(0, quota);
}

/** What ModelMaxOutputTokens says for a model, else the catalog; undefined when neither knows (or one says 0: a model with no output). */
export function configuredMaxOutputTokens(model: string, table: Readonly<Record<string, number>>): number | undefined {
  const configured = Object.hasOwn(table, model) ? table[model] : catalogMaxOutputTokens(model);
  return configured !== undefined && Number.isFinite(configured) && configured > 0 ? Math.floor(configured) : undefined;
}

/** shown()'s text per number: the ratios a formula prints repeat on every request (bounded: cleared when full). */
const shownNumbers = new Map<number, string>();

/** A number as the formula shows it: no float noise (0.30000000000000004), at most six decimals. */
function shown(value: number): string {
  let text = shownNumbers.get(value);
  if (text === undefined) {
    text = String(Number(value.toFixed(6)));
    if (shownNumbers.size >= 1000) shownNumbers.clear();
    shownNumbers.set(value, text);
  }
  return text;
}

/**
 * computeQuota's arithmetic with its numbers, for the log: the weighted
 * tokens, the model ratio and the group ratio (whose product is `ratio`), and
 * the quota charged, e.g. "(1200 + 300 × 2) × 1.5 × 1 = 2700". When rounding
 * down (or the minimum of 1) moved the result, the exact product comes first:
 * "(10 + 7 × 3) × 0.75 × 1 = 23.25 → 23".
 */
export function quotaFormula(input: ChargeInput, modelRatio: number, groupRatio: number, quota: number): string {
  const prompt = nonNegativeInteger(input.promptTokens);
  const completion = nonNegativeInteger(input.completionTokens);
  if (prompt + completion === 0) return `0 tokens = ${quota}`;
  const cached = Math.min(nonNegativeInteger(input.cachedPromptTokens), prompt);
  const written = Math.min(nonNegativeInteger(input.cacheCreationTokens), prompt - cached);
  const cachedRatio = input.cachedPromptRatio ?? DEFAULT_CACHED_PROMPT_RATIO;
  const writtenRatio = input.cacheCreationRatio ?? 1;
  const terms = [String(prompt - cached - written)];
  if (cached > 0) terms.push(`${cached} × ${shown(cachedRatio)}`);
  if (written > 0) terms.push(`${written} × ${shown(writtenRatio)}`);
  if (completion > 0) {
    const weightedCompletion = completion * input.completionRatio;
    // computeQuota rounds the completion's share down: the formula says so when that changed it
    if (input.completionRatio === 1) terms.push(String(completion));
    else
      terms.push(
        Number.isInteger(weightedCompletion)
          ? `${completion} × ${shown(input.completionRatio)}`
          : `⌊${completion} × ${shown(input.completionRatio)}⌋`,
      );
  }
  const weighted =
    prompt - cached - written + cached * cachedRatio + written * writtenRatio + Math.floor(completion * input.completionRatio);
  const exact = weighted * input.ratio;
  const product = `(${terms.join(' + ')}) × ${shown(modelRatio)} × ${shown(groupRatio)}`;
  return Math.abs(exact - quota) < 1e-9 ? `${product} = ${quota}` : `${product} = ${shown(exact)} → ${quota}`;
}

/** What ModelMaxOutputTokens says for a model, else the catalog, else DEFAULT_MAX_OUTPUT_TOKENS. */
export function maxOutputTokensFor(model: string, table: Readonly<Record<string, number>>): number {
  const configured = Object.hasOwn(table, model) ? table[model] : undefined;
  if (Number.isFinite(configured) && (configured as number) >= 0) return Math.floor(configured as number);
  return catalogMaxOutputTokens(model) ?? DEFAULT_MAX_OUTPUT_TOKENS;
}

/**
 * What to reserve before calling the upstream: the most the request can cost.
 * The prompt once plus, for each of the `n` answers, max_tokens when the
 * client set it, else the model's maximum output (ModelMaxOutputTokens),
 * priced at the ratio and the completion ratio. A provider that still answers
 * more (it ignored the limit) is charged the excess in full at settlement.
 */
export function reservationQuota(options: {
  promptTokens: number;
  maxTokens?: number;
  /** The model's maximum output (maxOutputTokensFor). */
  maxOutputTokens: number;
  /** Answers asked for (chat/completions `n`), 1 when absent. */
  n?: number;
  ratio: number;
  completionRatio: number;
}): number {
  const maxTokens = nonNegativeInteger(options.maxTokens);
  const perAnswer = maxTokens > 0 ? maxTokens : nonNegativeInteger(options.maxOutputTokens);
  const answers = Math.max(1, nonNegativeInteger(options.n));
  return computeQuota({
    promptTokens: nonNegativeInteger(options.promptTokens),
    completionTokens: perAnswer * answers,
    ratio: options.ratio,
    completionRatio: options.completionRatio,
  });
}

/** Fewer output tokens than this are not worth an answer: below it a lowered request is refused instead. */
export const MIN_LOWERED_OUTPUT_TOKENS = 16;

/**
 * The largest output limit per answer (at most `maxOutputTokens`) whose
 * reservation `available` quota pays for, or 0 when that is under
 * MIN_LOWERED_OUTPUT_TOKENS.
 */
export function affordableOutputTokens(options: {
  available: number;
  promptTokens: number;
  maxOutputTokens: number;
  n?: number;
  ratio: number;
  completionRatio: number;
}): number {
  const answers = Math.max(1, nonNegativeInteger(options.n));
  const cost = (tokens: number) => reservationQuota({ ...options, maxTokens: tokens, n: answers });
  if (options.ratio <= 0 || options.completionRatio <= 0) return nonNegativeInteger(options.maxOutputTokens);
  const left = options.available / options.ratio - nonNegativeInteger(options.promptTokens);
  let tokens = Math.min(nonNegativeInteger(options.maxOutputTokens), Math.floor(left / options.completionRatio / answers) + 1);
  // the estimate above is within a token or two of the answer; rounding in computeQuota settles the rest
  while (tokens > 0 && cost(tokens) > options.available) tokens -= 1;
  return tokens >= MIN_LOWERED_OUTPUT_TOKENS ? tokens : 0;
}

/** v0.5.3's image size ratios; a size outside this table has no price and is refused. */
export const IMAGE_SIZE_RATIO: Readonly<Record<string, number>> = {
  '256x256': 1,
  '512x512': 1.125,
  '1024x1024': 1.25,
};

/**
 * Price of `count` images: floor(ratio x sizeRatio x 1000) per image, so
 * dall-e at ratio 8 costs 8000 / 9000 / 10000 quota by size. Unlike v0.5.3 a
 * missing `n` means one image (OpenAI's default), never a free request.
 */
export function imageQuota(ratio: number, size: string | undefined, count: number): number {
  const sizeRatio = IMAGE_SIZE_RATIO[size || '256x256'] ?? 1;
  return Math.floor(ratio * sizeRatio * 1000) * nonNegativeInteger(count);
}

/** imageQuota's arithmetic with its numbers, for the log: "⌊15 × 1 × 1.5 × 1000⌋ × 2 = 45000". */
export function imageQuotaFormula(modelRatio: number, groupRatio: number, size: string | undefined, count: number, quota: number): string {
  const sizeRatio = IMAGE_SIZE_RATIO[size || '256x256'] ?? 1;
  return `⌊${shown(modelRatio)} × ${shown(groupRatio)} × ${shown(sizeRatio)} × 1000⌋ × ${nonNegativeInteger(count)} = ${quota}`;
}

/**
 * What one rerank search unit weighs (Cohere bills a query with up to 100
 * documents as one): the price of this many tokens at the model's ratio, so
 * ratio 1 = US$0.002 per search = US$2 per 1,000 searches (Cohere's
 * rerank-v3.5). A token-billed reranker is priced like any prompt.
 */
export const SEARCH_UNIT_TOKENS = 1000;

/** Price of `units` search units: floor(ratio x 1000) each. */
export function searchUnitQuota(ratio: number, units: number): number {
  return Math.floor(ratio * SEARCH_UNIT_TOKENS) * nonNegativeInteger(units);
}

/** searchUnitQuota's arithmetic with its numbers, for the log: "⌊1 × 1 × 1000⌋ × 2 = 2000". */
export function searchUnitQuotaFormula(modelRatio: number, groupRatio: number, units: number, quota: number): string {
  return `⌊${shown(modelRatio)} × ${shown(groupRatio)} × ${SEARCH_UNIT_TOKENS}⌋ × ${nonNegativeInteger(units)} = ${quota}`;
}

/**
 * Transcriptions and translations: the upstream does not say how long the
 * audio was, so they are billed as a fixed AUDIO_REQUEST_TOKENS of "prompt"
 * (the upload, and the minimum charge) plus the tokens of the returned text
 * as completion tokens, at the model's ratio (whisper-1: 10).
 */
export const AUDIO_REQUEST_TOKENS = 10;

/** US$ per million tokens at `ratio` (quota per token) when `quotaPerUnit` quota make a dollar; to the cent's hundredth. */
const dollarsPerMillion = (ratio: number, quotaPerUnit: number) => Math.round((ratio * 1_000_000 * 10_000) / quotaPerUnit) / 10_000;

/**
 * The cache ratios worth showing: the operator's, the catalog's or a provider
 * table's. The 0.5 fallback for reads and the 1 for writes are left out, so a
 * model whose vendor has no prompt cache shows none.
 */
function knownCacheRatios(
  model: string,
  readOverrides: Readonly<Record<string, number>> = {},
  writeOverrides: Readonly<Record<string, number>> = {},
) {
  const cacheRead = overrideOf(readOverrides, model) ?? catalogPrice(model)?.cacheReadRatio ?? CACHED_PROMPT_RATIO_BY_MODEL[model];
  const cacheWrite =
    overrideOf(writeOverrides, model) ??
    catalogPrice(model)?.cacheWriteRatio ??
    (model.startsWith('claude') ? cacheCreationRatioFor(model) : undefined);
  return { cacheRead: Number.isFinite(cacheRead) ? cacheRead : undefined, cacheWrite };
}

/**
 * A model's price when no ratio option overrides it: the catalog's, or the
 * built-in ModelRatio default (`defaultModelRatio`) for a model the catalog
 * lacks; for the settings' price table, which shows what an override replaced
 * and resets a row to it.
 */
export function defaultModelPrice(model: string, defaultModelRatio: Readonly<Record<string, number>>): DefaultModelPrice {
  const modelRatio = overrideOf(defaultModelRatio, model) ?? catalogPrice(model)?.modelRatio;
  const { cacheRead, cacheWrite } = knownCacheRatios(model);
  // the catalog's shares are divisions of its prices (0.3 / 3 = 0.09999999999999999)
  return {
    model,
    ...(modelRatio !== undefined ? { model_ratio: tidyRatio(modelRatio) } : {}),
    completion_ratio: tidyRatio(completionRatioFor(model)),
    ...(cacheRead !== undefined ? { cache_read_ratio: tidyRatio(cacheRead) } : {}),
    ...(cacheWrite !== undefined ? { cache_write_ratio: tidyRatio(cacheWrite) } : {}),
  };
}

/** `lookupPrice`'s answer in dollars per million tokens; undefined for a model without a price. */
export function readablePrice(
  model: string,
  group: string,
  options: {
    modelRatio: Readonly<Record<string, number>>;
    groupRatio: Readonly<Record<string, number>>;
    completionRatio: Readonly<Record<string, number>>;
    cacheReadRatio?: Readonly<Record<string, number>>;
    cacheWriteRatio?: Readonly<Record<string, number>>;
    quotaPerUnit: number;
  },
): ModelPrice | undefined {
  const price = lookupPrice(model, group, options.modelRatio, options.groupRatio, options.completionRatio);
  if (!price.known) return undefined;
  const perMillion = (share: number) => dollarsPerMillion(price.ratio * share, options.quotaPerUnit);
  const { cacheRead, cacheWrite } = knownCacheRatios(model, options.cacheReadRatio, options.cacheWriteRatio);
  return {
    model,
    input: perMillion(1),
    output: perMillion(price.completionRatio),
    ...(cacheRead !== undefined ? { cache_read: perMillion(cacheRead) } : {}),
    ...(cacheWrite !== undefined && Number.isFinite(cacheWrite) ? { cache_write: perMillion(cacheWrite) } : {}),
    source: price.source,
  };
}
