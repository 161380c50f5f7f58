/* eslint-disable max-lines -- one row per channel type (about sixty), each a vendor's whole description: the table is the point of the file */
/**
 * The channel types: the one table of per-type knowledge. One row per type:
 * the number stored in channels.type, the console label and badge colour, the
 * default upstream base URL, the wire protocol the relay speaks to it, and
 * what the console, the channel API, the balance job and /v1/models need to
 * know about it. Many types share the OpenAI protocol.
 */
import { readServiceAccountKey } from './serviceAccountKey';

export type ChannelProtocol =
  | 'openai'
  | 'azure'
  | 'anthropic'
  | 'gemini'
  | 'baidu'
  | 'zhipu'
  | 'ali'
  | 'xunfei'
  | 'vertex'
  | 'coze'
  | 'replicate'
  | 'deepl'
  | 'aiproxy-library'
  | 'bedrock';

/**
 * How a vendor's balance figure reads:
 * - `usd`: US dollars, shown as `$12.35`;
 * - `cny`: yuan, shown as `¥3.00`;
 * - `cny_per_10000`: ten-thousandths of a yuan (OpenAI-SB), shown as `¥2.50` for 25000;
 * - `points`: the vendor's own credit points, shown as a count (`25.0k`).
 */
export type BalanceUnit = 'usd' | 'cny' | 'cny_per_10000' | 'points';

/**
 * Where a type's balance comes from: the kind of endpoint (its path and wire
 * shape; server/channels/channelBalance.ts holds one fetcher per kind) and the
 * unit of the figure it gives. The endpoint is asked at the channel's base
 * URL, else `host`, else the type's default base URL.
 * - `openai-subscription`: OpenAI's billing dashboard (hard limit minus this period's usage);
 * - `credit-grants`: the resellers' `/dashboard/billing/credit_grants`, read from `field`;
 * - `openai-sb`: OpenAI-SB's `/sb-api/user/status`;
 * - `aiproxy`: AI Proxy's `/api/report/getUserOverview` (key in `api-key`);
 * - `deepseek`: `/user/balance`, one entry per currency: the entry in `unit` is read, and an
 *   account holding money in another currency is refused rather than shown in the wrong one;
 * - `moonshot`: `/v1/users/me/balance`, `data.available_balance`;
 * - `openrouter`: `/api/v1/credits`, `data.total_credits - data.total_usage`;
 * - `siliconflow`: `/v1/user/info`, `data.totalBalance`;
 * - `novita`: `/openapi/v1/billing/balance/detail`, `availableBalance` in ten-thousandths of a US dollar;
 * - `stepfun`: `/v1/accounts`, `balance`.
 */
export type ChannelBalance = (
  | {
      source:
        'openai-subscription' | 'openai-sb' | 'aiproxy' | 'deepseek' | 'moonshot' | 'openrouter' | 'siliconflow' | 'novita' | 'stepfun';
    }
  | { source: 'credit-grants'; field: 'total_available' | 'total_remaining' }
) & {
  unit: BalanceUnit;
  /** Where the balance endpoint lives when it is not on the type's default base URL. */
  host?: string;
  /**
   * Hosts of the vendor's other platform that report in another currency
   * (Moonshot's api.moonshot.ai answers in USD where api.moonshot.cn answers
   * in CNY, in the same shape): a channel pointed at one has its balance
   * refused, never stored in a unit the console would mislabel.
   */
  otherCurrencyHosts?: Readonly<Record<string, BalanceUnit>>;
};

/** The kinds of balance endpoint. */
export type BalanceSourceKind = ChannelBalance['source'];

/** What a type's `other` field means and what an empty one becomes when the channel is saved. */
export interface OtherSetting {
  /** The i18n key of the field's label in the console. */
  label: string;
  /** Stored in place of an empty `other` (by the console and by the channel API). */
  fallback: string;
  /**
   * True when the channel cannot work without it (Cloudflare's account id):
   * an empty one is refused on save, unless the channel's base URL has a path
   * of its own, which then carries it.
   */
  required?: true;
}

