/**
 * The channel types: the one table of per-type knowledge. One row per type:
 * the number stored in channels.type, the console label and badge colour, the
 * default upstream base URL, the wire protocol the relay speaks to it, and
 * what the console, the channel API, the balance job and /v1/models need to
 * know about it. Many types share the OpenAI protocol.
 */
export type ChannelProtocol = 'openai' | 'azure' | 'anthropic' | 'gemini' | 'baidu' | 'zhipu' | 'ali' | 'xunfei';

/**
 * How a vendor's balance figure reads:
 * - `usd`: US dollars, shown as `$12.35`;
 * - `cny`: yuan, shown as `¥3.00`;
 * - `cny_per_10000`: ten-thousandths of a yuan (OpenAI-SB), shown as `¥2.50` for 25000;
 * - `points`: the vendor's own credit points, shown as a count (`25.0k`).
 */
export type BalanceUnit = 'usd' | 'cny' | 'cny_per_10000' | 'points';

/** What a type's `other` field means and what an empty one becomes when the channel is saved. */
export interface OtherSetting {
  /** The i18n key of the field's label in the console. */
  label: string;
  /** Stored in place of an empty `other` (by the console and by the channel API). */
  fallback: string;
}

/** One channel type. */
export interface ChannelType {
  /** The number stored in `channels.type` (spec §3). */
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
  /** True when a channel of this type cannot work without its own base URL (there is no usable default). */
  baseUrlRequired: boolean;
  /**
   * The unit of the balance the vendor reports; absent when the vendor has no
   * balance source. server/relay/channelHealth.ts holds one fetch per type
   * listed here (a test keeps the two sets equal).
   */
  balanceUnit?: BalanceUnit;
  /**
   * The `owned_by` that GET /v1/models reports for a model this type serves:
   * the organisation whose API answers it. Resellers of OpenAI's API report
   * `openai`; Azure reports `azure`; a Custom channel, whose upstream we
   * cannot know, reports `custom`.
   */
  ownedBy: string;
  /**
   * For a type on the OpenAI protocol whose API lives under another prefix
   * than `/v1` (Zhipu `/api/paas/v4`, Qwen `/compatible-mode/v1`, Gemini
   * `/v1beta/openai`): the prefix that replaces `/v1` in every path.
   */
  pathPrefix?: string;
  /** For a type on the OpenAI protocol: how the key is sent; `bearer` (Authorization: Bearer) when absent. */
  authHeader?: 'bearer' | 'api-key' | 'x-api-key';
}

const openAiReseller = { protocol: 'openai', defaultModels: [], baseUrlRequired: false, ownedBy: 'openai' } as const;

export const CHANNEL_TYPES: readonly ChannelType[] = [
  { value: 1, label: 'OpenAI', color: 'green', defaultBaseUrl: 'https://api.openai.com', ...openAiReseller, balanceUnit: 'usd' },
  {
    value: 14, label: 'Anthropic Claude', color: 'black', defaultBaseUrl: 'https://api.anthropic.com', protocol: 'anthropic',
    defaultModels: ['claude-instant-1', 'claude-2'], baseUrlRequired: false, ownedBy: 'anthropic',
  },
  {
    value: 3, label: 'Azure OpenAI', color: 'olive', defaultBaseUrl: '', protocol: 'azure',
    defaultModels: [], other: { label: 'app.channel.other_azure', fallback: '2023-06-01-preview' }, baseUrlRequired: true, ownedBy: 'azure',
  },
  { value: 11, label: 'Google PaLM2', color: 'orange', defaultBaseUrl: '', protocol: 'gemini', defaultModels: ['PaLM-2'], baseUrlRequired: false, ownedBy: 'google' },
  {
    value: 15, label: 'Baidu ERNIE', color: 'blue', defaultBaseUrl: 'https://aip.baidubce.com', protocol: 'baidu',
    defaultModels: ['ERNIE-Bot', 'ERNIE-Bot-turbo', 'Embedding-V1'], keyFormat: 'APIKey|SecretKey', baseUrlRequired: false, ownedBy: 'baidu',
  },
  {
    value: 17, label: 'Alibaba Qwen', color: 'orange', defaultBaseUrl: 'https://dashscope.aliyuncs.com', protocol: 'ali',
    defaultModels: ['qwen-v1', 'qwen-plus-v1'], baseUrlRequired: false, ownedBy: 'alibaba',
  },
  {
    value: 18, label: 'iFlytek Spark', color: 'blue', defaultBaseUrl: '', protocol: 'xunfei',
    defaultModels: ['SparkDesk'], other: { label: 'app.channel.other_spark', fallback: 'v2.1' }, keyFormat: 'APPID|APISecret|APIKey', baseUrlRequired: false, ownedBy: 'iflytek',
  },
  {
    value: 16, label: 'Zhipu ChatGLM', color: 'violet', defaultBaseUrl: 'https://open.bigmodel.cn', protocol: 'zhipu',
    defaultModels: ['chatglm_pro', 'chatglm_std', 'chatglm_lite'], baseUrlRequired: false, ownedBy: 'zhipu',
  },
  { value: 8, label: 'Custom', color: 'pink', defaultBaseUrl: '', ...openAiReseller, baseUrlRequired: true, balanceUnit: 'usd', ownedBy: 'custom' },
  { value: 2, label: 'API2D', color: 'blue', defaultBaseUrl: 'https://oa.api2d.net', ...openAiReseller },
  { value: 5, label: 'OpenAI-SB', color: 'brown', defaultBaseUrl: 'https://api.openai-sb.com', ...openAiReseller, balanceUnit: 'cny_per_10000' },
  { value: 7, label: 'OhMyGPT', color: 'purple', defaultBaseUrl: 'https://api.ohmygpt.com', ...openAiReseller },
  { value: 10, label: 'AI Proxy', color: 'purple', defaultBaseUrl: 'https://api.aiproxy.io', ...openAiReseller, balanceUnit: 'points' },
  { value: 4, label: 'CloseAI', color: 'teal', defaultBaseUrl: 'https://api.closeai-proxy.xyz', ...openAiReseller, balanceUnit: 'cny' },
  { value: 6, label: 'OpenAI Max', color: 'violet', defaultBaseUrl: 'https://api.openaimax.com', ...openAiReseller },
  { value: 9, label: 'AI.LS', color: 'yellow', defaultBaseUrl: 'https://api.caipacity.com', ...openAiReseller },
  { value: 12, label: 'API2GPT', color: 'blue', defaultBaseUrl: 'https://api.api2gpt.com', ...openAiReseller, balanceUnit: 'cny' },
  { value: 13, label: 'AIGC2D', color: 'purple', defaultBaseUrl: 'https://api.aigc2d.com', ...openAiReseller, balanceUnit: 'points' },
];

const CHANNEL_TYPES_BY_VALUE = new Map(CHANNEL_TYPES.map((type) => [type.value, type]));

/** The row for a stored type number; undefined for a number no row has. */
export function findChannelType(value: number): ChannelType | undefined {
  return CHANNEL_TYPES_BY_VALUE.get(value);
}

/** The types whose vendor reports a balance. */
export const BALANCE_CHANNEL_TYPES: readonly number[] = CHANNEL_TYPES.filter((type) => type.balanceUnit).map((type) => type.value);

/** `owned_by` for a model served by a channel of this type; `custom` for a number no row has. */
export function ownerOfChannelType(value: number): string {
  return findChannelType(value)?.ownedBy ?? 'custom';
}
