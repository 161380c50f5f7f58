// Mapping the source's channels: under offset ids, their type numbers read
// the way products.ts says (a type not relayed here yet is left out, named),
// their status split into ours and the automatic-disable flag; a new-api
// multi-key channel's keys become rows of channel_keys. Keys are carried,
// never named.
import { importedKey, importedOther, targetChannelType, unrelayedReason, type Product } from './products';
import { Outcome, UNCARRIED_FIELDS } from './outcome';
import type { MappingState, Plan } from './plan';
import { isDeleted, num, text, type Row } from './sourceValues';

type MultiKey = { keys: Array<{ key: string; status: number; last_error: string }>; strategy: 'random' | 'round_robin' };

/**
 * A new-api multi-key channel (channel_info.is_multi_key): its keys, one per
 * line of `key` or a JSON array (service-account files), each with its state
 * from multi_key_status_list (by index; absent is enabled) and why it was set
 * aside; its mode, polling being our round_robin. Undefined for a channel of one key.
 */
function multiKeyOf(row: Row): MultiKey | undefined {
  let info:
    { is_multi_key?: unknown; multi_key_status_list?: unknown; multi_key_disabled_reason?: unknown; multi_key_mode?: unknown } | undefined;
  try {
    info = JSON.parse(text(row.channel_info) || '{}') as typeof info;
  } catch {
    return undefined;
  }
  if (!info || info.is_multi_key !== true) return undefined;
  const statuses = (
    info.multi_key_status_list && typeof info.multi_key_status_list === 'object' ? info.multi_key_status_list : {}
  ) as Record<string, unknown>;
  const reasons = (
    info.multi_key_disabled_reason && typeof info.multi_key_disabled_reason === 'object' ? info.multi_key_disabled_reason : {}
  ) as Record<string, unknown>;
  const raw = text(row.key).trim();
  let keys: string[] | undefined;
  if (raw.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (Array.isArray(parsed)) keys = parsed.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
    } catch {
      keys = undefined;
    }
  }
  keys ??= raw.split('\n');
  const carried = keys
    .map((key, index) => {
      const status = num(statuses[String(index)], 1);
      return {
        key: key.trim(),
        status: status === 2 || status === 3 ? status : 1,
        last_error: text(reasons[String(index)]).slice(0, 1000),
      };
    })
    .filter((key) => key.key);
  return { keys: carried, strategy: info.multi_key_mode === 'polling' ? 'round_robin' : 'random' };
}

function channelRecord(row: Row, id: number, type: number, multiKey: MultiKey | undefined, product: Product): Plan['channels'][number] {
  // one-api and new-api: 1 enabled, 2 disabled by hand, 3 disabled automatically
  const sourceStatus = num(row.status, 1);
  return {
    id,
    type,
    key: multiKey ? '' : importedKey(product, num(row.type), text(row.key), row.config),
    multi_key: multiKey ? 1 : 0,
    key_strategy: multiKey?.strategy ?? 'random',
    status: sourceStatus === 1 ? 1 : 2,
    auto_disabled: sourceStatus === 3 ? 1 : 0,
    name: text(row.name).slice(0, 128),
    weight: num(row.weight),
    priority: num(row.priority),
    created_time: num(row.created_time),
    test_time: num(row.test_time),
    response_time: num(row.response_time),
    base_url: text(row.base_url),
    other: importedOther(product, num(row.type), text(row.other), row.config),
    balance: num(row.balance),
    balance_updated_time: num(row.balance_updated_time),
    models: text(row.models),
    group: text(row.group) || 'default',
    used_quota: num(row.used_quota),
    model_mapping: text(row.model_mapping),
    test_model: text(row.test_model).slice(0, 255),
  };
}

/** The channels to carry, their multi-key keys, and the channels whose type number changed. */
export function mapChannels(
  sourceChannels: Row[],
  product: Product,
  state: MappingState,
): { outcome: Outcome; channels: Plan['channels']; channelKeys: Plan['channelKeys']; renumbered: string[] } {
  const outcome = new Outcome('channels', sourceChannels.length);
  const channels: Plan['channels'] = [];
  const channelKeys: Plan['channelKeys'] = [];
  const renumbered: string[] = [];
  for (const row of sourceChannels) {
    const sourceId = num(row.id);
    const label = `#${sourceId} ${text(row.name)}`;
    if (isDeleted(row)) {
      outcome.leave('deleted in the source', label);
      continue;
    }
    const type = targetChannelType(product, num(row.type));
    if (type === undefined) {
      outcome.leave(unrelayedReason(product, num(row.type)), label);
      continue;
    }
    if (type !== num(row.type)) renumbered.push(`${label}: ${product} type ${num(row.type)} is type ${type} here`);
    state.uncarried.note('channels', row, UNCARRIED_FIELDS.channels);
    const multiKey = product === 'new-api' ? multiKeyOf(row) : undefined;
    if (multiKey) {
      for (const key of multiKey.keys)
        channelKeys.push({ ...key, channel_id: state.offsets.channels + sourceId, created_time: num(row.created_time) });
    }
    channels.push(channelRecord(row, state.offsets.channels + sourceId, type, multiKey, product));
  }
  outcome.carried = channels.length;
  return { outcome, channels, channelKeys, renumbered };
}