/** One channel type. */
export interface ChannelType {
  /** The number stored in `channels.type` (one-api's numbering, so its databases import as they are). */
  value: number;
  /** The name the console shows. */
  label: string;
  /** The console badge's palette colour. */
  color: string;
  /** Where the relay sends requests when the channel has no base URL; empty when there is none. */
  defaultBaseUrl: string;
  /** The wire protocol the relay speaks to this type's upstream. */
  protocol: ChannelProtocol;
  /** The models the console pre-fills when this type is chosen and no model is selected yet; empty for none. */
  defaultModels: readonly string[];
  /** What `other` means for this type; absent when the field is unused. */
  other?: OtherSetting;
  /** How the key is written when it is more than one secret (shown as the key's placeholder and hint). */
  keyFormat?: string;
  /**
   * `service-account-json`: the key is a Google service account's JSON key
   * file (Vertex AI), pasted over many lines in the console and checked for
   * the fields the token exchange needs (common/serviceAccountKey.ts).
   */
  keyKind?: 'service-account-json';
  /** True when a channel of this type cannot work without its own base URL (there is no usable default). */
  baseUrlRequired: boolean;
  /** Where the vendor reports the balance and in what unit; absent when it has no balance source. */
  balance?: ChannelBalance;
  /**
   * The `owned_by` that GET /v1/models reports for a model this type serves:
   * the organisation whose API answers it. Resellers of OpenAI's API report
   * `openai`; Azure reports `azure`; a Custom channel, whose upstream we
   * cannot know, reports `custom`.
   */
  ownedBy: string;
  /**
   * For a type on the OpenAI protocol whose API lives under another prefix
   * than `/v1` (Groq `/openai/v1`, Cohere `/compatibility/v1`, OpenRouter
   * `/api/v1`): the prefix that replaces `/v1` in every path. Zhipu's row
   * carries its v4 prefix too: its v4 API is OpenAI-shaped under it. A
   * `{account}` in it is replaced by the channel's `other` (Cloudflare's
   * account id).
   */
  pathPrefix?: string;
  /**
   * For a type on the OpenAI protocol: how the key is sent; `bearer`
   * (Authorization: Bearer) when absent. Azure's row names its `api-key` too.
   */
  authHeader?: 'bearer' | 'api-key' | 'x-api-key';
  /**
   * False for a vendor that refuses a chat request carrying `top_k` (OpenAI's
   * own API): a request translated from Anthropic's or Google's client
   * protocol then goes without it. Absent: it is sent (most OpenAI-compatible
   * vendors take it).
   */
  samplingTopK?: false;
  /**
   * True for a type on the OpenAI protocol whose vendor serves OpenAI's
   * Responses API (`/v1/responses`) itself: a Responses client's request
   * passes to it as bytes. Absent: it is translated into a chat request (most
   * resellers and compatible vendors serve only Chat Completions).
   */
  responses?: true;
  /**
   * True for a type whose vendor serves OpenAI's Realtime API (a WebSocket at
   * `/v1/realtime`, or Azure's `/openai/realtime`): GET /v1/realtime is relayed
   * only to channels of such a type (server/relay/realtime/).
   */
  realtime?: true;
  /**
   * True for a type on the OpenAI protocol whose vendor takes Anthropic's
   * `cache_control` marks on content parts (OpenRouter passes them to the
   * models that cache). Absent: a translated request goes without them, as
   * strict vendors refuse a part with a field they do not know.
   */
  promptCacheMarks?: true;
  /** The vendor's API reference, for the console and docs/channels.md; absent for resellers and custom upstreams. */
  docs?: string;
  /**
   * For a type on the OpenAI protocol whose vendor serves rerank: the shape of
   * its rerank endpoint and that endpoint's path from the base URL (the path
   * prefix does not apply: Cohere's is `/v2/rerank` beside its compatibility
   * API). Absent: the type does not rerank, and routing passes it by.
   */
  rerank?: { wire: RerankWire; path: string };
  /**
   * True for a type whose vendor has no chat, only embeddings and rerank (Jina, Voyage): routing passes its
   * channels by for anything else, and the channel test asks a one-document rerank.
   */
  noChat?: true;
}

/**
 * The rerank shapes vendors speak (server/protocols/upstream/rerank):
 * - `jina`: Jina's `{model, query, documents, top_n, return_documents}`, answered `{results, usage.total_tokens}` (SiliconFlow's too);
 * - `cohere`: Cohere's v2 `{model, query, documents, top_n}`, answered `{id, results, meta.billed_units.search_units}`;
 * - `voyage`: Voyage's `{model, query, documents, top_k}`, answered `{data, usage.total_tokens}`.
 */
export type RerankWire = 'jina' | 'cohere' | 'voyage';

/** The rerank endpoint of a vendor of Jina's shape at OpenAI's `/v1`. */
const jinaRerank = { wire: 'jina', path: '/v1/rerank' } as const;

const openAiReseller = { protocol: 'openai', defaultModels: [], baseUrlRequired: false, ownedBy: 'openai', samplingTopK: false } as const;

/** A vendor with its own OpenAI-compatible API and its own models. */
const openAiCompatible = { protocol: 'openai', baseUrlRequired: false } as const;

