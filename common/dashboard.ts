// The usage dashboard's wire contract, shared by the server (which answers it
// from the hourly rollups, never by scanning logs) and the console (which
// draws it). Every amount of money is raw quota; the console converts it.
//
//   GET /api/dashboard        signed in: the caller's own usage (user_id, when sent, is ignored)
//   GET /api/dashboard/admin  admin and root: every user's, with the admin sections
//
// Query (all optional): start, end (unix seconds; default: the last 7 days up
// to now), granularity ('hour' | 'day'; default 'day' for ranges over two
// days, else 'hour'), user_id, token_id, model, channel_id (filters; user_id
// and channel_id admin only). Answered in the usual envelope
// {success, message, data: Dashboard | AdminDashboard}.

export type DashboardGranularity = 'hour' | 'day';

export interface DashboardQuery {
  start?: number;
  end?: number;
  granularity?: DashboardGranularity;
  user_id?: number;
  token_id?: number;
  model?: string;
  channel_id?: number;
}

/** What a slice of usage came to. */
export interface UsageTotals {
  requests: number;
  /** Relayed requests that failed (no channel answered, or the answer broke off before it was billed). */
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Raw quota charged. */
  quota: number;
}

/** One bucket of the time series: an hour or a day, starting at `bucket` (unix seconds, UTC). */
export interface UsagePoint extends UsageTotals {
  bucket: number;
}

export interface ModelUsage extends UsageTotals {
  model: string;
}

export interface TokenUsage extends UsageTotals {
  token_id: number;
  /** The token's name now ('' when it was deleted). */
  token_name: string;
}

export interface UserUsage extends UsageTotals {
  user_id: number;
  username: string;
}

export interface ChannelUsage extends UsageTotals {
  /** Every call given to the channel, failed ones included (answered calls are requests - errors). */
  requests: number;
  channel_id: number;
  /** The channel's name now ('' when it was deleted). */
  channel_name: string;
  /** errors / requests, 0..1. */
  error_rate: number;
  /**
   * Relay latency percentiles over the range, milliseconds, from the measured
   * durations of its requests and failed attempts (within 1 %), as kept since
   * the gateway kept them (migration 0016; older requests are not counted).
   * Null when none was measured in this scope: no request since then, or a
   * user or token filter (durations are kept per channel and model only), and
   * for a channel that never answered (its durations are only how long it took to fail).
   */
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}

export interface ChannelHealth {
  enabled: number;
  /** Disabled by the gateway (a dead key, a failed re-test). */
  auto_disabled: number;
  /** Disabled by an operator. */
  manually_disabled: number;
  /** Never tested (test_time 0). */
  untested: number;
  /** The enabled channels whose last test passed, the slowest first (at most 5). */
  slowest: Array<{ channel_id: number; channel_name: string; response_time_ms: number; test_time: number }>;
}

export interface Dashboard {
  /** The range and granularity actually used (defaults filled in). */
  start: number;
  end: number;
  granularity: DashboardGranularity;
  /** The caller's own balance now (raw quota; negative when owed). */
  balance: number;
  /** Fixed windows ending now, whatever the chosen range: today (since 00:00 UTC), the last 7 and 30 days. */
  today: UsageTotals;
  last_7_days: UsageTotals;
  last_30_days: UsageTotals;
  /** The chosen range. */
  totals: UsageTotals;
  /** Every bucket of the range in order, empty ones included (zeros). */
  series: UsagePoint[];
  /** Per model over the range, by quota, highest first (at most 10). */
  by_model: ModelUsage[];
  /** Per token over the range, by quota, highest first (at most 10). */
  top_tokens: TokenUsage[];
  /** The exact response cache over the range (always sent by the server; absent from older answers). */
  response_cache?: ResponseCacheUsage;
}

/** The response cache's hits over the range (docs/cache.md), in the same scope as the rest. */
export interface ResponseCacheUsage {
  /** Whether ResponseCacheEnabled is on now. */
  enabled: boolean;
  hits: number;
  /** Raw quota the hits were charged (the operator's share of the full price). */
  quota: number;
  /** Raw quota the full price would have added. */
  saved: number;
}

export interface AdminDashboard extends Dashboard {
  /** Per user over the range, by quota, highest first (at most 10). */
  top_users: UserUsage[];
  /** Per channel over the range, by quota, highest first (at most 20), with error rate and latency. */
  top_channels: ChannelUsage[];
  channel_health: ChannelHealth;
}
