// The settings' price table as data, kept free of React: each model's price in
// US$ per million tokens from its default (GET /api/pricing/defaults) and the
// four ratio options over it, and what saving or resetting a row writes back
// into those options. Only the row's own entries change; every other entry of
// the options stays as it was.
import { DEFAULT_MODEL_RATIO, type OptionKey } from '../../common/options';
import { dollarsToRatios, ratiosToDollars, tidyRatio, type DefaultModelPrice, type DollarPrices } from '../../common/pricing';

/** The four ratio options a row is made of, in the order a row's save sends them. */
export const PRICE_OPTION_KEYS = [
  'ModelRatio',
  'CompletionRatio',
  'CacheReadRatio',
  'CacheWriteRatio',
] as const satisfies readonly OptionKey[];
export type PriceOptionKey = (typeof PRICE_OPTION_KEYS)[number];
export type RatioTables = Record<PriceOptionKey, Record<string, number>>;

export interface PriceRow {
  model: string;
  /** Undefined: the model has no price (the relay refuses it). */
  prices?: DollarPrices;
  /** Whether a ratio option changes the model's default price. */
  overridden: boolean;
}

/** A stored ratio option as an object; a table that does not parse reads as empty (the raw field shows it as it is). */
export function parseRatioTable(raw: string): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

const has = (table: Record<string, number>, model: string) => Object.hasOwn(table, model);

/**
 * The built-in table acts only through the ModelRatio option's default value
 * (the catalog never prices its models), so its entry is not an override, and
 * its absence from the option is one: the model then has no price.
 */
const builtIn = (model: string) => (Object.hasOwn(DEFAULT_MODEL_RATIO, model) ? DEFAULT_MODEL_RATIO[model] : undefined);

function modelRatioOf(entry: DefaultModelPrice, tables: RatioTables): number | undefined {
  if (has(tables.ModelRatio, entry.model)) return tables.ModelRatio[entry.model];
  return builtIn(entry.model) === undefined ? entry.model_ratio : undefined;
}

export function priceRow(entry: DefaultModelPrice, tables: RatioTables, quotaPerUnit: number): PriceRow {
  const { model } = entry;
  const modelRatio = modelRatioOf(entry, tables);
  const modelOverridden = builtIn(model) === undefined ? has(tables.ModelRatio, model) : tables.ModelRatio[model] !== builtIn(model);
  const overridden =
    modelOverridden || has(tables.CompletionRatio, model) || has(tables.CacheReadRatio, model) || has(tables.CacheWriteRatio, model);
  if (modelRatio === undefined) return { model, overridden };
  const ratios = {
    modelRatio,
    completionRatio: has(tables.CompletionRatio, model) ? tables.CompletionRatio[model] : entry.completion_ratio,
    cacheReadRatio: has(tables.CacheReadRatio, model) ? tables.CacheReadRatio[model] : entry.cache_read_ratio,
    cacheWriteRatio: has(tables.CacheWriteRatio, model) ? tables.CacheWriteRatio[model] : entry.cache_write_ratio,
  };
  return { model, prices: ratiosToDollars(ratios, quotaPerUnit), overridden };
}

/** A table with the model's entry set, or removed when `value` is undefined; the other entries kept in their order. */
function withEntry(table: Record<string, number>, model: string, value: number | undefined): Record<string, number> {
  const next = { ...table };
  if (value === undefined) delete next[model];
  else next[model] = value;
  return next;
}

/** The option values that differ from `tables` after `next`, as the raw fields show them (one entry a line). */
function changedOptions(tables: RatioTables, next: RatioTables): Partial<Record<PriceOptionKey, string>> {
  const changes: Partial<Record<PriceOptionKey, string>> = {};
  for (const key of PRICE_OPTION_KEYS) {
    if (JSON.stringify(tables[key]) !== JSON.stringify(next[key])) changes[key] = JSON.stringify(next[key], null, 2);
  }
  return changes;
}

/**
 * What saving typed prices writes: the model ratio from the input price, and
 * the output and cache prices as shares of it. An entry equal to the default
 * is left out (the catalog's price holds), except the built-in table's, which
 * lives in ModelRatio itself. A blank cache price means the default share.
 * Undefined when the prices cannot be ratios (dollarsToRatios).
 */
export function editedOptions(
  entry: DefaultModelPrice,
  tables: RatioTables,
  prices: DollarPrices,
  quotaPerUnit: number,
): Partial<Record<PriceOptionKey, string>> | undefined {
  const ratios = dollarsToRatios(prices, quotaPerUnit);
  if (!ratios) return undefined;
  const { model } = entry;
  const unlessDefault = (value: number | undefined, fallback: number | undefined) =>
    value === undefined || ratios.modelRatio === 0 || (fallback !== undefined && value === tidyRatio(fallback)) ? undefined : value;
  const keepModelRatio =
    builtIn(model) !== undefined || entry.model_ratio === undefined || ratios.modelRatio !== tidyRatio(entry.model_ratio);
  return changedOptions(tables, {
    ModelRatio: withEntry(tables.ModelRatio, model, keepModelRatio ? ratios.modelRatio : undefined),
    CompletionRatio: withEntry(tables.CompletionRatio, model, unlessDefault(ratios.completionRatio, entry.completion_ratio)),
    CacheReadRatio: withEntry(tables.CacheReadRatio, model, unlessDefault(ratios.cacheReadRatio, entry.cache_read_ratio)),
    CacheWriteRatio: withEntry(tables.CacheWriteRatio, model, unlessDefault(ratios.cacheWriteRatio, entry.cache_write_ratio)),
  });
}

/** What "reset to the catalog" writes: the row's entries gone, the built-in table's model ratio back. */
export function resetOptions(entry: DefaultModelPrice, tables: RatioTables): Partial<Record<PriceOptionKey, string>> {
  const { model } = entry;
  return changedOptions(tables, {
    ModelRatio: withEntry(tables.ModelRatio, model, builtIn(model)),
    CompletionRatio: withEntry(tables.CompletionRatio, model, undefined),
    CacheReadRatio: withEntry(tables.CacheReadRatio, model, undefined),
    CacheWriteRatio: withEntry(tables.CacheWriteRatio, model, undefined),
  });
}
