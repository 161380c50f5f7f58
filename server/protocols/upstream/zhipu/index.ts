// Zhipu BigModel (智谱, GLM). Two wire protocols behind one channel type:
// - v4 (the default: channel `other` empty or `v4`): OpenAI-shaped at
//   /api/paas/v4/chat/completions and /api/paas/v4/embeddings, the API key as a
//   Bearer token. https://open.bigmodel.cn/dev/api (now at docs.bigmodel.cn)
// - v3 (`other` = `v3`): the older per-model endpoints
//   /api/paas/v3/model-api/<model>/invoke and /sse-invoke, authorised by an
//   HS256 JWT made from the `<id>.<secret>` key, with its own answer envelope
//   `{code, msg, success, data}` and an SSE stream of raw-text `add` events
//   ended by a `finish` event carrying a `meta:` line.
// Error codes: https://docs.bigmodel.cn/cn/api/api-code
//
// The protocol (v4 or v3) is read from `call.channel` (the relay sets it);
// without one, the model name decides, and decoding also recognises either
// protocol by the shape of what came back.
import { createHmac } from 'node:crypto';
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatChunkChoice,
  ChatChunkToolCall,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatStreamDecoder,
  ChatToolCall,
  EmbeddingRequest,
  EmbeddingResponse,
  FinishReason,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../../types';
import { contentText, count, embeddingsInOrder, LineSplitter, openAiUsage, parseJson, trimmedBaseUrl, upstreamFailure } from '../../shared';

const DEFAULT_BASE_URL = 'https://open.bigmodel.cn';
/** How long a v3 JWT is valid; it is made afresh for every call. */
const JWT_LIFETIME_SECONDS = 3600;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');

// ---- which protocol ----


/** The channel of a call: `call.channel` when the relay passes it, else the one target() saw for this call. */
export function channelOf(call: AdaptorCall): ChannelConfig | undefined {
  return call.channel;
}

function usesV3(channel: ChannelConfig | undefined, call: AdaptorCall): boolean {
  if (channel) return channel.other.trim().toLowerCase() === 'v3';
  // no channel known: the v3 models were the chatglm_* / characterglm family
  return /^(chatglm_|characterglm)/i.test(call.model);
}

function baseUrl(channel: ChannelConfig): string {
  // a base URL stored with the API prefix (as for an OpenAI-compatible row) still works
  return trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL).replace(/\/api\/paas\/v[34]$/, '');
}

/** Zhipu's v3 API JWT: HS256 over the key's secret, `sign_type: SIGN`, times in milliseconds. */
export function zhipuJwt(key: string, now: number): string | undefined {
  const parts = key.trim().split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  const [id, secret] = parts;
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = encode({ alg: 'HS256', typ: 'JWT', sign_type: 'SIGN' });
  const claims = encode({ api_key: id, exp: (now + JWT_LIFETIME_SECONDS) * 1000, timestamp: now * 1000 });
  const signature = createHmac('sha256', secret).update(`${head}.${claims}`).digest('base64url');
  return `${head}.${claims}.${signature}`;
}

// ---- failures ----

interface CodeMeaning {
  status: number;
  deadKey?: boolean;
  retryable?: boolean;
  type?: string;
}

/** Zhipu's business codes (https://docs.bigmodel.cn/cn/api/api-code), by what they mean for routing. */
function meaningOf(code: number): CodeMeaning | undefined {
  // the key itself is refused, or the account behind it is inactive, missing, locked or in arrears
  if ([1000, 1002, 1004].includes(code)) return { status: 401, deadKey: true, type: 'authentication_error' };
  if ([1110, 1111, 1112, 1121].includes(code)) return { status: 403, deadKey: true, type: 'account_error' };
  if (code === 1113 || code === 1309) return { status: 429, deadKey: true, type: 'insufficient_quota' };
  // a missing header or an expired JWT is the sender's doing, not the key's
  if (code === 1001 || code === 1003) return { status: 401, retryable: true, type: 'authentication_error' };
  if (code === 1301) return { status: 400, retryable: false, type: 'content_filter' };
  // concurrency, frequency, daily and plan limits, an overloaded model: another channel may answer
  if ([1302, 1303, 1304, 1305, 1308, 1310, 1312, 1313].includes(code)) return { status: 429, retryable: true, type: 'rate_limit_error' };
  if (code === 1211 || (code >= 1220 && code <= 1222) || code === 1311) return { status: 404, retryable: true, type: 'model_error' };
  if ((code >= 1210 && code <= 1215) || code === 1261 || code === 1231) return { status: 400, retryable: false, type: 'invalid_request_error' };
  if (code === 500 || code === 1100 || code === 1120 || code === 1200 || code === 1230 || code === 1234) return { status: 500, retryable: true, type: 'server_error' };
  return undefined;
}

