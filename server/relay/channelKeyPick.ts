// Multi-key channels: the key of each call, among the channel's live keys,
// at random or in turn (the channel's key_strategy). The live keys are cached
// with the routes (RelayCache: dropped on a change of a key's state, at most
// TTL_MS stale for another node's change), and each (channel, key) is one
// object for as long as its channel object lives, so the passthrough targets
// made per channel object (dispatch.ts) are made once per key too.
import type { Kysely } from 'kysely';
import type { Database } from '../db/database';
import { liveChannelKeys } from '../repositories/channelKeys';
import type { RoutedChannel } from './channelSelect';
import type { CandidateChannel, LiveKey, RelayCache } from './relayCache';

const keyedChannels = new WeakMap<CandidateChannel, Map<number, RoutedChannel>>();
/** The next turn of each round-robin channel, on this node (each node, and each app on its database, keeps its own turn). */
const turnsByDatabase = new WeakMap<object, Map<number, number>>();

/** The channel with the key of this call; undefined when no live key is left outside `exclude` (the keys this request already saw die). */
export function withChannelKey(
  db: Kysely<Database>,
  channel: CandidateChannel,
  exclude: readonly number[],
  random: () => number = Math.random,
  cache?: RelayCache,
  resting?: (keyId: number) => boolean,
  preferred?: number,
): RoutedChannel | undefined | Promise<RoutedChannel | undefined> {
  const load = () => liveChannelKeys(db, channel.id);
  const keys = cache ? cache.liveKeys(channel.id, load) : load();
  let turns = turnsByDatabase.get(db);
  if (!turns) {
    turns = new Map();
    turnsByDatabase.set(db, turns);
  }
  const chosen = turns;
  return keys instanceof Promise
    ? keys.then((loaded) => pickKey(channel, loaded, exclude, random, chosen, resting, preferred))
    : pickKey(channel, keys, exclude, random, chosen, resting, preferred);
}

/**
 * `resting`: keys resting after a 429 (routing.ts), passed by like the
 * excluded ones; `preferred`: the key a caller's affinity keeps, taken while
 * it is live.
 */
function pickKey(
  channel: CandidateChannel,
  keys: LiveKey[],
  exclude: readonly number[],
  random: () => number,
  turns: Map<number, number>,
  resting?: (keyId: number) => boolean,
  preferred?: number,
): RoutedChannel | undefined {
  const live = exclude.length || resting ? keys.filter((key) => !exclude.includes(key.id) && !resting?.(key.id)) : keys;
  if (!live.length) return undefined;
  let chosen: LiveKey;
  const kept = preferred === undefined ? undefined : live.find((key) => key.id === preferred);
  if (kept) {
    chosen = kept;
  } else if (channel.key_strategy === 'round_robin') {
    const turn = turns.get(channel.id) ?? 0;
    turns.set(channel.id, (turn + 1) % Number.MAX_SAFE_INTEGER);
    chosen = live[turn % live.length];
  } else {
    chosen = live[Math.floor(random() * live.length)];
  }
  let byKey = keyedChannels.get(channel);
  if (!byKey) {
    byKey = new Map();
    keyedChannels.set(channel, byKey);
  }
  let keyed = byKey.get(chosen.id);
  if (!keyed) {
    keyed = { ...channel, key: chosen.key, keyId: chosen.id };
    byKey.set(chosen.id, keyed);
  }
  return keyed;
}
