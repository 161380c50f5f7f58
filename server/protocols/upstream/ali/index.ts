// Alibaba DashScope (Qwen), the native API: text generation in the messages
// format, streamed with incremental output, and text embeddings.
// API reference: https://help.aliyun.com/zh/model-studio/developer-reference/use-qwen-by-calling-api
// (embeddings: https://help.aliyun.com/zh/model-studio/developer-reference/text-embedding-synchronous-api,
// error codes: https://help.aliyun.com/zh/model-studio/developer-reference/error-code)
//
// Vision models (qwen-vl-*, qvq-*) take the same messages with content as a
// list of {image}/{text} items at the multimodal-generation path; the model
// name decides, since encodeChat sees the model but not the channel. For the
// same reason the OpenAI-compatible mode (/compatible-mode/v1) is not chosen
// from the channel's `other` here: a channel that wants it can be an
// OpenAI-type channel with that base URL.
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatChunkChoice,
  ChatChunkToolCall,
  ChatContentPart,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatStreamDecoder,
  ChatToolCall,
  EmbeddingRequest,
  EmbeddingResponse,
  FinishReason,
  HttpTarget,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../../types';
import { chunkOf, contentText, count, embeddingsInOrder, openAiUsage, parseJson, SseOrBareBody, trimmedBaseUrl, upstreamFailure } from '../../shared';

const DEFAULT_BASE_URL = 'https://dashscope.aliyuncs.com';
const TEXT_PATH = '/api/v1/services/aigc/text-generation/generation';
const MULTIMODAL_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
const EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding';

const baseOf = (channel: ChannelConfig): string => trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL);

/** Models served at the multimodal path (their messages carry {image}/{text} lists). */
export const isMultimodalModel = (model: string): boolean => /(^|[-_])vl([-_.]|$)|^qvq/i.test(model);

// ---- errors ----

/** DashScope error codes whose words prove the key (or its account) cannot be used. */
const DEAD_KEY_CODES = new Set(['InvalidApiKey', 'Arrearage', 'AccessDenied.Unpurchased']);

function statusForCode(code: string, fallback: number): number {
  if (code === 'InvalidApiKey') return 401;
  if (code.startsWith('Throttling')) return 429;
  if (code === 'Arrearage') return 402;
  if (code.startsWith('AccessDenied') || code.startsWith('Model.AccessDenied')) return 403;
  if (code === 'ModelNotFound' || code === 'NotFound') return 404;
  if (code.startsWith('InternalError') || code === 'SystemError') return 500;
  if (code === 'ServiceUnavailable' || code === 'ModelUnavailable' || code === 'RequestTimeOut') return 503;
  return fallback >= 400 ? fallback : 400;
}

function classify(status: number, code: string, message: string): UpstreamFailure {
  const effective = statusForCode(code, status);
  const text = message || code || `DashScope answered HTTP ${effective}`;
  const details = { type: code || 'dashscope_error', code: code || null };
  if (DEAD_KEY_CODES.has(code)) return upstreamFailure(effective, text, { ...details, deadKey: true });
  // the request itself: bad parameters, inspected content, an over-long input fail on any channel
  const requestError = code === 'InvalidParameter' || code === 'DataInspectionFailed' || code.startsWith('BadRequest') || code === 'InvalidURL';
  // a model this key may not use, or one this account has not: another channel may well serve it
  const channelError = effective === 401 || effective === 403 || effective === 404 || effective === 429 || effective >= 500;
  return upstreamFailure(effective, text, { ...details, retryable: requestError ? false : channelError });
}

function errorOf(body: unknown, status: number): UpstreamFailure | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as { code?: unknown; message?: unknown };
  if (typeof record.code !== 'string' || !record.code) return undefined;
  return classify(status, record.code, typeof record.message === 'string' ? record.message : '');
}

function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  // DashScope's own `{code, message}`, or the `{error: {code, message}}` its gateway answers on some paths
  const nested = parsed && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
  const known = errorOf(parsed, status) ?? errorOf(nested, status);
  if (known) return known;
  const text = body.trim().slice(0, 500);
  return upstreamFailure(status, text ? `DashScope answered HTTP ${status}: ${text}` : '', { type: 'dashscope_error' });
}