/** A failure from Zhipu's code and message; `status` is the HTTP status (200 for an error inside a 2xx). */
function zhipuFailure(status: number, code: unknown, message: string): UpstreamFailure {
  const number = Number(code);
  const meaning = Number.isInteger(number) ? meaningOf(number) : undefined;
  const httpStatus = status >= 400 ? status : (meaning?.status ?? 500);
  return upstreamFailure(httpStatus, message, {
    type: meaning?.type ?? 'zhipu_error',
    code: code === undefined || code === null || code === '' ? null : (code as string | number),
    deadKey: meaning?.deadKey ?? false,
    retryable: meaning?.retryable,
  });
}

/** The failure an answer body describes, or undefined when it describes none. */
function failureIn(status: number, body: unknown): UpstreamFailure | undefined {
  if (!isObject(body)) return undefined;
  if (isObject(body.error)) return zhipuFailure(status, body.error.code, text(body.error.message));
  // v3's envelope: success false with a code and msg
  if (body.success === false) return zhipuFailure(status, body.code, text(body.msg) || text(body.message));
  return undefined;
}

function classify(status: number, bodyText: string): UpstreamFailure {
  const found = failureIn(status, parseJson(bodyText));
  if (found) return found;
  return upstreamFailure(status, bodyText.trim().slice(0, 500) || `Zhipu answered HTTP ${status}`, { type: 'zhipu_error' });
}

// ---- v4 (OpenAI-shaped) answers ----

function finishReason(value: unknown): FinishReason | null | 'error' {
  switch (value) {
    case null:
    case undefined:
    case '':
      return null;
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
    case 'function_call':
      return value;
    case 'sensitive':
      return 'content_filter';
    case 'model_context_window_exceeded':
      return 'length';
    case 'network_error':
      return 'error';
    default:
      return 'stop';
  }
}

function usageOf(value: unknown): Usage | undefined {
  if (!isObject(value)) return undefined;
  const details = isObject(value.prompt_tokens_details) ? value.prompt_tokens_details : {};
  const completionDetails = isObject(value.completion_tokens_details) ? value.completion_tokens_details : {};
  const usage: Usage = {
    promptTokens: count(value.prompt_tokens),
    completionTokens: count(value.completion_tokens),
    cachedPromptTokens: count(details.cached_tokens),
  };
  const reasoning = count(completionDetails.reasoning_tokens);
  if (reasoning) usage.reasoningTokens = reasoning;
  return usage;
}

function toolCalls(value: unknown, call: AdaptorCall, counter: { next: number }): ChatToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((item) => {
    const fn = isObject(item.function) ? item.function : {};
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    return { id: text(item.id) || `call_${call.responseId}_${counter.next++}`, type: 'function', function: { name: text(fn.name), arguments: args } };
  });
}

function decodeV4(body: Json, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const usage = usageOf(body.usage) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
  const counter = { next: 0 };
  const choices: ChatResponse['choices'] = [];
  const list = Array.isArray(body.choices) ? body.choices.filter(isObject) : [];
  for (const [position, choice] of list.entries()) {
    const reason = finishReason(choice.finish_reason);
    if (reason === 'error') return upstreamFailure(502, 'Zhipu reported a network error while generating', { type: 'zhipu_error', code: 'network_error' });
    const message = isObject(choice.message) ? choice.message : {};
    const calls = toolCalls(message.tool_calls, call, counter);
    const out: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: typeof message.content === 'string' ? message.content : calls.length ? null : '' };
    if (calls.length) out.tool_calls = calls;
    if (typeof message.reasoning_content === 'string' && message.reasoning_content) out.reasoning_content = message.reasoning_content;
    choices.push({ index: position, message: out, finish_reason: reason ?? (calls.length ? 'tool_calls' : 'stop') });
  }
  if (choices.length === 0) return upstreamFailure(502, 'Zhipu answered without choices', { type: 'zhipu_error' });
  return {
    id: text(body.id) || text(body.request_id) || call.responseId,
    object: 'chat.completion',
    created: count(body.created) || call.now,
    model: text(body.model) || call.model,
    choices,
    usage: openAiUsage(usage),
  };
}

