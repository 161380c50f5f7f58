// What a source database is (one-api of which age, or new-api), told from its
// columns, and how its channel type numbers read here. one-api's numbers are
// ours (Switchboard follows one-api's table); new-api renumbered from type 2 on
// (2 is Midjourney there, 4 Ollama, 34 Cohere, 43 DeepSeek ...), so its
// types go through NEW_API_TYPES.
import { findChannelType } from '../../common/channelTypes';

export type Product = 'one-api' | 'new-api';

export interface Detected {
  product: Product;
  /** A human description of the version the columns point to. */
  version: string;
}

const has = (columns: Map<string, Set<string>>, table: string, column: string) => columns.get(table)?.has(column) ?? false;

/** Throws when the tables one-api and new-api both have are missing. */
export function detectProduct(columns: Map<string, Set<string>>): Detected {
  const missing = ['users', 'tokens', 'channels'].filter((table) => !columns.has(table));
  if (missing.length) throw new Error(`not a one-api or new-api database: no ${missing.join(', ')} table`);
  if (has(columns, 'users', 'aff_count') || has(columns, 'tokens', 'model_limits') || has(columns, 'channels', 'tag')) {
    return { product: 'new-api', version: has(columns, 'channels', 'channel_info') ? 'new-api (a recent release: multi-key channels)' : 'new-api (an older release)' };
  }
  if (has(columns, 'tokens', 'subnet') || has(columns, 'tokens', 'models') || has(columns, 'channels', 'config')) {
    return { product: 'one-api', version: 'one-api v0.6 or later' };
  }
  if (has(columns, 'channels', 'priority')) return { product: 'one-api', version: 'one-api v0.5.4 to v0.5.x' };
  return { product: 'one-api', version: 'one-api v0.5.3 or earlier' };
}

/** new-api type → ours, for the types both relay. */
const NEW_API_TYPES: Record<number, number> = {
  1: 1,
  3: 3,
  4: 30,
  6: 6,
  7: 7,
  8: 8,
  9: 9,
  10: 10,
  11: 11,
  12: 12,
  13: 13,
  14: 14,
  15: 15,
  16: 16,
  17: 17,
  18: 18,
  20: 20,
  24: 24,
  25: 25,
  34: 35,
  40: 44,
  42: 28,
  43: 36,
  48: 45,
};

/** The channel type here for a source type, or undefined when Switchboard does not relay it. */
export function targetChannelType(product: Product, sourceType: number): number | undefined {
  const mapped = product === 'new-api' ? NEW_API_TYPES[sourceType] : sourceType;
  return mapped !== undefined && findChannelType(mapped) ? mapped : undefined;
}
