/** What every usage rollup row counts (migration 0008). */
export interface UsageCounters {
  /** Consume logs. */
  requests: number;
  /** Relayed requests that failed (no consume log). */
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  quota: number;
  latency_ms_sum: number;
  latency_le_100: number;
  latency_le_250: number;
  latency_le_500: number;
  latency_le_1000: number;
  latency_le_2500: number;
  latency_le_5000: number;
  latency_le_10000: number;
  latency_le_30000: number;
  latency_le_60000: number;
  latency_over: number;
}

/** The whole key: one row per period (the start of its hour or day, unix seconds, UTC), user, token, model and channel. */
export interface UsageRollupTable extends UsageCounters {
  period: number;
  user_id: number;
  token_id: number;
  model: string;
  channel_id: number;
}

/** Per period, model and channel only. */
export interface UsageChannelRollupTable extends UsageCounters {
  period: number;
  model: string;
  channel_id: number;
  /** The period's relay durations (repositories/latencySketch.ts, migration 0016); null before it. */
  latency_sketch: string | null;
}

/** Per period, user and token only. */
export interface UsageTokenRollupTable extends UsageCounters {
  period: number;
  user_id: number;
  token_id: number;
}

/** Per day and user only (no hourly one: an hour's users are nearly its tokens). */
export interface UsageUserRollupTable extends UsageCounters {
  period: number;
  user_id: number;
}

export interface UsageRollupsSchema {
  usage_hourly: UsageRollupTable;
  usage_hourly_channels: UsageChannelRollupTable;
  usage_hourly_tokens: UsageTokenRollupTable;
  usage_daily: UsageRollupTable;
  usage_daily_channels: UsageChannelRollupTable;
  usage_daily_tokens: UsageTokenRollupTable;
  usage_daily_users: UsageUserRollupTable;
}