// ---- v3 answers ----

/**
 * v3 returns the answer JSON-quoted (`"\"Hello\\nworld\""`): undo that when,
 * and only when, the whole content is one quoted JSON string.
 */
export function unquoteV3(content: string): string {
  if (content.length >= 2 && content.startsWith('"') && content.endsWith('"')) {
    const parsed = parseJson(content);
    if (typeof parsed === 'string') return parsed;
  }
  return content;
}

function decodeV3(body: Json, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const data = isObject(body.data) ? body.data : {};
  const list = Array.isArray(data.choices) ? data.choices.filter(isObject) : [];
  if (list.length === 0) return upstreamFailure(502, text(body.msg) || 'Zhipu answered without choices', { type: 'zhipu_error', code: text(body.code) || null });
  const usage = usageOf(data.usage) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
  return {
    id: text(data.task_id) || text(data.request_id) || call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: call.model,
    choices: list.map((choice, index) => ({ index, message: { role: 'assistant', content: unquoteV3(text(choice.content)) }, finish_reason: 'stop' })),
    usage: openAiUsage(usage),
  };
}

// ---- streams ----

interface StreamEvent {
  event: string;
  id: string;
  /** The data lines, verbatim after `data:` (v3 sends raw text there, no space after the colon). */
  data: string[];
  meta: string;
}

/**
 * Line framing for both of Zhipu's streams. shared.SseParser drops v3's
 * `meta:` line (the usage) and strips the space after `data:`, which in v3
 * belongs to the text, so the fields are read here.
 */
class ZhipuEventReader {
  private readonly lines = new LineSplitter();
  private current: StreamEvent = { event: '', id: '', data: [], meta: '' };
  /** Lines that were no SSE field (a JSON error body sent instead of a stream). */
  stray = '';

  push(bytes: Buffer | string): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (const line of this.lines.push(bytes)) this.line(line, events);
    return events;
  }

  end(): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (const line of this.lines.end()) this.line(line, events);
    this.line('', events);
    return events;
  }

  private line(line: string, events: StreamEvent[]): void {
    if (line === '') {
      const event = this.current;
      if (event.data.length > 0 || event.meta || event.event) events.push(event);
      this.current = { event: '', id: '', data: [], meta: '' };
      return;
    }
    const match = /^(event|id|data|meta|retry):/.exec(line);
    if (!match) {
      if (!line.startsWith(':')) this.stray += line;
      return;
    }
    const value = line.slice(match[0].length);
    if (match[1] === 'data') this.current.data.push(value);
    else if (match[1] === 'event') this.current.event = value.trim();
    else if (match[1] === 'id') this.current.id = value.trim();
    else if (match[1] === 'meta') this.current.meta = value;
  }
}