// ---- requests ----

function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget {
  const path = call.operation === 'embeddings' ? EMBEDDINGS_PATH : isMultimodalModel(call.model) ? MULTIMODAL_PATH : TEXT_PATH;
  const headers: Record<string, string> = { Authorization: `Bearer ${channel.key}`, 'Content-Type': 'application/json' };
  if (call.stream && call.operation === 'chat') {
    headers['X-DashScope-SSE'] = 'enable';
    headers.Accept = 'text/event-stream';
  } else {
    headers.Accept = 'application/json';
  }
  return { url: `${baseOf(channel)}${path}`, method: 'POST', headers };
}

/** A vision model's content: a list of {image} and {text} items. */
type MultimodalItem = { image: string } | { text: string };

function multimodalContent(content: ChatMessage['content']): MultimodalItem[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: ChatContentPart): MultimodalItem[] => {
    if (part.type === 'image_url' && part.image_url?.url) return [{ image: part.image_url.url }];
    if (typeof part.text === 'string') return [{ text: part.text }];
    return [];
  });
}

function encodeMessages(messages: readonly ChatMessage[], multimodal: boolean): Array<Record<string, unknown>> {
  return messages.map((message) => {
    const role = message.role === 'developer' ? 'system' : message.role === 'function' ? 'tool' : message.role;
    const out: Record<string, unknown> = { role, content: multimodal && role !== 'tool' ? multimodalContent(message.content) : contentText(message.content) };
    if (message.name) out.name = message.name;
    if (message.tool_call_id) out.tool_call_id = message.tool_call_id;
    if (message.tool_calls && message.tool_calls.length > 0) out.tool_calls = message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }));
    return out;
  });
}

function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const parameters: Record<string, unknown> = { result_format: 'message' };
  if (call.stream) parameters.incremental_output = true;
  if (typeof request.temperature === 'number') parameters.temperature = request.temperature;
  if (typeof request.top_p === 'number') parameters.top_p = request.top_p;
  if (typeof request.top_k === 'number') parameters.top_k = request.top_k;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') parameters.max_tokens = maxTokens;
  if (request.stop !== undefined && request.stop !== null) parameters.stop = request.stop;
  if (typeof request.seed === 'number') parameters.seed = request.seed;
  // DashScope has presence_penalty; it has no frequency penalty (repetition_penalty is multiplicative, 1.0 = none)
  if (typeof request.presence_penalty === 'number') parameters.presence_penalty = request.presence_penalty;
  if (typeof request.repetition_penalty === 'number') parameters.repetition_penalty = request.repetition_penalty;
  if (typeof request.enable_search === 'boolean') parameters.enable_search = request.enable_search;
  if (typeof request.enable_thinking === 'boolean') parameters.enable_thinking = request.enable_thinking;
  if (typeof request.n === 'number' && request.n > 1) parameters.n = request.n;
  if (request.response_format?.type === 'json_object') parameters.response_format = { type: 'json_object' };
  if (request.tools && request.tools.length > 0) {
    parameters.tools = request.tools;
    if (request.tool_choice !== undefined) parameters.tool_choice = request.tool_choice;
    if (typeof request.parallel_tool_calls === 'boolean') parameters.parallel_tool_calls = request.parallel_tool_calls;
  }
  return JSON.stringify({ model: call.model, input: { messages: encodeMessages(request.messages ?? [], isMultimodalModel(call.model)) }, parameters });
}

function encodeEmbeddings(request: EmbeddingRequest, call: AdaptorCall): string {
  const input = request.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input.filter((item): item is string => typeof item === 'string') : [];
  const parameters: Record<string, unknown> = { text_type: 'document' };
  if (typeof request.dimensions === 'number') parameters.dimension = request.dimensions;
  return JSON.stringify({ model: call.model, input: { texts }, parameters });
}

// ---- answers ----

