// What a source database is (one-api of which age, or new-api), told from its
// columns, and how its channel type numbers read here. one-api's numbers are
// ours (Switchboard follows one-api's table); new-api renumbered from type 2 on
// (2 is Midjourney there, 4 Ollama, 34 Cohere, 43 DeepSeek ...), so its
// types go through NEW_API_TYPES. A type without a row here is left out of
// the import, named in the report (NOT_RELAYED_YET).
import { findChannelType } from '../../common/channelTypes';
import { compactJsonKeys } from '../../common/serviceAccountKey';

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
    return {
      product: 'new-api',
      version: has(columns, 'channels', 'channel_info') ? 'new-api (a recent release: multi-key channels)' : 'new-api (an older release)',
    };
  }
  if (has(columns, 'tokens', 'subnet') || has(columns, 'tokens', 'models') || has(columns, 'channels', 'config')) {
    return { product: 'one-api', version: 'one-api v0.6 or later' };
  }
  if (has(columns, 'channels', 'priority')) return { product: 'one-api', version: 'one-api v0.5.4 to v0.5.x' };
  return { product: 'one-api', version: 'one-api v0.5.3 or earlier' };
}

/**
 * new-api type → ours, for every new-api type one-api also has. A target
 * without a row in common/channelTypes.ts yet (AWS, Vertex AI, Coze ...) is
 * left out until the row exists, then carried with no change here.
 */
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
  19: 19,
  20: 20,
  21: 21,
  22: 22,
  23: 23,
  24: 24,
  25: 25,
  // ZhipuV4: our Zhipu type with an empty `other` speaks the v4 API
  26: 16,
  31: 31,
  // AWS (Bedrock): one-api's AWS Claude
  33: 33,
  34: 35,
  35: 27,
  // Jina: a type of ours past one-api's numbers
  38: 52,
  39: 37,
  40: 44,
  // VertexAi: its key is the service-account JSON, `other` its region
  41: 42,
  42: 28,
  43: 36,
  45: 40,
  46: 47,
  48: 45,
  49: 34,
  56: 46,
};

/**
 * The source types Switchboard does not relay yet, with the vendor's name for
 * the import report: the one list to shrink as types gain their row in
 * common/channelTypes.ts (a test fails while a number here has a row, or a
 * type with no row is missing here). one-api's names from
 * relay/channeltype/define.go, new-api's from constant/channel.go.
 */
export const NOT_RELAYED_YET: Readonly<Record<Product, Readonly<Record<number, string>>>> = {
  'one-api': {},
  'new-api': {
    2: 'Midjourney',
    5: 'Midjourney Plus',
    27: 'Perplexity',
    36: 'Suno',
    37: 'Dify',
    44: 'MokaAI',
    47: 'Xinference',
    50: 'Kling',
    51: 'Jimeng',
    52: 'Vidu',
    53: 'Submodel',
    54: 'Doubao video',
    55: 'Sora',
    57: 'Codex',
    58: 'Kuaizi Lizhen',
    100: 'BlockRun',
    101: 'BlockRun video',
  },
};

/** Why a channel of a source type is left out: the type named where it is known, always "not relayed yet". */
export function unrelayedReason(product: Product, sourceType: number): string {
  const name = NOT_RELAYED_YET[product][sourceType];
  return `channel type ${sourceType}${name ? ` (${name})` : ''} is not relayed yet`;
}

/** A channel's `config` JSON (one-api keeps type-specific settings there), or undefined. */
function configObject(config: unknown): Record<string, unknown> | undefined {
  if (typeof config !== 'string' || !config.trim()) return undefined;
  try {
    const parsed: unknown = JSON.parse(config);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** one-api types that keep in their `config` JSON what Switchboard reads from `other`, and the field. */
const OTHER_IN_CONFIG: Record<number, string> = { 37: 'user_id', 21: 'library_id' };

const isVertex = (product: Product, sourceType: number) =>
  (product === 'one-api' && sourceType === 42) || (product === 'new-api' && sourceType === 41);

/**
 * The `other` of a Vertex AI channel (`region` or `region|project`): one-api
 * keeps the region and project in `config`; new-api keeps the region in
 * `other`, or a JSON map of regions by model whose `default` is the one used.
 */
function vertexOther(product: Product, other: string, config: unknown): string {
  if (product === 'one-api') {
    const settings = configObject(config);
    const region = (typeof settings?.region === 'string' ? settings.region.trim() : '') || other.trim();
    const project = typeof settings?.vertex_ai_project_id === 'string' ? settings.vertex_ai_project_id.trim() : '';
    return project ? `${region || 'us-central1'}|${project}` : region;
  }
  const regions = configObject(other);
  if (!regions) return other.trim();
  return typeof regions.default === 'string' ? regions.default.trim() : '';
}

/**
 * one-api's AWS Claude (33) saved with its credentials only in `config`
 * (`ak`, `sk`, `region`, where one-api v0.6 reads them): `AK|SK|region`.
 */
function awsKey(key: string, config: unknown): string {
  if (key.split('|').length >= 3) return key;
  const settings = configObject(config);
  const parts = [settings?.ak, settings?.sk, settings?.region].map((part) => (typeof part === 'string' ? part.trim() : ''));
  return parts.every(Boolean) ? parts.join('|') : key;
}

/**
 * The key a channel carries here: the source's, except for one-api's AWS
 * Claude (awsKey), and that a Vertex AI
 * channel's service-account JSON (one-api keeps it in `config`'s
 * `vertex_ai_adc`) is stored on one line, as the channel API stores it.
 */
export function importedKey(product: Product, sourceType: number, key: string, config: unknown): string {
  if (product === 'one-api' && sourceType === 33) return awsKey(key, config);
  if (!isVertex(product, sourceType)) return key;
  const adc = product === 'one-api' ? configObject(config)?.vertex_ai_adc : undefined;
  return compactJsonKeys(typeof adc === 'string' && adc.trim() ? adc : key);
}

/**
 * The `other` a channel carries here: the source's, except for one-api's
 * Cloudflare (37) and AI Proxy library (21), which keep the account id
 * (`user_id`) and the library id (`library_id`) in their `config` JSON where
 * Switchboard reads them from `other`, and Vertex AI (vertexOther).
 */
export function importedOther(product: Product, sourceType: number, other: string, config: unknown): string {
  if (isVertex(product, sourceType)) return vertexOther(product, other, config);
  const field = OTHER_IN_CONFIG[sourceType];
  if (product !== 'one-api' || !field || other.trim()) return other;
  const value = configObject(config)?.[field];
  return typeof value === 'string' ? value.trim() : other;
}

/** The channel type here for a source type, or undefined when Switchboard does not relay it. */
export function targetChannelType(product: Product, sourceType: number): number | undefined {
  const mapped = product === 'new-api' ? NEW_API_TYPES[sourceType] : sourceType;
  return mapped !== undefined && findChannelType(mapped) ? mapped : undefined;
}
