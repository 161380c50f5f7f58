// The fields of a channel's create and edit forms, validated: its type, name,
// models and groups, model mapping, priority and weight, base URL and account
// id, test model; and its keys as sent (their shape, their text, the flags
// that say how a multi-key channel holds them). Used by the routes of channel.ts.
import { findChannelType, keyFitsFormat, otherMissing } from '../../../common/channelTypes';
import { compactJsonKeys, readServiceAccountKey } from '../../../common/serviceAccountKey';
import type { KeyStrategy } from '../../../common/records';
import { splitList, type ChannelFields } from '../../repositories/channels';

type Parsed = { value: ChannelFields } | { error: string };

/** The channel fields of a create or edit body, as its schema (inputSchemas.ts) lets them through: text, digits or numbers, or null. */
type ChannelFieldsBody = { [K in keyof ChannelFields]?: string | number | null };

/** A field of the body, or of the stored channel when an edit leaves it out. */
type FieldPicker = <K extends keyof ChannelFields>(key: K) => ChannelFieldsBody[K] | ChannelFields[K];

/** What names the channel and what it serves: its type, name, models and groups. */
function identityOf(pick: FieldPicker): { type: number; name: string; models: string; group: string } | { error: string } {
  const type = Number(pick('type'));
  if (!findChannelType(type)) return { error: `unknown channel type: ${String(pick('type'))}` };
  const name = String(pick('name') ?? '').trim();
  if (!name) return { error: 'fill in channel name and key' };
  const models = splitList(String(pick('models') ?? '')).join(',');
  if (!models) return { error: 'select at least one model' };
  const group = splitList(String(pick('group') ?? 'default')).join(',') || 'default';
  return { type, name, models, group };
}

/** The model mapping as stored (a JSON object of model names), or undefined when the text is not one. */
function modelMappingOf(mappingText: string): string | undefined {
  let mapping: unknown;
  try {
    mapping = JSON.parse(mappingText);
  } catch {
    mapping = undefined;
  }
  if (
    !mapping ||
    typeof mapping !== 'object' ||
    Array.isArray(mapping) ||
    !Object.values(mapping).every((value) => typeof value === 'string')
  ) {
    return undefined;
  }
  return JSON.stringify(mapping);
}

/** Where the channel sits among the others (priority, weight) and where it points (base URL, account id). */
function placementOf(
  pick: FieldPicker,
  type: number,
): { priority: number; weight: number; baseUrl: string; other: string } | { error: string } {
  const priority = Number(pick('priority') ?? 0);
  const weight = Number(pick('weight') ?? 1);
  if (!Number.isSafeInteger(priority)) return { error: 'priority must be a whole number' };
  if (!Number.isSafeInteger(weight) || weight < 1) return { error: 'weight must be a whole number, 1 or more' };
  const baseUrl = String(pick('base_url') ?? '')
    .trim()
    .replace(/\/+$/, '');
  if (baseUrl && !/^https?:\/\/[^\s]+$/.test(baseUrl)) return { error: 'base URL must start with http:// or https://' };
  const channelType = findChannelType(type);
  if (channelType?.baseUrlRequired && !baseUrl) return { error: 'this channel type needs a base URL' };
  const other = String(pick('other') ?? '').trim() || channelType?.other?.fallback || '';
  return { priority, weight, baseUrl, other };
}

/** The test model, one of the channel's models; an edit that drops the stored one falls back to the first (''). */
function testModelOf(pick: FieldPicker, body: ChannelFieldsBody, models: string): { testModel: string } | { error: string } {
  const testModel = String(pick('test_model') ?? '').trim();
  if (testModel && !splitList(models).includes(testModel)) {
    if (body.test_model !== undefined) return { error: 'the test model must be one of the channel models' };
    return { testModel: '' };
  }
  return { testModel };
}

/** Validates the form's fields; `current` supplies what an edit leaves out. */
export function parseChannelFields(body: ChannelFieldsBody, current?: ChannelFields): Parsed {
  const pick: FieldPicker = (key) => (body[key] === undefined && current ? current[key] : body[key]);
  const identity = identityOf(pick);
  if ('error' in identity) return identity;
  const { type, name, models, group } = identity;
  const mapping = modelMappingOf(String(pick('model_mapping') ?? '').trim() || '{}');
  if (mapping === undefined) return { error: 'model mapping must be a JSON object of model names' };
  const placement = placementOf(pick, type);
  if ('error' in placement) return placement;
  const { priority, weight, baseUrl, other } = placement;
  const tested = testModelOf(pick, body, models);
  if ('error' in tested) return tested;
  if (otherMissing(type, other, baseUrl)) return { error: 'this channel type needs its account id (other), or a base URL that holds it' };
  return {
    value: {
      type,
      name,
      base_url: baseUrl,
      other,
      models,
      group,
      model_mapping: mapping,
      test_model: tested.testModel,
      priority,
      weight,
    },
  };
}

/** The complaint about keys that do not have their type's `keyFormat` shape (Baidu, Spark); undefined when all fit. */
export function keyFormatError(type: number, keys: readonly string[]): string | undefined {
  if (keys.every((key) => keyFitsFormat(type, key))) return undefined;
  if (findChannelType(type)?.keyKind === 'service-account-json') {
    // what is wrong with the first key that does not read, in the words of the check
    for (const key of keys) {
      const account = readServiceAccountKey(key);
      if ('problem' in account) return account.problem;
    }
  }
  return `the key must be written as ${findChannelType(type)?.keyFormat ?? 'one secret'}`;
}

/** The key text as sent, with a JSON key file (Vertex AI's, pasted over many lines) on one line, so it stays one key. */
export const keyTextOf = (type: unknown, key: string | null | undefined): string => {
  const text = String(key ?? '');
  return findChannelType(Number(type))?.keyKind === 'service-account-json' ? compactJsonKeys(text) : text;
};

/** A flag as forms and JSON clients send it. */
export const isTrue = (value: unknown) => value === true || value === 'true' || value === 1 || value === '1';

/** A channel's key strategy, random unless round_robin. */
export const strategyOf = (value: unknown): KeyStrategy => (value === 'round_robin' ? 'round_robin' : 'random');
