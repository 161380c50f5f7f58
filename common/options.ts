/**
 * Every runtime setting, declared once. The server uses this table for
 * defaults, parsing and read access; the console uses it to render the
 * settings tabs. Values travel and are stored as strings.
 *
 * kind:
 * - toggle: "true" / "false"
 * - text:   free text (Markdown, HTML or a URL for content keys)
 * - number: a decimal string
 * - json:   a JSON object, validated before it is saved
 * - list:   a comma-joined list
 * - secret: write-only; never sent back to the browser
 */
import { DEFAULT_GROUP_RATE_LIMITS, parseGroupRateLimits } from './rateLimits';

export type OptionKind = 'toggle' | 'text' | 'number' | 'json' | 'list' | 'secret';

export interface OptionSpec {
  kind: OptionKind;
  default: string;
  /**
   * Only root may write it. The spec reserves the top-up link for root; we add
   * everything on the System tab (sign-in methods, mail, identity providers,
   * the server address used in reset links), because an admin who could change
   * any of them could take over root's account. Everything else needs admin.
   */
  rootOnly?: boolean;
  /** A link the console opens or frames: empty, an http(s) URL or a site path, never `javascript:`. */
  url?: boolean;
}

/** Default model ratios (1 = $0.002 per 1K tokens = 1 quota per token). */
export const DEFAULT_MODEL_RATIO: Record<string, number> = {
  'gpt-4': 15,
  'gpt-4-0314': 15,
  'gpt-4-0613': 15,
  'gpt-4-32k': 30,
  'gpt-4-32k-0314': 30,
  'gpt-4-32k-0613': 30,
  'gpt-3.5-turbo': 0.75,
  'gpt-3.5-turbo-0301': 0.75,
  'gpt-3.5-turbo-0613': 0.75,
  'gpt-3.5-turbo-16k': 1.5,
  'gpt-3.5-turbo-16k-0613': 1.5,
  'text-ada-001': 0.2,
  'text-babbage-001': 0.25,
  'text-curie-001': 1,
  'text-davinci-002': 10,
  'text-davinci-003': 10,
  'text-davinci-edit-001': 10,
  'code-davinci-edit-001': 10,
  'whisper-1': 10,
  davinci: 10,
  curie: 10,
  babbage: 10,
  ada: 10,
  'text-embedding-ada-002': 0.05,
  'text-search-ada-doc-001': 10,
  'text-moderation-stable': 0.1,
  'text-moderation-latest': 0.1,
  'dall-e': 8,
  'claude-instant-1': 0.815,
  'claude-2': 5.51,
  'ERNIE-Bot': 0.8572,
  'ERNIE-Bot-turbo': 0.5715,
  'Embedding-V1': 0.1429,
  'PaLM-2': 1,
  chatglm_pro: 0.7143,
  chatglm_std: 0.3572,
  chatglm_lite: 0.1429,
  'qwen-v1': 0.8572,
  'qwen-plus-v1': 0.5715,
  SparkDesk: 0.8572,

  // Beyond v0.5.3: today's models. ratio = USD per 1M input tokens / 2. The
  // output and cached-input prices are in server/billing/prices.ts
  // (COMPLETION_RATIO_BY_MODEL, CACHED_PROMPT_RATIO_BY_MODEL). A model missing
  // here stays refused (model_price_unset) until an administrator prices it.

  // OpenAI, standard tier. Provider page: https://developers.openai.com/api/docs/pricing
  // (formerly https://platform.openai.com/docs/pricing). The page itself is not in
  // our reference store; these figures are its published prices as transcribed
  // on 2025-06-03 (hex.pm openai_responses lib/responses/pricing.ex) and read
  // again 2026-11-05 (api-evangelist, "OpenAI API Pricing"), agreeing with each other.
  'gpt-4o': 1.25, // $2.50 in
  'gpt-4o-2024-08-06': 1.25,
  'gpt-4o-2024-11-20': 1.25,
  'gpt-4o-mini': 0.075, // $0.15 in
  'gpt-4o-mini-2024-07-18': 0.075,
  'gpt-4.1': 1, // $2.00 in
  'gpt-4.1-2025-04-14': 1,
  'gpt-4.1-mini': 0.2, // $0.40 in
  'gpt-4.1-mini-2025-04-14': 0.2,
  'gpt-4.1-nano': 0.05, // $0.10 in
  'gpt-4.1-nano-2025-04-14': 0.05,
  o1: 7.5, // $15 in
  'o3-mini': 0.55, // $1.10 in
  'o4-mini': 0.55, // $1.10 in
  'gpt-4-turbo': 5, // $10 in
  'text-embedding-3-small': 0.01, // $0.02 in
  'text-embedding-3-large': 0.065, // $0.13 in

  // Anthropic. https://docs.anthropic.com/en/docs/about-claude/pricing (Opus 4.1
  // and older; stored copy read 2026-11-23) and
  // https://platform.claude.com/docs/zh-CN/about-claude/pricing (4.5 and 4.6; stored copy read 2026-11-23).
  'claude-3-5-haiku-20241022': 0.4, // $0.80 in
  'claude-3-5-haiku-latest': 0.4,
  'claude-3-5-sonnet-20240620': 1.5, // $3 in
  'claude-3-5-sonnet-20241022': 1.5,
  'claude-3-7-sonnet-20250219': 1.5, // $3 in
  'claude-3-7-sonnet-latest': 1.5,
  'claude-sonnet-4-20250514': 1.5, // $3 in
  'claude-sonnet-4-0': 1.5,
  'claude-sonnet-4-5-20250929': 1.5, // $3 in
  'claude-sonnet-4-5': 1.5,
  'claude-sonnet-4-6': 1.5, // $3 in
  'claude-opus-4-20250514': 7.5, // $15 in
  'claude-opus-4-0': 7.5,
  'claude-opus-4-1-20250805': 7.5, // $15 in
  'claude-opus-4-1': 7.5,
  'claude-opus-4-5-20251101': 2.5, // $5 in
  'claude-opus-4-5': 2.5,
  'claude-opus-4-6': 2.5, // $5 in
  'claude-haiku-4-5-20251001': 0.5, // $1 in
  'claude-haiku-4-5': 0.5,

  // DeepSeek, the list in force since 2025-09-05 16:00 UTC (cache-miss input price).
  // https://api-docs.deepseek.com/quick_start/pricing (stored copy read 2026-11-23)
  'deepseek-chat': 0.28, // $0.56 in
  'deepseek-reasoner': 0.28, // $0.56 in

  // Prices below were transcribed from each provider's published price page as
  // the author knew it (no stored copy read); a model whose price was not
  // certain is left out on purpose and stays refused until priced.

  // OpenAI, standard tier, continued: https://platform.openai.com/docs/pricing
  o3: 1, // $2.00 in (since 2025-06-10)
  'o3-2025-04-16': 1,
  'o3-pro': 10, // $20 in
  'o1-mini': 0.55, // $1.10 in
  'gpt-4o-2024-05-13': 2.5, // $5 in
  'chatgpt-4o-latest': 2.5, // $5 in
  'gpt-5': 0.625, // $1.25 in
  'gpt-5-mini': 0.125, // $0.25 in
  'gpt-5-nano': 0.025, // $0.05 in

  // Google Gemini API, paid tier: https://ai.google.dev/gemini-api/docs/pricing
  // (also type 11, which relays through Gemini). Prompts over the page's long-
  // context threshold (128K for 1.5, 200K for 2.5 Pro) cost more upstream; they
  // are billed here at the shorter-prompt price.
  'gemini-2.5-pro': 0.625, // $1.25 in
  'gemini-2.5-flash': 0.15, // $0.30 in (text, image, video)
  'gemini-2.5-flash-lite': 0.05, // $0.10 in
  'gemini-2.0-flash': 0.05, // $0.10 in
  'gemini-2.0-flash-lite': 0.0375, // $0.075 in
  'gemini-1.5-pro': 0.625, // $1.25 in
  'gemini-1.5-flash': 0.0375, // $0.075 in
  'gemini-1.5-flash-8b': 0.01875, // $0.0375 in
  'gemini-embedding-001': 0.075, // $0.15 in

  // Mistral AI: https://mistral.ai/pricing#api-pricing
  'mistral-large-latest': 1, // $2 in
  'mistral-medium-latest': 0.2, // $0.40 in
  'mistral-small-latest': 0.05, // $0.10 in
  'codestral-latest': 0.15, // $0.30 in
  'open-mistral-nemo': 0.075, // $0.15 in
  'mistral-embed': 0.05, // $0.10 in

  // Groq: https://groq.com/pricing
  'llama-3.3-70b-versatile': 0.295, // $0.59 in
  'llama-3.1-8b-instant': 0.025, // $0.05 in
  'meta-llama/llama-4-scout-17b-16e-instruct': 0.055, // $0.11 in
  'meta-llama/llama-4-maverick-17b-128e-instruct': 0.1, // $0.20 in

  // xAI: https://docs.x.ai/docs/models
  'grok-4': 1.5, // $3 in
  'grok-4-0709': 1.5,
  'grok-3': 1.5, // $3 in
  'grok-3-mini': 0.15, // $0.30 in

  // Cohere: https://cohere.com/pricing (dated model ids only: the bare
  // `command-r` / `command-r-plus` aliases name older versions with other prices)
  'command-a-03-2025': 1.25, // $2.50 in
  'command-r-plus-08-2024': 1.25, // $2.50 in
  'command-r-08-2024': 0.075, // $0.15 in
  'command-r7b-12-2024': 0.01875, // $0.0375 in
  'embed-v4.0': 0.06, // $0.12 in (text)

  // Alibaba Cloud Model Studio, international (Singapore) USD prices:
  // https://www.alibabacloud.com/help/en/model-studio/models (non-thinking mode)
  'qwen-max': 0.8, // $1.60 in
  'qwen-plus': 0.2, // $0.40 in
  'qwen-turbo': 0.025, // $0.05 in
  'text-embedding-v3': 0.035, // $0.07 in

  // Prices published in yuan, converted at v0.5.3's own rate of ¥7 = US$1
  // (its CNY rows above use it): ratio = yuan per 1M tokens / 14.
  // Alibaba (mainland only): https://help.aliyun.com/zh/model-studio/models
  'qwen-long': 0.035714, // ¥0.5 in
  // Zhipu: https://open.bigmodel.cn/pricing (one price for input and output);
  // glm-4-flash is free. A ratio of 0 is a price, not a missing one: lookupPrice
  // refuses only a missing or negative ratio, and computeQuota charges 0.
  'glm-4-plus': 0.357143, // ¥5
  'glm-4-air': 0.035714, // ¥0.5
  'glm-4-airx': 0.714286, // ¥10
  'glm-4-long': 0.071429, // ¥1
  'glm-4-flash': 0,
  'embedding-3': 0.035714, // ¥0.5
  // Baidu Qianfan: https://cloud.baidu.com/doc/WENXINWORKSHOP/s/hlrk4akp7
  // (Speed, Lite and Tiny are free)
  'ERNIE-4.0-8K': 2.142857, // ¥0.03 / 1K in
  'ERNIE-3.5-8K': 0.057143, // ¥0.0008 / 1K in
  'ERNIE-Speed-8K': 0,
  'ERNIE-Lite-8K': 0,
  'ERNIE-Tiny-8K': 0,
  // iFlytek Spark: https://xinghuo.xfyun.cn/sparkapi (Lite is free; the other
  // versions are sold as token packages, with no per-token list price to copy)
  lite: 0,
  // Moonshot: https://platform.moonshot.cn/docs/pricing/chat
  'moonshot-v1-8k': 0.142857, // ¥2 in
  'moonshot-v1-32k': 0.357143, // ¥5 in
  'moonshot-v1-128k': 0.714286, // ¥10 in
  'kimi-k2-0711-preview': 0.285714, // ¥4 in (cache miss)
  'kimi-k2-0905-preview': 0.285714, // ¥4 in (cache miss)
  // SiliconFlow: https://siliconflow.cn/pricing (names only it uses; a name
  // Together also serves, like deepseek-ai/DeepSeek-V3, is left unpriced because
  // one ModelRatio entry cannot hold two vendors' prices)
  'Qwen/Qwen2.5-72B-Instruct': 0.295, // ¥4.13
  'Qwen/Qwen2.5-7B-Instruct': 0, // free
  'BAAI/bge-m3': 0, // free

  // OpenRouter: https://openrouter.ai/models (first-party models at their
  // provider's own price; the credit-purchase fee is not part of a model's price)
  'openai/gpt-4o-mini': 0.075, // $0.15 in
  'anthropic/claude-sonnet-4.5': 1.5, // $3 in
  'google/gemini-2.5-flash': 0.15, // $0.30 in

  // Together AI: https://www.together.ai/pricing (one price for input and output)
  'meta-llama/Llama-3.3-70B-Instruct-Turbo': 0.44, // $0.88
  'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo': 0.09, // $0.18
  'Qwen/Qwen2.5-72B-Instruct-Turbo': 0.6, // $1.20
};