interface AliToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface AliChoice {
  index?: number;
  finish_reason?: string | null;
  message?: { role?: string; content?: unknown; reasoning_content?: string; tool_calls?: AliToolCall[] };
}

interface AliAnswer {
  request_id?: string;
  output?: { choices?: AliChoice[]; text?: string; finish_reason?: string | null };
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    output_tokens_details?: { reasoning_tokens?: number };
  };
}

/** DashScope says "null" (a string) for a choice still going. */
function finishOf(reason: string | null | undefined): FinishReason | null {
  if (!reason || reason === 'null') return null;
  if (reason === 'length' || reason === 'tool_calls' || reason === 'content_filter' || reason === 'stop') return reason;
  return 'stop';
}

function usageOf(answer: AliAnswer): Usage | undefined {
  const usage = answer.usage;
  if (!usage || (usage.input_tokens === undefined && usage.output_tokens === undefined)) return undefined;
  const result: Usage = { promptTokens: count(usage.input_tokens), completionTokens: count(usage.output_tokens), cachedPromptTokens: count(usage.prompt_tokens_details?.cached_tokens) };
  const reasoning = count(usage.output_tokens_details?.reasoning_tokens);
  if (reasoning) result.reasoningTokens = reasoning;
  return result;
}

/** The choices of an answer, whichever result_format it came in. */
function choicesOf(answer: AliAnswer): AliChoice[] {
  if (Array.isArray(answer.output?.choices)) return answer.output.choices;
  if (typeof answer.output?.text === 'string') return [{ finish_reason: answer.output.finish_reason, message: { role: 'assistant', content: answer.output.text } }];
  return [];
}

const toolCallId = (call: AdaptorCall, position: number): string => `call_${call.responseId}_${position}`;

function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const parsed = parseJson(body);
  if (!parsed || typeof parsed !== 'object') return upstreamFailure(502, `DashScope answered something other than JSON: ${body.slice(0, 200)}`, { type: 'dashscope_error', retryable: true });
  const error = errorOf(parsed, 200);
  if (error && !(parsed as AliAnswer).output) return error;
  const answer = parsed as AliAnswer;
  const choices = choicesOf(answer);
  if (choices.length === 0) return upstreamFailure(502, 'DashScope answered without output', { type: 'dashscope_error', retryable: true });
  let toolPosition = 0;
  return {
    id: answer.request_id || call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: call.model,
    choices: choices.map((choice, position) => {
      const tools: ChatToolCall[] = (choice.message?.tool_calls ?? []).map((tool) => ({
        id: tool.id || toolCallId(call, toolPosition++),
        type: 'function',
        function: { name: tool.function?.name ?? '', arguments: tool.function?.arguments || '{}' },
      }));
      const text = contentText(choice.message?.content);
      const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: tools.length > 0 && !text ? null : text };
      if (tools.length > 0) message.tool_calls = tools;
      if (choice.message?.reasoning_content) message.reasoning_content = choice.message.reasoning_content;
      return { index: typeof choice.index === 'number' ? choice.index : position, message, finish_reason: finishOf(choice.finish_reason) ?? (tools.length > 0 ? 'tool_calls' : 'stop') };
    }),
    usage: openAiUsage(usageOf(answer) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 }),
  };
}

/**
 * DashScope's SSE: `event:result` events whose data is a whole answer holding
 * this step's increment (we always ask for incremental_output) and the
 * running usage; `event:error` carries `{code, message}`.
 */
