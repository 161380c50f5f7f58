import type { Generated } from 'kysely';

export interface ChannelsTable {
  id: Generated<number>;
  type: number;
  key: string;
  status: number;
  name: string;
  weight: number;
  priority: number;
  /** 1 when the system (not an admin) disabled it, so health checks may re-enable it. */
  auto_disabled: number;
  created_time: number;
  test_time: number;
  response_time: number;
  base_url: string;
  other: string;
  balance: number;
  balance_updated_time: number;
  models: string;
  group: string;
  used_quota: number;
  model_mapping: string;
  /** The last test's failure ('' when it passed, or before any test). */
  test_error: Generated<string>;
  /** The model a test asks for when none is named; '' = the first of `models`. */
  test_model: Generated<string>;
  /** 1 when the channel's keys are its channel_keys rows (its own `key` is then empty). */
  multi_key: Generated<number>;
  /** How calls spread over a multi-key channel's live keys: 'random' or 'round_robin'. */
  key_strategy: Generated<string>;
}

/** One key of a multi-key channel: see migration 0018. */
export interface ChannelKeysTable {
  id: Generated<number>;
  channel_id: number;
  /** Kept as the channel's own key is: never sent back to the console. */
  key: string;
  /** 1 enabled, 2 disabled by an admin, 3 disabled by the system (the health pass may bring it back). */
  status: number;
  last_error: Generated<string>;
  /** Unix seconds of the last call made with it (0: never). */
  last_used_at: Generated<number>;
  used_count: Generated<number>;
  failed_count: Generated<number>;
  created_time: number;
}

export interface ChannelsSchema {
  channels: ChannelsTable;
  channel_keys: ChannelKeysTable;
}