/**
 * The most output tokens each model may answer with, as its provider
 * documents it: what a request without max_tokens reserves for its answer
 * (server/billing/prices.ts). A model missing here gets DEFAULT_MAX_OUTPUT_TOKENS;
 * 0 means the model answers no completion tokens (embeddings, moderations).
 */
export const DEFAULT_MODEL_MAX_OUTPUT_TOKENS: Record<string, number> = {
  'gpt-4': 8192,
  'gpt-4-0314': 8192,
  'gpt-4-0613': 8192,
  'gpt-4-32k': 32768,
  'gpt-4-32k-0314': 32768,
  'gpt-4-32k-0613': 32768,
  'gpt-4-turbo': 4096,
  'gpt-4-1106-preview': 4096,
  'gpt-4o': 16384,
  'gpt-4o-mini': 16384,
  'gpt-3.5-turbo': 4096,
  'gpt-3.5-turbo-0301': 4096,
  'gpt-3.5-turbo-0613': 4096,
  'gpt-3.5-turbo-16k': 16384,
  'gpt-3.5-turbo-16k-0613': 16384,
  'text-ada-001': 2048,
  'text-babbage-001': 2048,
  'text-curie-001': 2048,
  'text-davinci-002': 4096,
  'text-davinci-003': 4096,
  'text-davinci-edit-001': 2048,
  'code-davinci-edit-001': 2048,
  'whisper-1': 4096,
  davinci: 2048,
  curie: 2048,
  babbage: 2048,
  ada: 2048,
  'text-embedding-ada-002': 0,
  'text-search-ada-doc-001': 0,
  'text-moderation-stable': 0,
  'text-moderation-latest': 0,
  'claude-instant-1': 4096,
  'claude-2': 4096,
  'ERNIE-Bot': 2048,
  'ERNIE-Bot-turbo': 2048,
  'Embedding-V1': 0,
  'PaLM-2': 1024,
  chatglm_pro: 4096,
  chatglm_std: 4096,
  chatglm_lite: 4096,
  'qwen-v1': 2048,
  'qwen-plus-v1': 2048,
  SparkDesk: 4096,
  // OpenAI model pages (https://developers.openai.com/api/docs/models/<model>),
  // as transcribed by the AI gateways that link to them (Vercel AI Gateway model
  // pages); gpt-4o and gpt-4o-mini above. o1 and o3-mini: no stored source, so
  // they reserve DEFAULT_MAX_OUTPUT_TOKENS until an administrator sets theirs.
  'gpt-4o-2024-08-06': 16384,
  'gpt-4o-2024-11-20': 16384,
  'gpt-4o-mini-2024-07-18': 16384,
  'gpt-4.1': 32768,
  'gpt-4.1-2025-04-14': 32768,
  'gpt-4.1-mini': 32768,
  'gpt-4.1-mini-2025-04-14': 32768,
  'gpt-4.1-nano': 32768,
  'gpt-4.1-nano-2025-04-14': 32768,
  'o4-mini': 100000,
  'text-embedding-3-small': 0,
  'text-embedding-3-large': 0,
  // https://api-docs.deepseek.com/quick_start/pricing: "MAX OUTPUT" 8K (chat), 64K (reasoner)
  'deepseek-chat': 8192,
  'deepseek-reasoner': 65536,
  // Embedding models answer no completion tokens, so a request reserves its prompt only.
  'gemini-embedding-001': 0,
  'mistral-embed': 0,
  'embed-v4.0': 0,
  'text-embedding-v3': 0,
  'embedding-3': 0,
  'BAAI/bge-m3': 0,
};

