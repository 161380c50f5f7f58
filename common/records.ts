import type { BudgetPeriod, BudgetUsage } from './budgets';

/**
 * Record shapes as they travel on the console API (field names are one-api
 * v0.5.3's). Secrets (password hashes, access tokens, channel keys) never
 * appear in these shapes when they are sent to the browser.
 */

/** A user as the self endpoint and admin lists return it. */
export interface UserRecord {
  id: number;
  username: string;
  display_name: string;
  email: string;
  github_id: string;
  wechat_id: string;
  role: number;
  status: number;
  /** Remaining quota. */
  quota: number;
  used_quota: number;
  request_count: number;
  /** Comma-separated group names; empty means `default`. */
  group: string;
  aff_code: string;
  inviter_id: number;
  /** Relayed requests in flight at once, across every node and worker: 0 = the UserConcurrencyLimit option, -1 = no limit. */
  concurrency_limit: number;
  /** Requests per minute across nodes: null = the group's (GroupRateLimits), 0 = unlimited. */
  rpm_limit: number | null;
  /** Tokens per minute across nodes: null = the group's, 0 = unlimited. */
  tpm_limit: number | null;
  /** A budget that resets ('' = none; common/budgets.ts): quota units per day, week or month beside the lifetime quota. */
  budget_period: BudgetPeriod;
  budget_quota: number;
  /** With a budget: the spend this period and when it resets (admin reads). */
  budget_usage?: BudgetUsage;
}

/** What `POST /api/user/login` returns in `data` and the console stores under `user`. */
export interface SessionUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  /** Set when the account must set up a second factor before anything else (TwoFactorRequiredForAdmins, SecondFactorRequired). */
  two_factor_enrolment_required?: boolean;
}

/** `GET /api/user/2fa`: the caller's two-factor sign-in. */
export interface TwoFactorStatus {
  enabled: boolean;
  /** An enrolment was started and waits for its first code. */
  pending: boolean;
  recovery_codes_left: number;
  /** The caller must keep TOTP: a second factor is required (TwoFactorRequiredForAdmins, SecondFactorRequired) and no passkey stands in for it. */
  required: boolean;
}

/** A second factor that can finish a sign-in after the password. */
export type SecondFactor = 'totp' | 'passkey';

/** `data` of a `two_factor_required` refusal when a passkey can finish the step: the factors the account has. */
export interface SecondFactorChoice {
  second_factors: SecondFactor[];
}

/** `GET /api/user/passkey`: one of the caller's passkeys. */
export interface PasskeyRecord {
  id: number;
  name: string;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds of the last sign-in with it; 0 = never used. */
  last_used_at: number;
  /** The authenticator syncs it to the user's other devices (a multi-device passkey). */
  backed_up: boolean;
}

/** `POST /api/user/2fa/enrol`: shown once, while enrolling. */
export interface TwoFactorEnrolment {
  /** Base32, for typing into an authenticator by hand. */
  secret: string;
  otpauth_url: string;
  /** The otpauth URL as an SVG QR code in a data URL. */
  qr_code: string;
}

/** `POST /api/user/register` body. */
export interface RegisterPayload {
  username: string;
  password: string;
  password2?: string;
  email?: string;
  verification_code?: string;
  aff_code?: string;
}

/** `POST /api/user/login` body. */
export interface LoginPayload {
  username: string;
  password: string;
}

export interface TokenRecord {
  id: number;
  user_id: number;
  name: string;
  key: string;
  status: number;
  used_quota: number;
  remain_quota: number;
  unlimited_quota: boolean;
  created_time: number;
  accessed_time: number;
  /** Unix seconds; -1 means never. */
  expired_time: number;
  /** Relayed requests in flight at once, across every node and worker: 0 = the TokenConcurrencyLimit option, -1 = no limit. */
  concurrency_limit: number;
  /** The key's own requests per minute: null = only its user's limit applies; never above the user's. */
  rpm_limit: number | null;
  /** The key's own tokens per minute: null = only its user's limit applies. */
  tpm_limit: number | null;
  /** What limits the key in effect, its own and its user's together (0 = unlimited); in lists and single reads. */
  rate_limits?: { rpm: number; tpm: number };
  /** A budget that resets ('' = none; common/budgets.ts): quota units per day, week or month beside the remaining quota. */
  budget_period: BudgetPeriod;
  budget_quota: number;
  /** With a budget: the spend this period and when it resets; in lists and single reads. */
  budget_usage?: BudgetUsage;
}

export interface ChannelRecord {
  id: number;
  type: number;
  name: string;
  /** Write-only: always `''` when read back. */
  key: string;
  status: number;
  base_url: string;
  other: string;
  models: string;
  group: string;
  model_mapping: string;
  priority: number;
  weight: number;
  response_time: number;
  test_time: number;
  /** Why the last test failed; '' after a pass or before any test. */
  test_error: string;
  /** The model a test asks for when none is named; '' = the first of `models`. */
  test_model: string;
  balance: number;
  balance_updated_time: number;
  used_quota: number;
  created_time: number;
  /** Whether the channel holds many keys (its `channel_keys`), spread over by `key_strategy`. */
  multi_key: boolean;
  /** How a multi-key channel spreads calls over its live keys. */
  key_strategy: KeyStrategy;
  /** In the list, a multi-key channel's keys: how many it holds. */
  key_count?: number;
  /** In the list, a multi-key channel's keys that calls may use now. */
  live_key_count?: number;
  /** In the list, the last error of a multi-key channel's worst key ('' when none); never a key. */
  key_error?: string;
}