export const CHANNEL_TYPES: readonly ChannelType[] = [
  // The 18 channel types: numbers, labels and colours as one-api fixes them.
  {
    value: 1,
    label: 'OpenAI',
    color: 'green',
    defaultBaseUrl: 'https://api.openai.com',
    ...openAiReseller,
    balance: { source: 'openai-subscription', unit: 'usd' },
    responses: true,
    realtime: true,
    docs: 'https://platform.openai.com/docs/api-reference',
  },
  {
    value: 14,
    label: 'Anthropic Claude',
    color: 'black',
    defaultBaseUrl: 'https://api.anthropic.com',
    protocol: 'anthropic',
    defaultModels: [
      'claude-sonnet-4-5',
      'claude-opus-4-1',
      'claude-haiku-4-5',
      'claude-sonnet-4-0',
      'claude-3-7-sonnet-latest',
      'claude-3-5-haiku-latest',
    ],
    baseUrlRequired: false,
    ownedBy: 'anthropic',
    docs: 'https://docs.anthropic.com/en/api/messages',
  },
  {
    value: 3,
    label: 'Azure OpenAI',
    color: 'olive',
    defaultBaseUrl: '',
    protocol: 'azure',
    defaultModels: [],
    other: { label: 'app.channel.other_azure', fallback: '2023-06-01-preview' },
    baseUrlRequired: true,
    ownedBy: 'azure',
    authHeader: 'api-key',
    samplingTopK: false,
    realtime: true,
    docs: 'https://learn.microsoft.com/en-us/azure/ai-services/openai/reference',
  },
  {
    // PaLM is retired upstream: type 11 keeps its number and key and relays through Gemini.
    value: 11,
    label: 'Google PaLM2',
    color: 'orange',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    protocol: 'gemini',
    defaultModels: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-2.0-flash'],
    baseUrlRequired: false,
    ownedBy: 'google',
    docs: 'https://ai.google.dev/api/generate-content',
  },
  {
    value: 15,
    label: 'Baidu ERNIE',
    color: 'blue',
    defaultBaseUrl: 'https://aip.baidubce.com',
    protocol: 'baidu',
    defaultModels: ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-8K', 'ERNIE-Lite-8K', 'ERNIE-Tiny-8K', 'Embedding-V1'],
    keyFormat: 'APIKey|SecretKey',
    baseUrlRequired: false,
    ownedBy: 'baidu',
    docs: 'https://cloud.baidu.com/doc/WENXINWORKSHOP/index.html',
  },
  {
    value: 17,
    label: 'Alibaba Qwen',
    color: 'orange',
    defaultBaseUrl: 'https://dashscope.aliyuncs.com',
    protocol: 'ali',
    defaultModels: ['qwen-max', 'qwen-plus', 'qwen-turbo', 'qwen-long', 'text-embedding-v3'],
    baseUrlRequired: false,
    ownedBy: 'alibaba',
    docs: 'https://help.aliyun.com/zh/model-studio/',
  },
  {
    value: 18,
    label: 'iFlytek Spark',
    color: 'blue',
    defaultBaseUrl: '',
    protocol: 'xunfei',
    defaultModels: ['SparkDesk'],
    other: { label: 'app.channel.other_spark', fallback: 'v2.1' },
    keyFormat: 'APPID|APISecret|APIKey',
    baseUrlRequired: false,
    ownedBy: 'iflytek',
    docs: 'https://www.xfyun.cn/doc/spark/Web.html',
  },
  {
    // `other`: empty or `v4` = the v4 API (OpenAI-shaped, key as Bearer); `v3` = the older signed-JWT protocol.
    value: 16,
    label: 'Zhipu ChatGLM',
    color: 'violet',
    defaultBaseUrl: 'https://open.bigmodel.cn',
    protocol: 'zhipu',
    defaultModels: ['glm-4-plus', 'glm-4-air', 'glm-4-flash', 'glm-4-long', 'embedding-3'],
    other: { label: 'app.channel.other_zhipu', fallback: 'v4' },
    pathPrefix: '/api/paas/v4',
    baseUrlRequired: false,
    ownedBy: 'zhipu',
    docs: 'https://open.bigmodel.cn/dev/api',
  },
  {
    value: 8,
    label: 'Custom',
    color: 'pink',
    defaultBaseUrl: '',
    ...openAiReseller,
    baseUrlRequired: true,
    realtime: true,
    balance: { source: 'openai-subscription', unit: 'usd' },
    ownedBy: 'custom',
    rerank: jinaRerank,
  },
  { value: 2, label: 'API2D', color: 'blue', defaultBaseUrl: 'https://oa.api2d.net', ...openAiReseller },
  {
    value: 5,
    label: 'OpenAI-SB',
    color: 'brown',
    defaultBaseUrl: 'https://api.openai-sb.com',
    ...openAiReseller,
    balance: { source: 'openai-sb', unit: 'cny_per_10000' },
  },
  { value: 7, label: 'OhMyGPT', color: 'purple', defaultBaseUrl: 'https://api.ohmygpt.com', ...openAiReseller },
  {
    value: 10,
    label: 'AI Proxy',
    color: 'purple',
    defaultBaseUrl: 'https://api.aiproxy.io',
    ...openAiReseller,
    balance: { source: 'aiproxy', unit: 'points', host: 'https://aiproxy.io' },
  },
  {
    value: 4,
    label: 'CloseAI',
    color: 'teal',
    defaultBaseUrl: 'https://api.closeai-proxy.xyz',
    ...openAiReseller,
    balance: { source: 'credit-grants', field: 'total_available', unit: 'cny' },
  },
  { value: 6, label: 'OpenAI Max', color: 'violet', defaultBaseUrl: 'https://api.openaimax.com', ...openAiReseller },
  { value: 9, label: 'AI.LS', color: 'yellow', defaultBaseUrl: 'https://api.caipacity.com', ...openAiReseller },
  {
    value: 12,
    label: 'API2GPT',
    color: 'blue',
    defaultBaseUrl: 'https://api.api2gpt.com',
    ...openAiReseller,
    balance: { source: 'credit-grants', field: 'total_remaining', unit: 'cny' },
  },
  {
    value: 13,
    label: 'AIGC2D',
    color: 'purple',
    defaultBaseUrl: 'https://api.aigc2d.com',
    ...openAiReseller,
    balance: { source: 'credit-grants', field: 'total_available', unit: 'points' },
  },

  // Today's providers, beyond the spec, with the numbers later one-api versions gave them (so databases stay portable).
  {
    value: 24,
    label: 'Google Gemini',
    color: 'blue',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    protocol: 'gemini',
    defaultModels: [
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-2.5-flash-lite',
      'gemini-2.0-flash',
      'gemini-2.0-flash-lite',
      'gemini-embedding-001',
    ],
    baseUrlRequired: false,
    ownedBy: 'google',
    docs: 'https://ai.google.dev/api',
  },
  {
    value: 36,
    label: 'DeepSeek',
    color: 'blue',
    defaultBaseUrl: 'https://api.deepseek.com',
    ...openAiCompatible,
    defaultModels: ['deepseek-chat', 'deepseek-reasoner'],
    ownedBy: 'deepseek',
    docs: 'https://api-docs.deepseek.com/',
    // https://api-docs.deepseek.com/api/get-user-balance: one entry per currency (CNY or USD) on the same host;
    // CNY is DeepSeek's home currency, and a USD-only account is refused rather than shown as yuan
    balance: { source: 'deepseek', unit: 'cny' },
  },
  {
    value: 20,
    label: 'OpenRouter',
    color: 'black',
    defaultBaseUrl: 'https://openrouter.ai',
    pathPrefix: '/api/v1',
    ...openAiCompatible,
    defaultModels: [
      'openai/gpt-4o-mini',
      'anthropic/claude-sonnet-4.5',
      'google/gemini-2.5-flash',
      'deepseek/deepseek-chat',
      'meta-llama/llama-3.3-70b-instruct',
    ],
    ownedBy: 'openrouter',
    docs: 'https://openrouter.ai/docs/api-reference/overview',
    promptCacheMarks: true,
    // https://openrouter.ai/docs/api/api-reference/credits/get-credits: US dollars. OpenRouter documents a
    // management key for it: a channel holding an inference-only key gets OpenRouter's refusal as its balance error
    balance: { source: 'openrouter', unit: 'usd' },
  },
  {
    value: 28,
    label: 'Mistral AI',
    color: 'orange',
    defaultBaseUrl: 'https://api.mistral.ai',
    ...openAiCompatible,
    defaultModels: [
      'mistral-large-latest',
      'mistral-medium-latest',
      'mistral-small-latest',
      'codestral-latest',
      'open-mistral-nemo',
      'mistral-embed',
    ],
    ownedBy: 'mistralai',
    docs: 'https://docs.mistral.ai/api/',
  },
  {
    value: 29,
    label: 'Groq',
    color: 'red',
    defaultBaseUrl: 'https://api.groq.com',
    pathPrefix: '/openai/v1',
    ...openAiCompatible,
    defaultModels: [
      'llama-3.3-70b-versatile',
      'llama-3.1-8b-instant',
      'meta-llama/llama-4-scout-17b-16e-instruct',
      'meta-llama/llama-4-maverick-17b-128e-instruct',
      'openai/gpt-oss-120b',
      'openai/gpt-oss-20b',
    ],
    ownedBy: 'groq',
    docs: 'https://console.groq.com/docs/openai',
  },
  {
    value: 45,
    label: 'xAI Grok',
    color: 'black',
    defaultBaseUrl: 'https://api.x.ai',
    ...openAiCompatible,
    defaultModels: ['grok-4', 'grok-3', 'grok-3-mini'],
    ownedBy: 'xai',
    docs: 'https://docs.x.ai/docs/api-reference',
  },
  {
    value: 25,
    label: 'Moonshot Kimi',
    color: 'grey',
    defaultBaseUrl: 'https://api.moonshot.cn',
    ...openAiCompatible,
    defaultModels: ['kimi-k2-0905-preview', 'kimi-k2-turbo-preview', 'moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k'],
    ownedBy: 'moonshot',
    docs: 'https://platform.moonshot.cn/docs/api/chat',
    // https://platform.moonshot.cn/docs/api/balance: yuan on api.moonshot.cn; the international
    // platform (https://platform.moonshot.ai/docs/api/balance) answers the same shape in US dollars
    balance: { source: 'moonshot', unit: 'cny', otherCurrencyHosts: { 'api.moonshot.ai': 'usd' } },
  },
  {
    value: 35,
    label: 'Cohere',
    color: 'teal',
    defaultBaseUrl: 'https://api.cohere.ai',
    pathPrefix: '/compatibility/v1',
    ...openAiCompatible,
    defaultModels: ['command-a-03-2025', 'command-r-plus-08-2024', 'command-r-08-2024', 'command-r7b-12-2024', 'embed-v4.0', 'rerank-v3.5'],
    ownedBy: 'cohere',
    docs: 'https://docs.cohere.com/docs/compatibility-api',
    // https://docs.cohere.com/reference/rerank: v2, beside the compatibility API; billed per search unit
    rerank: { wire: 'cohere', path: '/v2/rerank' },
  },
  {
    value: 39,
    label: 'Together AI',
    color: 'blue',
    defaultBaseUrl: 'https://api.together.xyz',
    ...openAiCompatible,
    defaultModels: [
      'meta-llama/Llama-3.3-70B-Instruct-Turbo',
      'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo',
      'deepseek-ai/DeepSeek-V3',
      'Qwen/Qwen2.5-72B-Instruct-Turbo',
    ],
    ownedBy: 'together',
    docs: 'https://docs.together.ai/reference/chat-completions-1',
  },
  {
    value: 44,
    label: 'SiliconFlow',
    color: 'purple',
    defaultBaseUrl: 'https://api.siliconflow.cn',
    ...openAiCompatible,
    defaultModels: [
      'deepseek-ai/DeepSeek-V3',
      'deepseek-ai/DeepSeek-R1',
      'Qwen/Qwen2.5-72B-Instruct',
      'Qwen/Qwen2.5-7B-Instruct',
      'BAAI/bge-m3',
    ],
    ownedBy: 'siliconflow',
    docs: 'https://docs.siliconflow.cn/en/api-reference/chat-completions/chat-completions',
    // https://docs.siliconflow.cn/en/api-reference/userinfo/get-user-info: yuan on api.siliconflow.cn; the
    // international platform (https://docs.siliconflow.com/en/api-reference/userinfo/get-user-info) bills in US dollars
    balance: { source: 'siliconflow', unit: 'cny', otherCurrencyHosts: { 'api.siliconflow.com': 'usd' } },
    // https://docs.siliconflow.cn/en/api-reference/rerank/create-rerank: Jina's shape, tokens in `meta.tokens`
    rerank: jinaRerank,
  },
  {
    // A local server by default; point the base URL at another host when Ollama runs elsewhere.
    value: 30,
    label: 'Ollama',
    color: 'grey',
    defaultBaseUrl: 'http://localhost:11434',
    ...openAiCompatible,
    defaultModels: ['llama3.2', 'qwen3', 'gemma3', 'nomic-embed-text'],
    ownedBy: 'ollama',
    docs: 'https://github.com/ollama/ollama/blob/main/docs/openai.md',
  },
  // The rest of one-api's later types whose vendors serve OpenAI's wire (relay/channeltype/define.go numbers).
  {
    value: 19,
    label: '360 AI Brain',
    color: 'green',
    defaultBaseUrl: 'https://api.360.cn',
    ...openAiCompatible,
    defaultModels: ['360gpt2-pro', '360gpt-pro', '360gpt-turbo', 'embedding_s1_v1'],
    ownedBy: '360',
    docs: 'https://ai.360.com/platform/docs/overview',
  },
  {
    // The Hunyuan API's OpenAI-compatible endpoint, keyed by one API key (one-api's type 23 spoke the signed Tencent Cloud API)
    value: 23,
    label: 'Tencent Hunyuan',
    color: 'teal',
    defaultBaseUrl: 'https://api.hunyuan.cloud.tencent.com',
    ...openAiCompatible,
    defaultModels: ['hunyuan-turbos-latest', 'hunyuan-t1-latest', 'hunyuan-standard', 'hunyuan-lite', 'hunyuan-embedding'],
    ownedBy: 'tencent',
    docs: 'https://cloud.tencent.com/document/product/1729/111007',
  },
  {
    value: 26,
    label: 'Baichuan',
    color: 'orange',
    defaultBaseUrl: 'https://api.baichuan-ai.com',
    ...openAiCompatible,
    defaultModels: ['Baichuan4-Turbo', 'Baichuan4-Air', 'Baichuan4', 'Baichuan3-Turbo', 'Baichuan-Text-Embedding'],
    ownedBy: 'baichuan',
    docs: 'https://platform.baichuan-ai.com/docs/api',
  },
  {
    // MiniMax's OpenAI-compatible /v1/chat/completions on its China platform (one-api used the older
    // api.minimax.chat host and /v1/text/chatcompletion_v2); the international platform is api.minimax.io
    value: 27,
    label: 'MiniMax',
    color: 'red',
    defaultBaseUrl: 'https://api.minimaxi.com',
    ...openAiCompatible,
    defaultModels: ['MiniMax-M2.7', 'MiniMax-M2.7-highspeed', 'MiniMax-M2', 'MiniMax-M1', 'MiniMax-Text-01'],
    ownedBy: 'minimax',
    docs: 'https://platform.minimaxi.com/document/ChatCompletion%20v2',
  },
  {
    value: 31,
    label: '01.AI Yi',
    color: 'green',
    defaultBaseUrl: 'https://api.lingyiwanwu.com',
    ...openAiCompatible,
    defaultModels: ['yi-lightning', 'yi-large', 'yi-medium', 'yi-vision-v2'],
    ownedBy: '01-ai',
    docs: 'https://platform.lingyiwanwu.com/docs',
  },
  {
    value: 32,
    label: 'StepFun',
    color: 'blue',
    defaultBaseUrl: 'https://api.stepfun.com',
    ...openAiCompatible,
    defaultModels: ['step-2-16k', 'step-2-mini', 'step-1-8k', 'step-1-32k', 'step-1v-8k'],
    ownedBy: 'stepfun',
    docs: 'https://platform.stepfun.com/docs/llm/text',
    // https://platform.stepfun.com/docs/zh/api-reference/accounts/get: yuan on api.stepfun.com; the international
    // platform (https://platform.stepfun.ai/docs/en/api-reference/accounts/get) answers the same shape, in its own currency
    balance: { source: 'stepfun', unit: 'cny', otherCurrencyHosts: { 'api.stepfun.ai': 'usd' } },
  },
  {
    // `{account}` is the channel's `other` (the Cloudflare account id); a base URL with a path of its own carries
    // the account instead (`.../client/v4/accounts/<id>/ai`, or an AI Gateway's `.../<gateway>/workers-ai`)
    value: 37,
    label: 'Cloudflare Workers AI',
    color: 'orange',
    defaultBaseUrl: 'https://api.cloudflare.com',
    pathPrefix: '/client/v4/accounts/{account}/ai/v1',
    ...openAiCompatible,
    defaultModels: [
      '@cf/meta/llama-3.3-70b-instruct-fp8-fast',
      '@cf/meta/llama-3.1-8b-instruct',
      '@cf/openai/gpt-oss-120b',
      '@cf/baai/bge-large-en-v1.5',
    ],
    other: { label: 'app.channel.other_cloudflare', fallback: '', required: true },
    ownedBy: 'cloudflare',
    docs: 'https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility/',
  },
  {
    // Volcengine Ark: a model name, or the id of an inference endpoint (`ep-...`) created in the Ark console
    value: 40,
    label: 'Doubao (Volcengine Ark)',
    color: 'blue',
    defaultBaseUrl: 'https://ark.cn-beijing.volces.com',
    pathPrefix: '/api/v3',
    ...openAiCompatible,
    defaultModels: ['doubao-seed-1-6-250615', 'doubao-1-5-pro-32k-250115', 'doubao-1-5-lite-32k-250115', 'doubao-embedding-text-240715'],
    ownedBy: 'bytedance',
    docs: 'https://www.volcengine.com/docs/82379/1298454',
  },
  {
    value: 41,
    label: 'Novita AI',
    color: 'violet',
    defaultBaseUrl: 'https://api.novita.ai',
    pathPrefix: '/v3/openai',
    ...openAiCompatible,
    defaultModels: [
      'deepseek/deepseek-r1',
      'deepseek/deepseek_v3',
      'meta-llama/llama-3.3-70b-instruct',
      'meta-llama/llama-3.1-8b-instruct',
      'qwen/qwen-2.5-72b-instruct',
    ],
    ownedBy: 'novita',
    docs: 'https://novita.ai/docs/guides/llm-api',
    // https://novita.ai/docs/api-reference/basic-get-user-balance: US dollars (sent in ten-thousandths)
    balance: { source: 'novita', unit: 'usd' },
  },
  {
    // Qianfan's v2 API: OpenAI's wire, keyed by one bearer API key (`bce-v3/...`), unlike type 15's APIKey|SecretKey
    value: 47,
    label: 'Baidu Qianfan v2',
    color: 'blue',
    defaultBaseUrl: 'https://qianfan.baidubce.com',
    pathPrefix: '/v2',
    ...openAiCompatible,
    defaultModels: ['ernie-4.5-turbo-128k', 'ernie-4.0-8k', 'ernie-3.5-8k', 'ernie-speed-128k', 'ernie-lite-8k', 'embedding-v1'],
    ownedBy: 'baidu',
    docs: 'https://cloud.baidu.com/doc/qianfan-api/s/3m7of64lb',
  },
  {
    // Spark's HTTP API on OpenAI's wire, keyed by the console's APIPassword (type 18 is the WebSocket API).
    // Only Lite (free) is pre-filled: 4.0Ultra, max-32k, generalv3.5, pro-128k and generalv3 are sold in
    // token packages with no per-token list price, so an operator adds them with the price they paid
    value: 48,
    label: 'iFlytek Spark v2',
    color: 'blue',
    defaultBaseUrl: 'https://spark-api-open.xf-yun.com',
    ...openAiCompatible,
    defaultModels: ['lite'],
    ownedBy: 'iflytek',
    docs: 'https://www.xfyun.cn/doc/spark/HTTP%E8%B0%83%E7%94%A8%E6%96%87%E6%A1%A3.html',
  },
  {
    // DashScope's compatible mode (type 17 speaks DashScope's own protocol on the same host)
    value: 49,
    label: 'Alibaba Bailian',
    color: 'orange',
    defaultBaseUrl: 'https://dashscope.aliyuncs.com',
    pathPrefix: '/compatible-mode/v1',
    ...openAiCompatible,
    defaultModels: ['qwen-max', 'qwen-plus', 'qwen-turbo', 'qwen-long', 'text-embedding-v3'],
    ownedBy: 'alibaba',
    docs: 'https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope',
  },
  {
    // Gemini's OpenAI-compatible endpoint, for clients of OpenAI's wire (type 24 speaks Gemini's own API)
    value: 51,
    label: 'Gemini OpenAI-compatible',
    color: 'blue',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    pathPrefix: '/v1beta/openai',
    ...openAiCompatible,
    defaultModels: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash', 'gemini-embedding-001'],
    ownedBy: 'google',
    docs: 'https://ai.google.dev/gemini-api/docs/openai',
  },
  {
    // Gemini and Claude on Google Cloud (server/protocols/upstream/vertex): the key is a service account's JSON key
    // file; `other` is `region` (us-central1 by default, `global` allowed) or `region|project`; no default base URL,
    // since the host is the region's ({region}-aiplatform.googleapis.com)
    value: 42,
    label: 'Google Vertex AI',
    color: 'blue',
    defaultBaseUrl: '',
    protocol: 'vertex',
    defaultModels: [
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-2.5-flash-lite',
      'gemini-2.0-flash',
      'claude-sonnet-4-5',
      'claude-opus-4-1',
      'claude-haiku-4-5',
      'claude-3-7-sonnet-20250219',
      'gemini-embedding-001',
      'text-embedding-005',
      'text-multilingual-embedding-002',
    ],
    other: { label: 'app.channel.other_vertex', fallback: 'us-central1' },
    keyFormat: 'service account JSON key file',
    keyKind: 'service-account-json',
    baseUrlRequired: false,
    ownedBy: 'google',
    docs: 'https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest',
  },
  {
    // a bot answers as the model `bot-<bot_id>`; the key is a personal access token
    value: 34,
    label: 'Coze',
    color: 'blue',
    defaultBaseUrl: 'https://api.coze.com',
    protocol: 'coze',
    defaultModels: [],
    baseUrlRequired: false,
    ownedBy: 'coze',
    docs: 'https://www.coze.com/docs/developer_guides/chat_v3',
  },
  {
    // the model is `owner/name` (or `owner/name:version`); the key an API token (r8_...)
    value: 46,
    label: 'Replicate',
    color: 'grey',
    defaultBaseUrl: 'https://api.replicate.com',
    protocol: 'replicate',
    defaultModels: ['meta/meta-llama-3-70b-instruct', 'meta/meta-llama-3-8b-instruct', 'meta/meta-llama-3.1-405b-instruct'],
    baseUrlRequired: false,
    ownedBy: 'replicate',
    docs: 'https://replicate.com/docs/reference/http#models.predictions.create',
  },
  {
    // translation as a chat model: `deepl-<target language>`; a free key (ending :fx) goes to api-free.deepl.com
    value: 38,
    label: 'DeepL',
    color: 'black',
    defaultBaseUrl: 'https://api.deepl.com',
    protocol: 'deepl',
    defaultModels: ['deepl-zh', 'deepl-en-us', 'deepl-ja', 'deepl-de', 'deepl-fr'],
    baseUrlRequired: false,
    ownedBy: 'deepl',
    docs: 'https://developers.deepl.com/api-reference/translate',
  },
  {
    // a FastGPT app's OpenAI-shaped chat API: the key (fastgpt-...) picks the app, the base URL ends in /api
    value: 22,
    label: 'FastGPT',
    color: 'green',
    defaultBaseUrl: '',
    ...openAiCompatible,
    baseUrlRequired: true,
    defaultModels: [],
    ownedBy: 'fastgpt',
    docs: 'https://doc.fastgpt.io/docs/introduction/development/openapi/chat',
  },
  {
    // AI Proxy's knowledge-base chat: the library id in `other`, the answer's documents appended
    value: 21,
    label: 'AI Proxy library',
    color: 'purple',
    defaultBaseUrl: 'https://api.aiproxy.io',
    protocol: 'aiproxy-library',
    defaultModels: ['gpt-4o-mini', 'gpt-3.5-turbo'],
    other: { label: 'app.channel.other_library', fallback: '', required: true },
    baseUrlRequired: false,
    ownedBy: 'aiproxy',
    docs: 'https://docs.aiproxy.io/dev/library',
  },
  {
    // a raw pass-through at /v1/oneapi/proxy/:channelid/* (server/routes/v1/proxy.ts); the key is sent as the
    // Authorization header as written. Models listed on it are relayed as the OpenAI wire.
    value: 43,
    label: 'Proxy',
    color: 'grey',
    defaultBaseUrl: '',
    protocol: 'openai',
    defaultModels: [],
    baseUrlRequired: true,
    ownedBy: 'custom',
  },
  {
    // every model family Bedrock serves through Converse; Claude's names map to Bedrock ids by default (server/protocols/upstream/bedrock/models.ts)
    value: 33,
    label: 'AWS Bedrock',
    color: 'orange',
    defaultBaseUrl: '',
    protocol: 'bedrock',
    defaultModels: [
      'claude-3-5-sonnet-20241022',
      'claude-3-5-haiku-20241022',
      'claude-3-7-sonnet-20250219',
      'claude-sonnet-4-20250514',
      'anthropic.claude-3-5-sonnet-20241022-v2:0',
      'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
      'amazon.nova-pro-v1:0',
      'amazon.nova-lite-v1:0',
      'amazon.nova-micro-v1:0',
      'meta.llama3-1-70b-instruct-v1:0',
      'mistral.mistral-large-2407-v1:0',
      'cohere.command-r-plus-v1:0',
      'amazon.titan-embed-text-v2:0',
      'cohere.embed-english-v3',
      'amazon.rerank-v1:0',
      'cohere.rerank-v3-5:0',
    ],
    other: { label: 'app.channel.other_bedrock', fallback: 'us-east-1' },
    keyFormat: 'AK|SK|region[|session token] or APIKey[|region]',
    baseUrlRequired: false,
    ownedBy: 'aws',
    docs: 'https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html',
  },
  {
    value: 50,
    label: 'OpenAI Compatible',
    color: 'pink',
    defaultBaseUrl: '',
    protocol: 'openai',
    defaultModels: [],
    baseUrlRequired: true,
    ownedBy: 'custom',
    rerank: jinaRerank,
  },

  // Types one-api does not have, numbered past its 1..51 (new-api's Jina, 38, imports as 52).
  {
    // Jina's embeddings are OpenAI-shaped at /v1/embeddings; its reranker is the shape /v1/rerank takes from clients
    value: 52,
    label: 'Jina AI',
    color: 'black',
    defaultBaseUrl: 'https://api.jina.ai',
    ...openAiCompatible,
    defaultModels: ['jina-reranker-v2-base-multilingual', 'jina-reranker-m0', 'jina-reranker-v1-turbo-en'],
    ownedBy: 'jina',
    docs: 'https://jina.ai/reranker/',
    rerank: jinaRerank,
    noChat: true,
  },
  {
    // Voyage's embeddings are OpenAI-shaped at /v1/embeddings; its reranker takes `top_k` and answers `data`
    value: 53,
    label: 'Voyage AI',
    color: 'teal',
    defaultBaseUrl: 'https://api.voyageai.com',
    ...openAiCompatible,
    defaultModels: ['rerank-2.5', 'rerank-2.5-lite', 'rerank-2', 'rerank-2-lite'],
    ownedBy: 'voyage',
    docs: 'https://docs.voyageai.com/reference/reranker-api',
    rerank: { wire: 'voyage', path: '/v1/rerank' },
    noChat: true,
  },
];