/** The output a request without max_tokens reserves for a model missing from ModelMaxOutputTokens. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export const DEFAULT_GROUP_RATIO: Record<string, number> = { default: 1, svip: 1, vip: 1 };

function sortedJson(value: Record<string, number>): string {
  const sorted: Record<string, number> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = value[key];
  return JSON.stringify(sorted);
}

export const OPTION_SPECS = {
  PasswordLoginEnabled: { kind: 'toggle', default: 'true', rootOnly: true },
  PasswordRegisterEnabled: { kind: 'toggle', default: 'true', rootOnly: true },
  EmailVerificationEnabled: { kind: 'toggle', default: 'false', rootOnly: true },
  GitHubOAuthEnabled: { kind: 'toggle', default: 'false', rootOnly: true },
  GitHubClientId: { kind: 'text', default: '', rootOnly: true },
  GitHubClientSecret: { kind: 'secret', default: '', rootOnly: true },
  WeChatAuthEnabled: { kind: 'toggle', default: 'false', rootOnly: true },
  WeChatServerAddress: { kind: 'text', default: '', rootOnly: true, url: true },
  WeChatServerToken: { kind: 'secret', default: '', rootOnly: true },
  WeChatAccountQRCodeImageURL: { kind: 'text', default: '', rootOnly: true, url: true },
  TurnstileCheckEnabled: { kind: 'toggle', default: 'false', rootOnly: true },
  TurnstileSiteKey: { kind: 'text', default: '', rootOnly: true },
  TurnstileSecretKey: { kind: 'secret', default: '', rootOnly: true },
  RegisterEnabled: { kind: 'toggle', default: 'true', rootOnly: true },
  /** Admins and root must have two-factor sign-in: without it, signing in leads only to enrolment. */
  TwoFactorRequiredForAdmins: { kind: 'toggle', default: 'false', rootOnly: true },
  EmailDomainRestrictionEnabled: { kind: 'toggle', default: 'false', rootOnly: true },
  EmailDomainWhitelist: {
    kind: 'list',
    rootOnly: true,
    default: 'gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com',
  },
  SMTPServer: { kind: 'text', default: '', rootOnly: true },
  SMTPPort: { kind: 'number', default: '587', rootOnly: true },
  SMTPAccount: { kind: 'text', default: '', rootOnly: true },
  SMTPFrom: { kind: 'text', default: '', rootOnly: true },
  SMTPToken: { kind: 'secret', default: '', rootOnly: true },
  ServerAddress: { kind: 'text', default: '', rootOnly: true, url: true },
  Notice: { kind: 'text', default: '' },
  Footer: { kind: 'text', default: '' },
  About: { kind: 'text', default: '' },
  SystemName: { kind: 'text', default: 'Switchboard' },
  Logo: { kind: 'text', default: '', url: true },
  HomePageContent: { kind: 'text', default: '' },
  QuotaForNewUser: { kind: 'number', default: '0' },
  QuotaForInviter: { kind: 'number', default: '0' },
  QuotaForInvitee: { kind: 'number', default: '0' },
  QuotaRemindThreshold: { kind: 'number', default: '1000' },
  PreConsumedQuota: { kind: 'number', default: '500' },
  ModelRatio: { kind: 'json', default: sortedJson(DEFAULT_MODEL_RATIO) },
  ModelMaxOutputTokens: { kind: 'json', default: sortedJson(DEFAULT_MODEL_MAX_OUTPUT_TOKENS) },
  GroupRatio: { kind: 'json', default: sortedJson(DEFAULT_GROUP_RATIO) },
  /** Relay rate limits per group, `{"group": {"rpm": n, "tpm": n}}` (0 = unlimited); users and tokens may override (common/rateLimits.ts). */
  GroupRateLimits: { kind: 'json', default: JSON.stringify(DEFAULT_GROUP_RATE_LIMITS) },
  TopUpLink: { kind: 'text', default: '', rootOnly: true, url: true },
  ChatLink: { kind: 'text', default: '', url: true },
  QuotaPerUnit: { kind: 'number', default: '500000' },
  AutomaticDisableChannelEnabled: { kind: 'toggle', default: 'false' },
  ChannelDisableThreshold: { kind: 'number', default: '5' },
  LogConsumeEnabled: { kind: 'toggle', default: 'true' },
  /** Logs older than this many days are deleted by a background job (the usage rollups keep their figures); 0 keeps every log. */
  LogRetentionDays: { kind: 'number', default: '0' },
  DisplayInCurrencyEnabled: { kind: 'toggle', default: 'true' },
  DisplayTokenStatEnabled: { kind: 'toggle', default: 'true' },
  ApproximateTokenEnabled: { kind: 'toggle', default: 'false' },
  RetryTimes: { kind: 'number', default: '0' },
  /** Relayed requests one token may have in flight on one node (its own concurrency_limit overrides it); 0 = no limit. */
  TokenConcurrencyLimit: { kind: 'number', default: '64' },
  /** The same for all of one user's tokens together. */
  UserConcurrencyLimit: { kind: 'number', default: '128' },
} as const satisfies Record<string, OptionSpec>;