/** How a multi-key channel picks the key of each call among its live keys. */
export type KeyStrategy = 'random' | 'round_robin';

/** A channel key's state: as a channel's, plus 3 when the system set it aside (a dead key; the health pass re-tests it). */
export const ChannelKeyStatus = { enabled: 1, disabled: 2, autoDisabled: 3 } as const;

/** One key of a multi-key channel as the console sees it: masked, never whole. */
export interface ChannelKeyRecord {
  id: number;
  channel_id: number;
  /** The key masked (its first and last few characters). */
  key: string;
  status: number;
  /** Why the key last failed, or why the system set it aside ('' when none). */
  last_error: string;
  /** Unix seconds of its last call (0: never). */
  last_used_at: number;
  used_count: number;
  failed_count: number;
  created_time: number;
}

export interface RedemptionRecord {
  id: number;
  user_id: number;
  name: string;
  key: string;
  status: number;
  quota: number;
  created_time: number;
  redeemed_time: number;
  redeemed_by: number;
}

/** The filters of the log list and its stat, as query parameters of /api/log/ and /api/log/self/. */
export interface LogFilter {
  /** LogType; 0 or absent = every type. */
  type?: number;
  /** Admins only. */
  username?: string;
  token_name?: string;
  model_name?: string;
  /** Unix seconds; 0 or absent = no bound. */
  start_timestamp?: number;
  end_timestamp?: number;
  /** Admins only: the channel id a request was relayed through. */
  channel?: number;
  /** The relayed request's X-Request-Id, exactly. */
  request_id?: string;
}

/** One channel a relayed request was sent to, in the order they were tried. */
export interface ChannelAttempt {
  channelId: number;
  /** The channel's name when it was tried ('' in a user's own logs, which never name channels). */
  channelName: string;
  /** The upstream's HTTP status; 0 when it never answered (network failure, timeout, the client left). */
  status: number;
  /** Why it failed, or that it answered: one line, at most 200 characters, no keys, URLs or addresses ('' in a user's own logs). */
  reason: string;
  /** How long the attempt took. */
  ms?: number;
}

/**
 * What a relayed request's log row says beyond its columns (`logs.other`, as
 * JSON; `details` in /api/log). Consume rows (type 2) carry the protocol, the
 * pricing and how the quota was computed; error rows (type 5) the status
 * returned, the channels tried and why each failed. Every field is optional:
 * older rows and other types have none.
 */
export interface LogDetails {
  /** The client's protocol: 'openai' | 'anthropic' | 'openai-responses' | 'gemini'. */
  protocol?: string;
  /** What was asked: 'chat', 'embeddings', 'responses', 'images', 'audio_transcription'... */
  operation?: string;
  /** The HTTP status returned to the client (499: the client left before the answer). */
  status?: number;
  /** Every channel tried, when there were retries or the request failed. */
  attempts?: ChannelAttempt[];
  /** Upstream calls after the first. */
  retries?: number;
  /** Milliseconds from the request's arrival to the first streamed byte of the answer. */
  ttftMs?: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  modelRatio?: number;
  completionRatio?: number;
  groupRatio?: number;
  /** The share of a prompt token's price a cached prompt token costs. */
  cacheRatio?: number;
  /** The quota's computation with its numbers, e.g. "(1200 + 300 × 2) × 1.5 × 1 = 2700". */
  formula?: string;
  /** The error's code as the client got it ('insufficient_quota', 'upstream_timeout'...), or 'client_gone' (the client left first), 'nothing_billed' (an answer that cost nothing). */
  errorCode?: string;
  fallbackModel?: string;
  /** The asynchronous task (a video's public id, `video_...`) this row bills: one consume row per task. */
  taskId?: string;
  /** Answered from the exact response cache: `saved` is the quota the full price would have charged beyond this row's. */
  responseCache?: { hit: true; saved: number };
  /** The OpenTelemetry trace of the call, when tracing is on and it was sampled (32 hex digits). */
  traceId?: string;
}

export interface LogRecord {
  id: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  channel_id: number;
  /** The relayed request's X-Request-Id (consume and error logs), else null. */
  request_id?: string | null;
  elapsed_ms?: number;
  is_stream?: boolean;
  estimated?: boolean;
  /** `logs.other` parsed; null when the row has none. */
  details?: LogDetails | null;
  /** Admins only: the name of the channel in `channel_id` ('' when none or deleted). */
  channel_name?: string;
}

/** `GET /api/option/` row. Values are always strings; toggles are "true"/"false". */
export interface OptionEntry {
  key: string;
  value: string;
}
