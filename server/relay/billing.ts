// Quota arithmetic for relayed requests, kept pure so every rule is tested in
// isolation. Formulas follow one-api v0.5.3 (1 quota = 1 token at model ratio 1,
// 500 000 quota = US$1) with its money defects fixed: no silent price for an
// unknown model, cached prompt tokens priced on their own, never a negative charge.
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../common/options';

/** Completion-token multipliers by model-name prefix (longest prefix wins). */
export const COMPLETION_RATIO_BY_PREFIX: Readonly<Record<string, number>> = {
  'gpt-3.5': 4 / 3,
  'gpt-4': 2,
  'claude-instant-1': 3.38,
  'claude-2': 2.965517,
};

/** Cached prompt tokens cost this share of a normal prompt token unless a ratio is configured. */
export const DEFAULT_CACHED_PROMPT_RATIO = 0.5;

/** The prefix table's answer per model name, found once (bounded: model names come from clients). */
const ratioByModel = new Map<string, number>();
const MAX_CACHED_MODELS = 1000;

export function completionRatioFor(model: string, overrides: Readonly<Record<string, number>> = {}): number {
  if (Number.isFinite(overrides[model])) return overrides[model];
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

export type PriceLookup =
  | { known: true; ratio: number; modelRatio: number; groupRatio: number }
  | { known: false; reason: string };

/**
 * The price of a model for a group. Policy for unknown models: they are not
 * billed at a made-up ratio; the lookup fails and the relay refuses the request
 * with a message telling the operator to add the model to ModelRatio. An
 * unknown group is priced at 1 (the group only scales a known price).
 */
export function lookupPrice(
  model: string,
  group: string,
  modelRatio: Readonly<Record<string, number>>,
  groupRatio: Readonly<Record<string, number>>,
): PriceLookup {
  const base = modelRatio[model];
  if (!Number.isFinite(base) || base < 0) {
    return { known: false, reason: `model ${model} has no price: an administrator must add it to ModelRatio` };
  }
  const groupFactor = Number.isFinite(groupRatio[group]) && groupRatio[group] >= 0 ? groupRatio[group] : 1;
  return { known: true, ratio: base * groupFactor, modelRatio: base, groupRatio: groupFactor };
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the upstream served from its cache (included in promptTokens). */
  cachedPromptTokens?: number;
}

export interface ChargeInput extends Usage {
  /** modelRatio x groupRatio */
  ratio: number;
  completionRatio: number;
  cachedPromptRatio?: number;
}

const nonNegativeInteger = (value: number | undefined) =>
  Number.isFinite(value) && (value as number) > 0 ? Math.floor(value as number) : 0;

/**
 * quota = floor((uncachedPrompt + cached x cachedRatio + floor(completion x completionRatio)) x ratio),
 * at least 1 for any priced request that used tokens, 0 when no token was used.
 */
export function computeQuota(input: ChargeInput): number {
  const prompt = nonNegativeInteger(input.promptTokens);
  const completion = nonNegativeInteger(input.completionTokens);
  const cached = Math.min(nonNegativeInteger(input.cachedPromptTokens), prompt);
  if (prompt + completion === 0) return 0;
  const cachedRatio = input.cachedPromptRatio ?? DEFAULT_CACHED_PROMPT_RATIO;
  const weightedTokens = prompt - cached + cached * cachedRatio + Math.floor(completion * input.completionRatio);
  const quota = Math.floor(weightedTokens * input.ratio);
  if (input.ratio > 0 && quota <= 0) return 1;
  return Math.max(0, quota);
}

/** What ModelMaxOutputTokens says for a model, else DEFAULT_MAX_OUTPUT_TOKENS. */
export function maxOutputTokensFor(model: string, table: Readonly<Record<string, number>>): number {
  const configured = table[model];
  return Number.isFinite(configured) && configured >= 0 ? Math.floor(configured) : DEFAULT_MAX_OUTPUT_TOKENS;
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
  return computeQuota({ promptTokens: nonNegativeInteger(options.promptTokens), completionTokens: perAnswer * answers, ratio: options.ratio, completionRatio: options.completionRatio });
}

/** Fewer output tokens than this are not worth an answer: below it a lowered request is refused instead. */
export const MIN_LOWERED_OUTPUT_TOKENS = 16;

/**
 * The largest output limit per answer (at most `maxOutputTokens`) whose
 * reservation `available` quota pays for, or 0 when that is under
 * MIN_LOWERED_OUTPUT_TOKENS.
 */
export function affordableOutputTokens(options: { available: number; promptTokens: number; maxOutputTokens: number; n?: number; ratio: number; completionRatio: number }): number {
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

/**
 * Transcriptions and translations: the upstream does not say how long the
 * audio was, so they are billed as a fixed AUDIO_REQUEST_TOKENS of "prompt"
 * (the upload, and the minimum charge) plus the tokens of the returned text
 * as completion tokens, at the model's ratio (whisper-1: 10).
 */
export const AUDIO_REQUEST_TOKENS = 10;
