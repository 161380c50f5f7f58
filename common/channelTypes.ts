/**
 * The channel types. One row per type: the number stored in channels.type,
 * the console label and badge colour, the default upstream base URL and the
 * wire protocol the relay speaks to it. Many types share the OpenAI protocol.
 */
export type ChannelProtocol = 'openai' | 'azure' | 'anthropic' | 'palm' | 'baidu' | 'zhipu' | 'ali' | 'xunfei';

export interface ChannelType {
  value: number;
  label: string;
  color: string;
  defaultBaseUrl: string;
  protocol: ChannelProtocol;
}

export const CHANNEL_TYPES: readonly ChannelType[] = [
  { value: 1, label: 'OpenAI', color: 'green', defaultBaseUrl: 'https://api.openai.com', protocol: 'openai' },
  { value: 14, label: 'Anthropic Claude', color: 'black', defaultBaseUrl: 'https://api.anthropic.com', protocol: 'anthropic' },
  { value: 3, label: 'Azure OpenAI', color: 'olive', defaultBaseUrl: '', protocol: 'azure' },
  { value: 11, label: 'Google PaLM2', color: 'orange', defaultBaseUrl: '', protocol: 'palm' },
  { value: 15, label: 'Baidu ERNIE', color: 'blue', defaultBaseUrl: 'https://aip.baidubce.com', protocol: 'baidu' },
  { value: 17, label: 'Alibaba Qwen', color: 'orange', defaultBaseUrl: 'https://dashscope.aliyuncs.com', protocol: 'ali' },
  { value: 18, label: 'iFlytek Spark', color: 'blue', defaultBaseUrl: '', protocol: 'xunfei' },
  { value: 16, label: 'Zhipu ChatGLM', color: 'violet', defaultBaseUrl: 'https://open.bigmodel.cn', protocol: 'zhipu' },
  { value: 8, label: 'Custom', color: 'pink', defaultBaseUrl: '', protocol: 'openai' },
  { value: 2, label: 'API2D', color: 'blue', defaultBaseUrl: 'https://oa.api2d.net', protocol: 'openai' },
  { value: 5, label: 'OpenAI-SB', color: 'brown', defaultBaseUrl: 'https://api.openai-sb.com', protocol: 'openai' },
  { value: 7, label: 'OhMyGPT', color: 'purple', defaultBaseUrl: 'https://api.ohmygpt.com', protocol: 'openai' },
  { value: 10, label: 'AI Proxy', color: 'purple', defaultBaseUrl: 'https://api.aiproxy.io', protocol: 'openai' },
  { value: 4, label: 'CloseAI', color: 'teal', defaultBaseUrl: 'https://api.closeai-proxy.xyz', protocol: 'openai' },
  { value: 6, label: 'OpenAI Max', color: 'violet', defaultBaseUrl: 'https://api.openaimax.com', protocol: 'openai' },
  { value: 9, label: 'AI.LS', color: 'yellow', defaultBaseUrl: 'https://api.caipacity.com', protocol: 'openai' },
  { value: 12, label: 'API2GPT', color: 'blue', defaultBaseUrl: 'https://api.api2gpt.com', protocol: 'openai' },
  { value: 13, label: 'AIGC2D', color: 'purple', defaultBaseUrl: 'https://api.aigc2d.com', protocol: 'openai' },
];

const CHANNEL_TYPES_BY_VALUE = new Map(CHANNEL_TYPES.map((type) => [type.value, type]));

export function findChannelType(value: number): ChannelType | undefined {
  return CHANNEL_TYPES_BY_VALUE.get(value);
}