class ZhipuStreamDecoder implements ChatStreamDecoder {
  private readonly reader = new ZhipuEventReader();
  private id = '';
  private model = '';
  private created = 0;
  private reported: Usage | undefined;
  private failed: UpstreamFailure | undefined;
  private finished = false;
  private sawEvent = false;
  private readonly started = new Set<number>();
  private readonly closedChoices = new Set<number>();
  private readonly toolIds = new Map<string, string>();
  private toolCounter = 0;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    return this.handle(this.reader.push(data));
  }

  end(): ChatChunk[] {
    const chunks = this.handle(this.reader.end());
    if (!this.sawEvent && !this.failed && this.reader.stray.trim()) {
      // not a stream at all: Zhipu answered the stream request with a JSON error
      this.failed = failureIn(200, parseJson(this.reader.stray.trim())) ?? upstreamFailure(502, this.reader.stray.trim().slice(0, 500), { type: 'zhipu_error' });
    }
    return chunks;
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

  private chunk(choices: ChatChunkChoice[]): ChatChunk {
    return { id: this.id || this.call.responseId, object: 'chat.completion.chunk', created: this.created || this.call.now, model: this.model || this.call.model, choices };
  }

  private handle(events: StreamEvent[]): ChatChunk[] {
    const chunks: ChatChunk[] = [];
    for (const event of events) {
      if (this.failed || this.finished) break;
      this.sawEvent = true;
      switch (event.event) {
        case 'add':
        case 'finish':
        case 'error':
        case 'interrupted':
          this.v3(event, chunks);
          break;
        default:
          this.v4(event, chunks);
      }
    }
    return chunks;
  }

  private v3(event: StreamEvent, chunks: ChatChunk[]): void {
    if (!this.id && event.id) this.id = event.id;
    const content = event.data.join('\n');
    if (event.event === 'error' || event.event === 'interrupted') {
      const filtered = event.event === 'interrupted';
      this.failed = upstreamFailure(filtered ? 400 : 500, content || `Zhipu stream ${event.event}`, { type: filtered ? 'content_filter' : 'zhipu_error', code: event.event, retryable: !filtered });
      return;
    }
    if (content) chunks.push(this.chunk([{ index: 0, delta: this.opening(0, { content }), finish_reason: null }]));
    if (event.event === 'finish') {
      const meta = parseJson(event.meta);
      if (isObject(meta)) {
        this.reported = usageOf(meta.usage);
        if (!this.id) this.id = text(meta.task_id) || text(meta.request_id);
      }
      const last = this.chunk([{ index: 0, delta: this.opening(0, {}), finish_reason: 'stop' }]);
      if (this.reported) last.usage = openAiUsage(this.reported);
      chunks.push(last);
      this.finished = true;
    }
  }

  private v4(event: StreamEvent, chunks: ChatChunk[]): void {
    const data = event.data.join('\n').trim();
    if (!data) return;
    if (data === '[DONE]') {
      this.finished = true;
      return;
    }
    const body = parseJson(data);
    if (!isObject(body)) return;
    const failure = failureIn(200, body);
    if (failure) {
      this.failed = failure;
      return;
    }
    if (!this.id) this.id = text(body.id) || text(body.request_id);
    if (!this.model) this.model = text(body.model);
    if (!this.created) this.created = count(body.created);
    const usage = usageOf(body.usage);
    if (usage) this.reported = usage;
    const choices: ChatChunkChoice[] = [];
    const list = Array.isArray(body.choices) ? body.choices.filter(isObject) : [];
    for (const [position, choice] of list.entries()) {
      const index = Number.isInteger(choice.index) ? (choice.index as number) : position;
      if (this.closedChoices.has(index)) continue;
      const reason = finishReason(choice.finish_reason);
      if (reason === 'error') {
        this.failed = upstreamFailure(502, 'Zhipu reported a network error while generating', { type: 'zhipu_error', code: 'network_error' });
        return;
      }
      const delta = isObject(choice.delta) ? choice.delta : {};
      const out: ChatChunkChoice['delta'] = {};
      if (typeof delta.content === 'string' && delta.content !== '') out.content = delta.content;
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') out.reasoning_content = delta.reasoning_content;
      const calls = this.chunkToolCalls(index, delta.tool_calls);
      if (calls.length) out.tool_calls = calls;
      const hasDelta = Object.keys(out).length > 0;
      if (!hasDelta && !reason) continue;
      if (reason) this.closedChoices.add(index);
      choices.push({ index, delta: this.opening(index, out), finish_reason: reason });
    }
    if (choices.length || usage) {
      const chunk = this.chunk(choices);
      if (usage) chunk.usage = openAiUsage(usage);
      chunks.push(chunk);
    }
  }

  /** The first delta of a choice says it is the assistant's. */
  private opening(index: number, delta: ChatChunkChoice['delta']): ChatChunkChoice['delta'] {
    if (this.started.has(index)) return delta;
    this.started.add(index);
    return { role: 'assistant', ...delta };
  }

  private chunkToolCalls(choice: number, value: unknown): ChatChunkToolCall[] {
    if (!Array.isArray(value)) return [];
    return value.filter(isObject).map((item, position) => {
      const index = Number.isInteger(item.index) ? (item.index as number) : position;
      const key = `${choice}:${index}`;
      const fn = isObject(item.function) ? item.function : {};
      const out: ChatChunkToolCall = { index };
      let id = this.toolIds.get(key);
      if (!id) {
        id = text(item.id) || `call_${this.call.responseId}_${this.toolCounter++}`;
        this.toolIds.set(key, id);
        out.id = id;
        out.type = 'function';
      }
      const fnOut: NonNullable<ChatChunkToolCall['function']> = {};
      if (typeof fn.name === 'string' && fn.name) fnOut.name = fn.name;
      if (fn.arguments !== undefined && fn.arguments !== null) fnOut.arguments = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments);
      if (Object.keys(fnOut).length) out.function = fnOut;
      return out;
    });
  }
}

