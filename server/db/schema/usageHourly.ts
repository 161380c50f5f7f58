/** The hourly usage rollups (migration 0008): one row per hour, user, token, model and channel. */
export interface UsageHourlyTable {
  /** The hour's start, unix seconds (UTC). */
  hour: number;
  user_id: number;
  token_id: number;
  model: string;
  channel_id: number;
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

export interface UsageHourlySchema {
  usage_hourly: UsageHourlyTable;
}
