// What every relayed request reads, kept in memory: a key's token and owner,
// and the channels serving a (group, model). Without it each request made
// three lookups before doing any work.
//
// Staleness is bounded two ways. A write through this process's database
// handle to tokens, users, channels or abilities drops the cache at once (the
// WriteWatchPlugin reports it), except writes that only move quota counters,
// which the relay makes on every request and which no cached check depends on
// (quota itself is reserved atomically in the database, never read from here).
// Writes made by other nodes are seen after at most TTL_MS.
import type { Selectable } from 'kysely';
import type { WriteListener } from '../db/writeWatch';
import type { TokensTable } from '../db/schema/tokens';
import type { UsersTable } from '../db/schema/users';
import type { MemberCapRow } from '../repositories/relayAuth';

export const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

/** Columns that change on every relayed request and never decide whether one may run. */
const COUNTER_COLUMNS: Readonly<Record<string, ReadonlySet<string>>> = {
  users: new Set(['quota', 'held_quota', 'used_quota', 'request_count']),
  tokens: new Set(['remain_quota', 'held_quota', 'used_quota', 'accessed_time']),
  channels: new Set(['used_quota', 'response_time', 'test_time', 'balance', 'balance_updated_time']),
  abilities: new Set(),
  // a multi-key channel's keys: their tallies move on every call; a change of state (enabled, set aside) drops the cache
  channel_keys: new Set(['last_used_at', 'used_count', 'failed_count', 'last_error']),
  // a member's spend moves with each charge of their keys; a change of caps or of membership drops the cache
  organization_members: new Set(['spent_quota', 'period_spent', 'period_start']),
};

export interface CachedCaller {
  token: Selectable<TokensTable>;
  user: Selectable<UsersTable> | undefined;
  /** The caps of the member holding an organisation's key (repositories/relayAuth.ts). */
  member?: MemberCapRow;
}

export interface CandidateChannel {
  id: number;
  /** What the log's attempts call it. */
  name: string;
  type: number;
  key: string;
  base_url: string;
  other: string;
  model_mapping: string;
  priority: number;
  weight: number;
  /** 1 when the key of each call is one of the channel's live keys (channelKeyPick.ts), not `key`. */
  multi_key: number;
  key_strategy: string;
}

/** One live key of a multi-key channel. */
export interface LiveKey {
  id: number;
  key: string;
}

interface Entry<T> {
  value: T;
  expiresAt: number;
}

export class RelayCache {
  private readonly callers = new Map<string, Entry<CachedCaller | undefined>>();
  private readonly routes = new Map<string, Entry<CandidateChannel[]>>();
  private readonly keys = new Map<string, Entry<LiveKey[]>>();

  /** Hand this to the WriteWatchPlugin. */
  readonly noteWrite: WriteListener = (table, columns) => {
    const counters = COUNTER_COLUMNS[table];
    if (!counters) return;
    if (columns !== 'all' && columns.every((column) => counters.has(column))) return;
    this.clear();
  };

  clear(): void {
    this.callers.clear();
    this.routes.clear();
    this.keys.clear();
  }

  caller(key: string, load: () => Promise<CachedCaller | undefined>): Promise<CachedCaller | undefined> | CachedCaller | undefined {
    return this.read(this.callers, key, load);
  }

  channels(group: string, model: string, load: () => Promise<CandidateChannel[]>): Promise<CandidateChannel[]> | CandidateChannel[] {
    return this.read(this.routes, `${group}\u0000${model}`, load);
  }

  /** The live keys of a multi-key channel. */
  liveKeys(channelId: number, load: () => Promise<LiveKey[]>): Promise<LiveKey[]> | LiveKey[] {
    return this.read(this.keys, String(channelId), load);
  }

  private read<T>(map: Map<string, Entry<T>>, key: string, load: () => Promise<T>): Promise<T> | T {
    const entry = map.get(key);
    const now = Date.now();
    if (entry && entry.expiresAt > now) return entry.value;
    return load().then((value) => {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(key, { value, expiresAt: now + TTL_MS });
      return value;
    });
  }
}