// ---- requests ----

/** v3's prompt: the conversation as `{role, content}` turns; a system message stays a system turn. */
function v3Turn(message: ChatMessage): { role: string; content: string } {
  const role = message.role === 'assistant' || message.role === 'system' ? message.role : message.role === 'developer' ? 'system' : 'user';
  return { role, content: contentText(message.content) };
}

function encodeV3(request: ChatRequest): string {
  const body: Json = { prompt: request.messages.map(v3Turn) };
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  // increments, not the whole text so far, in the sse-invoke stream (ignored by invoke)
  body.incremental = true;
  return JSON.stringify(body);
}

export const zhipuAdaptor: UpstreamAdaptor = {
  protocol: 'zhipu',
  docs: 'https://open.bigmodel.cn/dev/api',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',

  target(channel, call) {
    const base = baseUrl(channel);
    const json = { 'Content-Type': 'application/json', Accept: call.stream ? 'text/event-stream' : 'application/json' };
    if (call.operation === 'embeddings') {
      return { url: `${base}/api/paas/v4/embeddings`, method: 'POST', headers: { ...json, Authorization: `Bearer ${channel.key.trim()}` } };
    }
    if (usesV3(channel, call)) {
      const token = zhipuJwt(channel.key, call.now);
      if (!token) return upstreamFailure(401, 'invalid Zhipu key: expected <id>.<secret>', { code: 'invalid_zhipu_key', type: 'authentication_error', deadKey: true });
      const method = call.stream ? 'sse-invoke' : 'invoke';
      return { url: `${base}/api/paas/v3/model-api/${encodeURIComponent(call.model)}/${method}`, method: 'POST', headers: { ...json, Authorization: token } };
    }
    return { url: `${base}/api/paas/v4/chat/completions`, method: 'POST', headers: { ...json, Authorization: `Bearer ${channel.key.trim()}` } };
  },

  encodeChat(request, call) {
    if (usesV3(channelOf(call), call)) return encodeV3(request);
    const body: ChatRequest = { ...request, model: call.model };
    // v4 knows max_tokens only: a limit sent as OpenAI's newer name must not be lost
    if (body.max_tokens === undefined && typeof body.max_completion_tokens === 'number') {
      body.max_tokens = body.max_completion_tokens;
      delete body.max_completion_tokens;
    }
    return JSON.stringify(body);
  },

  decodeChat(body, call) {
    const parsed = parseJson(body);
    if (!isObject(parsed)) return upstreamFailure(502, 'Zhipu answered with something other than JSON', { type: 'zhipu_error' });
    const failure = failureIn(200, parsed);
    if (failure) return failure;
    if ('success' in parsed || isObject(parsed.data)) return decodeV3(parsed, call);
    return decodeV4(parsed, call);
  },

  decodeChatStream(call) {
    return new ZhipuStreamDecoder(call);
  },

  encodeEmbeddings(request: EmbeddingRequest, call) {
    return JSON.stringify({ ...request, model: call.model });
  },

  decodeEmbeddings(body, call): EmbeddingResponse | UpstreamFailure {
    const parsed = parseJson(body);
    if (!isObject(parsed)) return upstreamFailure(502, 'Zhipu answered with something other than JSON', { type: 'zhipu_error' });
    const failure = failureIn(200, parsed);
    if (failure) return failure;
    const list = Array.isArray(parsed.data) ? parsed.data.filter(isObject) : [];
    const usage = isObject(parsed.usage) ? parsed.usage : {};
    const prompt = count(usage.prompt_tokens);
    return {
      object: 'list',
      data: embeddingsInOrder(
        list.map((item, position) => ({ index: Number.isInteger(item.index) ? (item.index as number) : position, embedding: Array.isArray(item.embedding) ? (item.embedding as number[]) : [] })),
      ),
      model: text(parsed.model) || call.model,
      usage: { prompt_tokens: prompt, total_tokens: count(usage.total_tokens) || prompt },
    };
  },

  failure: classify,
};
