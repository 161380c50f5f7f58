// Which Spark version a call goes to, its signed URL, and the request frame.
import { createHmac } from 'node:crypto';
import type { AdaptorCall, ChannelConfig, ChatMessage, ChatRequest } from '../../types';
import { contentText, trimmedBaseUrl } from '../../shared';
import type { Json } from './json';

const DEFAULT_BASE_URL = 'wss://spark-api.xf-yun.com';

export interface SparkVersion {
  version: string;
  path: string;
  domain: string;
}

export const SPARK_VERSIONS: readonly SparkVersion[] = [
  { version: 'v1.1', path: '/v1.1/chat', domain: 'lite' },
  { version: 'v2.1', path: '/v2.1/chat', domain: 'generalv2' },
  { version: 'v3.1', path: '/v3.1/chat', domain: 'generalv3' },
  { version: 'v3.5', path: '/v3.5/chat', domain: 'generalv3.5' },
  { version: 'v4.0', path: '/v4.0/chat', domain: '4.0Ultra' },
  { version: 'pro-128k', path: '/chat/pro-128k', domain: 'pro-128k' },
  { version: 'max-32k', path: '/chat/max-32k', domain: 'max-32k' },
];

/** Other spellings of each version: product names, domains, model names in use. */
const ALIASES: Record<string, string> = {
  '1.1': 'v1.1',
  lite: 'v1.1',
  general: 'v1.1',
  'spark-lite': 'v1.1',
  '2.1': 'v2.1',
  generalv2: 'v2.1',
  v2: 'v2.1',
  '3.1': 'v3.1',
  pro: 'v3.1',
  generalv3: 'v3.1',
  'spark-pro': 'v3.1',
  v3: 'v3.1',
  '3.5': 'v3.5',
  max: 'v3.5',
  'generalv3.5': 'v3.5',
  'spark-max': 'v3.5',
  '4.0': 'v4.0',
  v4: 'v4.0',
  ultra: 'v4.0',
  '4.0ultra': 'v4.0',
  'spark-ultra': 'v4.0',
  'spark-4.0-ultra': 'v4.0',
  'spark-pro-128k': 'pro-128k',
  'spark-max-32k': 'max-32k',
};

function findVersion(value: string | undefined): SparkVersion | undefined {
  const wanted = (value ?? '')
    .trim()
    .toLowerCase()
    .replace(/^sparkdesk-?/, '');
  if (!wanted) return undefined;
  const name = ALIASES[wanted] ?? wanted;
  return SPARK_VERSIONS.find((row) => row.version === name);
}

/** The version a call goes to: the client's api-version, else the channel's `other`, else the model name, else Lite. */
export function sparkVersion(channel: ChannelConfig | undefined, call: AdaptorCall): SparkVersion {
  return findVersion(call.query?.['api-version']) ?? findVersion(channel?.other) ?? findVersion(call.model) ?? SPARK_VERSIONS[0];
}

interface SparkKey {
  appId: string;
  apiSecret: string;
  apiKey: string;
}

export function parseKey(key: string): SparkKey | undefined {
  const parts = key.trim().split('|');
  if (parts.length !== 3 || parts.some((part) => !part)) return undefined;
  return { appId: parts[0], apiSecret: parts[1], apiKey: parts[2] };
}

/**
 * The signed URL: `url` is the WebSocket URL without query, `now` unix
 * seconds. Exported for the emulator and the worked example in the tests.
 */
export function signSparkUrl(url: string, apiKey: string, apiSecret: string, now: number): string {
  const parsed = new URL(url);
  const date = new Date(now * 1000).toUTCString(); // RFC 1123, "GMT"
  const origin = `host: ${parsed.host}\ndate: ${date}\nGET ${parsed.pathname} HTTP/1.1`;
  const signature = createHmac('sha256', apiSecret).update(origin).digest('base64');
  const authorization = Buffer.from(
    `api_key="${apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`,
  ).toString('base64');
  const query = new URLSearchParams({ authorization, date, host: parsed.host });
  return `${parsed.origin}${parsed.pathname}?${query.toString()}`;
}

export function baseUrl(channel: ChannelConfig): string {
  const base = trimmedBaseUrl((channel.baseUrl || DEFAULT_BASE_URL).trim());
  return base.replace(/^http:\/\//i, 'ws://').replace(/^https:\/\//i, 'wss://');
}

// ---- which channel ----

function channelOf(call: AdaptorCall): ChannelConfig | undefined {
  return call.channel;
}

// ---- the request frame ----

/** A chat role as Spark has it: developer is system; tool results and the like are the user's. */
function sparkRole(role: ChatMessage['role']): 'system' | 'assistant' | 'user' {
  if (role === 'system' || role === 'developer') return 'system';
  return role === 'assistant' ? 'assistant' : 'user';
}

function sparkTurn(message: ChatMessage): { role: string; content: string } {
  const role = sparkRole(message.role);
  let content = contentText(message.content);
  if (role === 'assistant' && !content && message.tool_calls?.length) {
    // Spark's text has no slot for a past call: say what was called
    content = message.tool_calls.map((call) => `${call.function.name}(${call.function.arguments})`).join('\n');
  }
  return { role, content };
}

export function encodeFrame(request: ChatRequest, call: AdaptorCall): string {
  const channel = channelOf(call);
  const key = channel ? parseKey(channel.key) : undefined;
  const header: Json = { app_id: key?.appId ?? '' };
  if (typeof request.user === 'string' && request.user) header.uid = request.user.slice(0, 32);
  const chat: Json = { domain: sparkVersion(channel, call).domain };
  if (typeof request.temperature === 'number') chat.temperature = request.temperature;
  // top_k is the client's top_k, never n (v0.5.3 sent n as top_k)
  if (typeof request.top_k === 'number') chat.top_k = request.top_k;
  const maxTokens = request.max_tokens ?? request.max_completion_tokens;
  if (typeof maxTokens === 'number') chat.max_tokens = maxTokens;
  const payload: Json = { message: { text: request.messages.map(sparkTurn) } };
  const tools = (request.tools ?? []).filter((tool) => tool.type === 'function' && tool.function);
  if (tools.length > 0 && request.tool_choice !== 'none') {
    payload.functions = {
      text: tools.map((tool) => ({
        name: tool.function.name,
        description: tool.function.description ?? '',
        parameters: tool.function.parameters ?? { type: 'object', properties: {} },
      })),
    };
  }
  return JSON.stringify({ header, parameter: { chat }, payload });
}
