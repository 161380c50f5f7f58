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
  /** Relayed requests in flight at once, per server node: 0 = the UserConcurrencyLimit option, -1 = no limit. */
  concurrency_limit: number;
  /** Requests per minute across nodes: null = the group's (GroupRateLimits), 0 = unlimited. */
  rpm_limit: number | null;
  /** Tokens per minute across nodes: null = the group's, 0 = unlimited. */
  tpm_limit: number | null;
}

/** What `POST /api/user/login` returns in `data` and the console stores under `user`. */
export interface SessionUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  /** Set when the account must enrol in two-factor sign-in before anything else (TwoFactorRequiredForAdmins). */
  two_factor_enrolment_required?: boolean;
}

/** `GET /api/user/2fa`: the caller's two-factor sign-in. */
export interface TwoFactorStatus {
  enabled: boolean;
  /** An enrolment was started and waits for its first code. */
  pending: boolean;
  recovery_codes_left: number;
  /** The caller's role must have two-factor sign-in (TwoFactorRequiredForAdmins). */
  required: boolean;
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
  /** Relayed requests in flight at once, per server node: 0 = the TokenConcurrencyLimit option, -1 = no limit. */
  concurrency_limit: number;
  /** The key's own requests per minute: null = only its user's limit applies; never above the user's. */
  rpm_limit: number | null;
  /** The key's own tokens per minute: null = only its user's limit applies. */
  tpm_limit: number | null;
  /** What limits the key in effect, its own and its user's together (0 = unlimited); in lists and single reads. */
  rate_limits?: { rpm: number; tpm: number };
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
  balance: number;
  balance_updated_time: number;
  used_quota: number;
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
  /** The relayed request's X-Request-Id: the one row (or rows) of that request. */
  request_id?: string;
}

/**
 * How a relayed request went, kept with its log row so the row answers "what
 * happened and how was this charged?". Every field is optional: rows written
 * before details were kept have none, and a refused request has no prices.
 */
export interface LogDetails {
  /** The wire protocol spoken to the upstream (openai, anthropic, ...). */
  protocol?: string;
  /** chat, completions, embeddings, responses, ... */
  operation?: string;
  /** The HTTP status answered to the client. */
  status?: number;
  /** Each channel tried, in order; the last one answered (or failed last). */
  attempts?: Array<{ channelId: number; channelName: string; status: number; reason: string; ms?: number }>;
  retries?: number;
  /** Milliseconds from the request to the first streamed token. */
  ttftMs?: number;
  /** Prompt tokens served from the upstream's prompt cache. */
  cachedTokens?: number;
  cacheWriteTokens?: number;
  /** Hidden reasoning tokens, counted inside the completion tokens. */
  reasoningTokens?: number;
  modelRatio?: number;
  completionRatio?: number;
  groupRatio?: number;
  cacheRatio?: number;
  /** The quota computation with its numbers, as the gateway did it. */
  formula?: string;
  errorCode?: string;
  /** The model answered instead of the one asked, when a fallback served. */
  fallbackModel?: string;
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
  /** The relayed request's X-Request-Id (consume logs), else null. */
  request_id?: string | null;
  /** The channel's name (admins); absent on old rows or a deleted channel. */
  channel_name?: string;
  /** Relay logs (consume, error): how the request went and was priced. */
  details?: LogDetails | null;
}

/** `GET /api/option/` row. Values are always strings; toggles are "true"/"false". */
export interface OptionEntry {
  key: string;
  value: string;
}