export type OptionKey = keyof typeof OPTION_SPECS;
export const OPTION_KEYS = Object.keys(OPTION_SPECS) as OptionKey[];

export function isOptionKey(key: string): key is OptionKey {
  return Object.prototype.hasOwnProperty.call(OPTION_SPECS, key);
}

export function isSecretOption(key: OptionKey): boolean {
  return OPTION_SPECS[key].kind === 'secret';
}

/** Whether only root may write the key (see OptionSpec.rootOnly). */
export function isRootOnlyOption(key: OptionKey): boolean {
  return (OPTION_SPECS[key] as OptionSpec).rootOnly === true;
}

/** Whether the key holds a link (see OptionSpec.url). */
export function isUrlOption(key: OptionKey): boolean {
  return (OPTION_SPECS[key] as OptionSpec).url === true;
}

/** The model/group ratio keys, named as the spec's "not a valid JSON string" message names them. */
export const JSON_OPTION_NAMES: Partial<Record<OptionKey, string>> = {
  ModelRatio: 'model ratio',
  ModelMaxOutputTokens: 'model max output tokens',
  GroupRatio: 'group ratio',
  GroupRateLimits: 'group rate limits',
};

/**
 * Whether a ratio table is acceptable: a JSON object whose values are
 * non-negative numbers. Console and server apply the same rule.
 */