function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseOrBareBody();
  let finished = false;
  let id = '';
  let usage: Usage | undefined;
  let failed: UpstreamFailure | undefined;
  const started = new Set<number>();
  const closed = new Set<number>();
  // per choice, per tool index: the id given out and whether the name was sent
  const tools = new Map<string, { named: boolean }>();
  let toolPosition = 0;

  const chunk = (choices: ChatChunkChoice[]): ChatChunk => ({ ...chunkOf(call, call.model, choices), id: id || call.responseId });

  function toolDeltas(choiceIndex: number, calls: AliToolCall[]): ChatChunkToolCall[] {
    return calls.map((tool, position) => {
      const index = typeof tool.index === 'number' ? tool.index : position;
      const key = `${choiceIndex}:${index}`;
      let known = tools.get(key);
      const delta: ChatChunkToolCall = { index };
      if (!known) {
        known = { named: false };
        tools.set(key, known);
        delta.id = tool.id || toolCallId(call, toolPosition);
        delta.type = 'function';
        toolPosition += 1;
      }
      const fn: NonNullable<ChatChunkToolCall['function']> = {};
      if (tool.function?.name && !known.named) {
        fn.name = tool.function.name;
        known.named = true;
      }
      if (tool.function?.arguments) fn.arguments = tool.function.arguments;
      if (fn.name !== undefined || fn.arguments !== undefined) delta.function = fn;
      return delta;
    });
  }

  function handle(event: { event: string; data: string }): ChatChunk[] {
    if (failed) return [];
    const parsed = parseJson(event.data);
    if (!parsed || typeof parsed !== 'object') return [];
    const error = errorOf(parsed, event.event === 'error' ? 400 : 200);
    if (error && (event.event === 'error' || !(parsed as AliAnswer).output)) {
      failed = error;
      return [];
    }
    const answer = parsed as AliAnswer;
    if (!id && answer.request_id) id = answer.request_id;
    usage = usageOf(answer) ?? usage;
    const choices: ChatChunkChoice[] = [];
    choicesOf(answer).forEach((choice, position) => {
      const index = typeof choice.index === 'number' ? choice.index : position;
      if (closed.has(index)) return;
      const delta: ChatChunkChoice['delta'] = {};
      if (!started.has(index)) delta.role = 'assistant';
      const text = contentText(choice.message?.content);
      if (text) delta.content = text;
      if (choice.message?.reasoning_content) delta.reasoning_content = choice.message.reasoning_content;
      const toolCalls = choice.message?.tool_calls ?? [];
      if (toolCalls.length > 0) delta.tool_calls = toolDeltas(index, toolCalls);
      const finish = finishOf(choice.finish_reason);
      if (!delta.role && !delta.content && !delta.reasoning_content && !delta.tool_calls && !finish) return;
      started.add(index);
      if (finish) closed.add(index);
      choices.push({ index, delta, finish_reason: finish });
    });
    if (closed.size > 0 && closed.size >= started.size) finished = true;
    return choices.length > 0 ? [chunk(choices)] : [];
  }

  return {
    push: (data) => parser.push(data).flatMap(handle),
    end() {
      const { events, bareBody } = parser.end();
      const chunks = events.flatMap(handle);
      if (bareBody && !failed) {
        failed = errorOf(parseJson(bareBody), 400) ?? upstreamFailure(502, `DashScope answered a stream with no events: ${bareBody.slice(0, 200)}`, { type: 'dashscope_error', retryable: true });
      }
      return chunks;
    },
    usage: () => usage,
    failure: () => failed,
    done: () => finished,
  };
}

function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const parsed = parseJson(body);
  if (!parsed || typeof parsed !== 'object') return upstreamFailure(502, `DashScope answered something other than JSON: ${body.slice(0, 200)}`, { type: 'dashscope_error', retryable: true });
  const answer = parsed as { output?: { embeddings?: Array<{ text_index?: number; embedding?: number[] }> }; usage?: { total_tokens?: number; input_tokens?: number } };
  const error = errorOf(parsed, 200);
  if (error && !answer.output) return error;
  const data = embeddingsInOrder((answer.output?.embeddings ?? []).map((item, position) => ({ index: typeof item.text_index === 'number' ? item.text_index : position, embedding: item.embedding ?? [] })));
  const tokens = count(answer.usage?.total_tokens) || count(answer.usage?.input_tokens);
  return { object: 'list', data, model: call.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

export const aliAdaptor: UpstreamAdaptor = {
  protocol: 'ali',
  docs: 'https://help.aliyun.com/zh/model-studio/developer-reference/use-qwen-by-calling-api',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  encodeEmbeddings,
  decodeEmbeddings,
  failure,
};
