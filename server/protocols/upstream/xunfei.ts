// iFlytek Spark (讯飞星火) over its WebSocket chat API: one signed GET upgrade,
// one JSON frame out, answer frames back until `header.status` is 2.
// https://www.xfyun.cn/doc/spark/Web.html (request, frames, error codes)
// Signing ("通用URL鉴权"): HMAC-SHA256 with the APISecret over
// `host: <host>\ndate: <RFC 1123 date>\nGET <path> HTTP/1.1`, carried in the
// query as base64 `authorization`, with `date` and `host`.
//
// Versions (channel `other`, or the client's `api-version` query), their URL
// paths and `parameter.chat.domain`, per the Web document:
//   v1.1      /v1.1/chat       lite          Spark Lite (the domain was `general` before 2024)
//   v2.1      /v2.1/chat       generalv2     Spark V2.0, retired upstream, kept for old channels
//   v3.1      /v3.1/chat       generalv3     Spark Pro
//   v3.5      /v3.5/chat       generalv3.5   Spark Max
//   v4.0      /v4.0/chat       4.0Ultra      Spark 4.0 Ultra
//   pro-128k  /chat/pro-128k   pro-128k      Spark Pro-128K
//   max-32k   /chat/max-32k    max-32k       Spark Max-32K
// Product names and domains are accepted for the version too (`max`,
// `generalv3.5`, `spark-max`...); with neither set, the model name decides.
//
// The frame needs the APPID and the domain: encodeChat reads them from
// `call.channel`, which the relay sets.
import { createHmac } from 'node:crypto';
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatChunkChoice,
  ChatMessage,
  ChatRequest,
  ChatStreamDecoder,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../types';
import { assembleChatResponse, contentText, count, openAiUsage, parseJson, trimmedBaseUrl, upstreamFailure } from '../shared';

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
  '1.1': 'v1.1', lite: 'v1.1', general: 'v1.1', 'spark-lite': 'v1.1',
  '2.1': 'v2.1', generalv2: 'v2.1', v2: 'v2.1',
  '3.1': 'v3.1', pro: 'v3.1', generalv3: 'v3.1', 'spark-pro': 'v3.1', v3: 'v3.1',
  '3.5': 'v3.5', max: 'v3.5', 'generalv3.5': 'v3.5', 'spark-max': 'v3.5',
  '4.0': 'v4.0', v4: 'v4.0', ultra: 'v4.0', '4.0ultra': 'v4.0', 'spark-ultra': 'v4.0', 'spark-4.0-ultra': 'v4.0',
  'spark-pro-128k': 'pro-128k', 'spark-max-32k': 'max-32k',
};