export function isValidRatioJson(raw: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return false;
  }
  return (
    parsed !== null &&
    typeof parsed === 'object' &&
    !Array.isArray(parsed) &&
    Object.values(parsed as object).every((value) => typeof value === 'number' && Number.isFinite(value) && value >= 0)
  );
}

/** Whether a json option's value is acceptable: the rate-limit table by its own rule, the rest as ratio tables. */
export function isValidJsonOption(key: OptionKey, raw: string): boolean {
  return key === 'GroupRateLimits' ? parseGroupRateLimits(raw) !== undefined : isValidRatioJson(raw);
}

/** An acceptable link value: empty, an http(s) URL, or a path on this site (no `javascript:` and the like). */
export function isSafeLink(raw: string): boolean {
  const value = raw.trim();
  if (value === '') return true;
  if (/[\s\u0000-\u001f]/.test(value)) return false;
  if (value.startsWith('/') && !value.startsWith('//')) return true;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Reads a toggle value: exactly "true" is true. */
export function parseToggle(value: string | undefined): boolean {
  return value === 'true';
}

/**
 * The public status object (`GET /api/status` data), cached by the console in
 * localStorage under `status`. Field names are one-api v0.5.3's.
 */
export interface ClientStatus {
  version: string;
  start_time: number;
  system_name: string;
  logo: string;
  footer_html: string;
  quota_per_unit: number;
  display_in_currency: boolean;
  chat_link: string;
  server_address: string;
  top_up_link: string;
  wechat_login: boolean;
  wechat_qrcode: string;
  github_oauth: boolean;
  github_client_id: string;
  turnstile_check: boolean;
  turnstile_site_key: string;
  email_verification: boolean;
  /** Beyond v0.5.3: whether password login and registration are open, so the console can hide dead forms. */
  password_login: boolean;
  register_enabled: boolean;
}