const CHANNEL_TYPES_BY_VALUE = new Map(CHANNEL_TYPES.map((type) => [type.value, type]));

/** The row for a stored type number; undefined for a number no row has. */
export function findChannelType(value: number): ChannelType | undefined {
  return CHANNEL_TYPES_BY_VALUE.get(value);
}

/**
 * Whether a key has the shape its type's `keyFormat` asks for: as many
 * non-empty `|`-separated parts as the format names. Any non-empty key fits
 * a type without a format.
 */
export function keyFitsFormat(value: number, key: string): boolean {
  if (findChannelType(value)?.keyKind === 'service-account-json') return !('problem' in readServiceAccountKey(key));
  const format = findChannelType(value)?.keyFormat;
  if (!format) return key.trim() !== '';
  const parts = key.split('|');
  if (!parts.every((part) => part.trim() !== '')) return false;
  // a format may offer alternatives (`A|B or C`) and optional parts (`A[|B]`)
  return format.split(' or ').some((alternative) => {
    const required = alternative.replace(/\[[^\]]*\]/g, '').split('|').length;
    const optional = (alternative.match(/\[\|/g) ?? []).length;
    return parts.length >= required && parts.length <= required + optional;
  });
}

/** True for a base URL with a path after its host (which then carries what the path prefix would). */
function baseUrlHasPath(baseUrl: string): boolean {
  return /^https?:\/\/[^/]+\/[^/]/.test(baseUrl.trim());
}