function findVersion(value: string | undefined): SparkVersion | undefined {
  const wanted = (value ?? '').trim().toLowerCase().replace(/^sparkdesk-?/, '');
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

function parseKey(key: string): SparkKey | undefined {
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
  const authorization = Buffer.from(`api_key="${apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`).toString('base64');
  const query = new URLSearchParams({ authorization, date, host: parsed.host });
  return `${parsed.origin}${parsed.pathname}?${query.toString()}`;
}

function baseUrl(channel: ChannelConfig): string {
  const base = trimmedBaseUrl((channel.baseUrl || DEFAULT_BASE_URL).trim());
  return base.replace(/^http:\/\//i, 'ws://').replace(/^https:\/\//i, 'wss://');
}

// ---- which channel ----


function channelOf(call: AdaptorCall): ChannelConfig | undefined {
  return call.channel;
}

// ---- failures ----

interface CodeMeaning {
  status: number;
  type: string;
  deadKey?: boolean;
  retryable?: boolean;
}

/** Spark's frame codes (Web document, 错误码), by what they mean for routing. */
function meaningOf(code: number): CodeMeaning {
  switch (code) {
    case 10013: // input refused by moderation
    case 10014: // output refused by moderation
    case 10019: // the conversation tends to break the rules
      return { status: 400, type: 'content_filter', retryable: false };
    case 10003: // malformed message
    case 10004: // schema error
    case 10005: // bad parameter value
    case 10163: // engine parameter schema check failed
    case 10907: // history + question exceed the token limit
      return { status: 400, type: 'invalid_request_error', retryable: false };
    case 10015: // appid blacklisted
    case 10016: // appid not licensed: feature or version not opened, tokens used up
    case 11200: // no licence for the feature, or the purchased volume is used up
      return { status: 403, type: 'authentication_error', deadKey: true };
    case 10006: // the same user connected twice
    case 10007: // still answering this user's previous question
    case 10110: // service busy
    case 11201: // daily quota exceeded (resets tomorrow)
    case 11202: // per-second rate exceeded
    case 11203: // concurrency exceeded
      return { status: 429, type: 'rate_limit_error', retryable: true };
    default:
      return { status: code >= 10000 && code < 11000 ? 502 : 500, type: 'spark_error', retryable: true };
  }
}

function frameFailure(status: number, code: number, message: string): UpstreamFailure {
  const meaning = meaningOf(code);
  return upstreamFailure(status >= 400 ? status : meaning.status, message || `Spark error ${code}`, {
    type: meaning.type,
    code,
    deadKey: meaning.deadKey ?? false,
    retryable: meaning.retryable,
  });
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * A refusal: a handshake answered with an HTTP status and `{message}` (401: the
 * signature or key did not verify; 403: the date is off, or the IP is not
 * allowed), or an error frame `{header: {code, message}}`.
 */
function classify(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  if (isObject(parsed) && isObject(parsed.header) && count(parsed.header.code) > 0) {
    return frameFailure(status, count(parsed.header.code), text(parsed.header.message));
  }
  const message = (isObject(parsed) ? text(parsed.message) : '') || body.trim().slice(0, 500) || `Spark answered HTTP ${status}`;
  if (status === 401) return upstreamFailure(401, message, { type: 'authentication_error', deadKey: true });
  if (status === 403) return upstreamFailure(403, message, { type: 'authentication_error', retryable: true });
  return upstreamFailure(status, message, { type: 'spark_error' });
}

// ---- the request frame ----

function sparkTurn(message: ChatMessage): { role: string; content: string } {
  const role = message.role === 'system' || message.role === 'developer' ? 'system' : message.role === 'assistant' ? 'assistant' : 'user';
  let content = contentText(message.content);
  if (role === 'assistant' && !content && message.tool_calls?.length) {
    // Spark's text has no slot for a past call: say what was called
    content = message.tool_calls.map((call) => `${call.function.name}(${call.function.arguments})`).join('\n');
  }
  return { role, content };
}

function encodeFrame(request: ChatRequest, call: AdaptorCall): string {
  const channel = channelOf(call);
  const key = channel ? parseKey(channel.key) : undefined;
  const header: Json = { app_id: key?.appId ?? '' };
  if (typeof request.user === 'string' && request.user) header.uid = request.user.slice(0, 32);
  const chat: Json = { domain: sparkVersion(channel, call).domain };
  if (typeof request.temperature === 'number') chat.temperature = request.temperature;
  // top_k is the client's top_k, never n (§16.3.9)
  if (typeof request.top_k === 'number') chat.top_k = request.top_k;
  const maxTokens = request.max_tokens ?? request.max_completion_tokens;
  if (typeof maxTokens === 'number') chat.max_tokens = maxTokens;
  const payload: Json = { message: { text: request.messages.map(sparkTurn) } };
  const tools = (request.tools ?? []).filter((tool) => tool.type === 'function' && tool.function);
  if (tools.length > 0 && request.tool_choice !== 'none') {
    payload.functions = { text: tools.map((tool) => ({ name: tool.function.name, description: tool.function.description ?? '', parameters: tool.function.parameters ?? { type: 'object', properties: {} } })) };
  }
  return JSON.stringify({ header, parameter: { chat }, payload });
}

// ---- answer frames ----

class SparkStreamDecoder implements ChatStreamDecoder {
  private id = '';
  private reported: Usage | undefined;
  private failed: UpstreamFailure | undefined;
  private finished = false;
  private started = false;
  private calls = 0;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    if (this.finished || this.failed) return [];
    const frame = parseJson(typeof data === 'string' ? data : data.toString('utf8'));
    if (!isObject(frame) || !isObject(frame.header)) {
      this.failed = upstreamFailure(502, 'Spark sent a frame that is not its JSON', { type: 'spark_error' });
      return [];
    }
    const header = frame.header;
    if (!this.id && text(header.sid)) this.id = `chatcmpl-${text(header.sid)}`;
    const code = Number(header.code ?? 0);
    if (code !== 0) {
      this.failed = frameFailure(200, code, text(header.message));
      return [];
    }
    const payload = isObject(frame.payload) ? frame.payload : {};
    const choices = isObject(payload.choices) ? payload.choices : {};
    const last = header.status === 2 || choices.status === 2;
    const usage = isObject(payload.usage) && isObject(payload.usage.text) ? payload.usage.text : undefined;
    // Spark reports usage once, in the last frame; take it as it is, never summed
    if (usage) this.reported = { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens), cachedPromptTokens: 0 };

    const delta: ChatChunkChoice['delta'] = {};
    let content = '';
    for (const item of Array.isArray(choices.text) ? choices.text.filter(isObject) : []) {
      content += text(item.content);
      if (isObject(item.function_call)) {
        const fn = item.function_call;
        const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
        (delta.tool_calls ??= []).push({ index: this.calls, id: `call_${this.call.responseId}_${this.calls}`, type: 'function', function: { name: text(fn.name), arguments: args } });
        this.calls += 1;
      }
    }
    if (content) delta.content = content;
    if (last) this.finished = true;
    if (!delta.content && !delta.tool_calls && !last) return [];
    if (!this.started) {
      delta.role = 'assistant';
      this.started = true;
    }
    const chunk: ChatChunk = {
      id: this.id || this.call.responseId,
      object: 'chat.completion.chunk',
      created: this.call.now,
      model: this.call.model,
      choices: [{ index: 0, delta, finish_reason: last ? (this.calls > 0 ? 'tool_calls' : 'stop') : null }],
    };
    if (last && this.reported) chunk.usage = openAiUsage(this.reported);
    return [chunk];
  }

  end(): ChatChunk[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.reported;
  }

  failure(): UpstreamFailure | undefined {
    return this.failed;
  }

  done(): boolean {
    return this.finished;
  }
}

export const xunfeiAdaptor: UpstreamAdaptor = {
  protocol: 'xunfei',
  docs: 'https://www.xfyun.cn/doc/spark/Web.html',
  operations: new Set(['chat']),
  transport: 'websocket',

  target(channel, call) {
    const key = parseKey(channel.key);
    if (!key) return upstreamFailure(401, 'invalid Spark key: expected APPID|APISecret|APIKey', { code: 'invalid_auth', type: 'authentication_error', deadKey: true });
    const url = signSparkUrl(`${baseUrl(channel)}${sparkVersion(channel, call).path}`, key.apiKey, key.apiSecret, call.now);
    return { url, method: 'GET', headers: {} };
  },

  encodeChat: encodeFrame,

  /** A whole answer is the frames of one call joined by newlines (the relay collects the stream). */
  decodeChat(body, call) {
    const decoder = new SparkStreamDecoder(call);
    const chunks: ChatChunk[] = [];
    for (const frame of body.split('\n')) {
      if (!frame.trim()) continue;
      chunks.push(...decoder.push(frame));
      const failure = decoder.failure();
      if (failure) return failure;
    }
    if (!decoder.done()) return upstreamFailure(502, 'Spark closed the answer before its last frame', { type: 'spark_error' });
    return assembleChatResponse(chunks, call, decoder.usage() ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 });
  },

  decodeChatStream(call) {
    return new SparkStreamDecoder(call);
  },

  failure: classify,
};