/** Whether a channel lacks the `other` its type cannot work without (and its base URL does not stand in for it). */
export function otherMissing(value: number, other: string, baseUrl: string): boolean {
  return findChannelType(value)?.other?.required === true && other.trim() === '' && !baseUrlHasPath(baseUrl);
}

/**
 * The path prefix of an OpenAI-wire channel: its row's (`/v1` by default),
 * with `{account}` filled from `other`; `/v1` alone after a base URL whose
 * own path holds the account. Undefined when the account is nowhere.
 */
export function openAiPathPrefix(value: number, other: string, baseUrl: string): string | undefined {
  const prefix = findChannelType(value)?.pathPrefix ?? '/v1';
  if (!prefix.includes('{account}')) return prefix;
  if (other.trim()) return prefix.replace('{account}', encodeURIComponent(other.trim()));
  return baseUrlHasPath(baseUrl) ? '/v1' : undefined;
}

/** The types whose vendor reports a balance. */
export const BALANCE_CHANNEL_TYPES: readonly number[] = CHANNEL_TYPES.filter((type) => type.balance).map((type) => type.value);

/** `owned_by` for a model served by a channel of this type; `custom` for a number no row has. */
export function ownerOfChannelType(value: number): string {
  return findChannelType(value)?.ownedBy ?? 'custom';
}
