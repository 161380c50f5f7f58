// Anthropic's Messages API (channel type 14).
// Reference: https://docs.anthropic.com/en/api/messages (request and answer),
// https://docs.anthropic.com/en/docs/build-with-claude/streaming (the event
// sequence), https://docs.anthropic.com/en/api/errors (error shapes).
//
// OpenAI chat → Messages: system and developer messages become `system`
// (joined by a blank line; never a fake turn), consecutive messages of one
// role merge (the API wants user and assistant to alternate), tool results
// become user `tool_result` blocks, tool calls `tool_use` blocks. Messages →
// OpenAI: text blocks join into `content`, `tool_use` into `tool_calls`,
// `thinking` into `reasoning_content`. Usage: Anthropic's `input_tokens`
// excludes the prompt-cache reads and writes, so the prompt billed is the sum
// of the three.
//
// Not mapped, because Messages has no such field: `n` (one choice only),
// `seed`, the penalties, `logit_bias`, `response_format`. `temperature` is
// passed as given (Anthropic's range is 0..1; above it the vendor refuses
// with a 400 that reaches the client rather than a silent clamp).
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatChunkChoice,
  ChatContentPart,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatStreamDecoder,
  ChatToolCall,
  FinishReason,
  HttpTarget,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../../types';
import { chunkOf, contentText, count, dataUrl, openAiUsage, parseJson, SseParser, trimmedBaseUrl, upstreamFailure } from '../../shared';
import { findChannelType } from '../../../../common/channelTypes';
import { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MODEL_MAX_OUTPUT_TOKENS } from '../../../../common/options';

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * `max_tokens` is required by Messages. When the client gives none, the call
 * asks for what the relay reserves by default for the model (the
 * DEFAULT_MODEL_MAX_OUTPUT_TOKENS table, else the catalog's maximum output,
 * which the relay passes as `catalogMaxOutput` (AdaptorCall.modelMaxOutputTokens),
 * else DEFAULT_MAX_OUTPUT_TOKENS = 4096, which every Claude model since
 * Claude 2 accepts), so the reservation and the upstream limit agree.
 */
export function defaultMaxTokens(model: string, catalogMaxOutput?: number): number {
  return DEFAULT_MODEL_MAX_OUTPUT_TOKENS[model] || catalogMaxOutput || DEFAULT_MAX_OUTPUT_TOKENS;
}

// ---- the vendor's shapes (lenient: only what is read) ----

type AnthropicBlock = Record<string, unknown> & { type: string };

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

interface AnthropicAnswer {
  type?: string;
  id?: string;
  model?: string;
  content?: Array<{ type?: string; text?: string; thinking?: string; id?: string; name?: string; input?: unknown }>;
  stop_reason?: string | null;
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

// ---- request ----

function imageBlock(url: string): AnthropicBlock {
  const inline = dataUrl(url);
  if (inline) return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } };
  return { type: 'image', source: { type: 'url', url } };
}

/** A client's content as Anthropic blocks (empty texts dropped: the API refuses them). */
function contentBlocks(content: ChatMessage['content']): AnthropicBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: AnthropicBlock[] = [];
  for (const part of content as ChatContentPart[]) {
    if (!part || typeof part !== 'object') continue;
    let block: AnthropicBlock | undefined;
    if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') block = { type: 'text', text: part.text };
    else if (part.type === 'image_url') {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
      if (typeof url === 'string' && url !== '') block = imageBlock(url);
    }
    if (!block) continue;
    // prompt caching marks, as clients that know Anthropic put them on OpenAI parts
    if (part.cache_control && typeof part.cache_control === 'object') block.cache_control = part.cache_control;
    blocks.push(block);
  }
  return blocks;
}

function toolInput(argumentsText: string): unknown {
  const parsed = parseJson(argumentsText || '{}');
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
}

function toolResultContent(content: ChatMessage['content']): string | AnthropicBlock[] {
  if (Array.isArray(content) && content.some((part) => part?.type === 'image_url')) return contentBlocks(content);
  return contentText(content);
}

/** The turns: system messages left out, roles merged so user and assistant alternate. */
function conversation(messages: readonly ChatMessage[]): AnthropicMessage[] {
  const turns: Array<{ role: 'user' | 'assistant'; blocks: AnthropicBlock[] }> = [];
  const add = (role: 'user' | 'assistant', blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  };
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') continue;
    if (message.role === 'assistant') {
      const blocks = contentBlocks(message.content);
      for (const call of message.tool_calls ?? []) {
        blocks.push({ type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: toolInput(call.function?.arguments ?? '') });
      }
      add('assistant', blocks);
    } else if (message.role === 'tool') {
      add('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content: toolResultContent(message.content) }]);
    } else {
      add('user', contentBlocks(message.content));
    }
  }
  return turns.map(({ role, blocks }) => ({
    role,
    content: blocks.length === 1 && blocks[0].type === 'text' && !blocks[0].cache_control ? (blocks[0].text as string) : blocks,
  }));
}

function toolChoice(request: ChatRequest): Record<string, unknown> | undefined {
  const choice = request.tool_choice;
  let mapped: Record<string, unknown> | undefined;
  if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (choice === 'none') mapped = { type: 'none' };
  else if (choice && typeof choice === 'object' && choice.function?.name) mapped = { type: 'tool', name: choice.function.name };
  if (request.parallel_tool_calls === false && mapped?.type !== 'none') mapped = { ...(mapped ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return mapped;
}

function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const systemMessages = request.messages.filter((message) => message.role === 'system' || message.role === 'developer');
  // text blocks when the client marked a part for the prompt cache (the mark must reach Anthropic), else one string
  const systemBlocks = systemMessages.flatMap((message) => contentBlocks(message.content)).filter((block) => block.type === 'text');
  const system = systemBlocks.some((block) => block.cache_control)
    ? systemBlocks
    : systemMessages
        .map((message) => contentText(message.content))
        .filter((text) => text !== '')
        .join('\n\n');
  const body: Record<string, unknown> = {
    model: call.model,
    messages: conversation(request.messages),
    max_tokens: count(request.max_tokens) || count(request.max_completion_tokens) || defaultMaxTokens(call.model, call.modelMaxOutputTokens),
  };
  if (system.length > 0) body.system = system;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  if (typeof request.top_k === 'number') body.top_k = request.top_k;
  const stops = (typeof request.stop === 'string' ? [request.stop] : Array.isArray(request.stop) ? request.stop : []).filter(
    (stop): stop is string => typeof stop === 'string' && stop !== '',
  );
  if (stops.length > 0) body.stop_sequences = stops;
  const tools = (request.tools ?? []).filter((tool) => tool?.type === 'function' && tool.function?.name);
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    }));
    const choice = toolChoice(request);
    if (choice) body.tool_choice = choice;
  }
  if (typeof request.user === 'string' && request.user !== '') body.metadata = { user_id: request.user };
  // extended thinking, for clients that know to ask for it, else from OpenAI's reasoning_effort
  const thinking = request.thinking && typeof request.thinking === 'object' ? request.thinking : thinkingFor(request.reasoning_effort, call.model, body);
  if (thinking) {
    body.thinking = thinking;
    // Anthropic refuses thinking with a changed temperature or top_k, or top_p below 0.95
    delete body.temperature;
    delete body.top_k;
    if (typeof body.top_p === 'number' && body.top_p < 0.95) delete body.top_p;
  }
  if (call.stream) body.stream = true;
  return JSON.stringify(body);
}

/** The models that think when asked (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking). */
const THINKING_MODELS = /^claude-(3-7-sonnet|sonnet-4|opus-4|haiku-4)/;
/** The budget per effort, as Gemini's adaptor has it; Anthropic's floor is 1,024. */
const THINKING_BUDGETS: Record<string, number> = { minimal: 1024, low: 1024, medium: 8192, high: 24576 };
const MIN_THINKING_BUDGET = 1024;

/**
 * Extended thinking for an OpenAI reasoning_effort: only on a model that
 * thinks, under max_tokens (Anthropic's rule), and not with a forced tool
 * (which Anthropic refuses with thinking); otherwise none.
 */
function thinkingFor(effort: unknown, model: string, body: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof effort !== 'string' || !(effort in THINKING_BUDGETS) || !THINKING_MODELS.test(model)) return undefined;
  const forced = (body.tool_choice as { type?: string } | undefined)?.type;
  if (forced === 'any' || forced === 'tool') return undefined;
  const budget = Math.min(THINKING_BUDGETS[effort], (body.max_tokens as number) - 1);
  return budget >= MIN_THINKING_BUDGET ? { type: 'enabled', budget_tokens: budget } : undefined;
}

// ---- answers ----

function finishReason(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

/** Anthropic's counts in the relay's terms: the cache reads and writes are part of the prompt. */
export function anthropicUsage(usage: AnthropicUsage): Usage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheCreation = count(usage.cache_creation_input_tokens);
  return {
    promptTokens: count(usage.input_tokens) + cacheRead + cacheCreation,
    completionTokens: count(usage.output_tokens),
    cachedPromptTokens: cacheRead,
    cacheCreationTokens: cacheCreation,
  };
}

/** The status each error type comes with (for an error met inside a 200 body or a stream). */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Out of credit or a disabled organisation arrive as an invalid_request_error in words only. */
const DEAD_ACCOUNT_WORDS = /credit balance is too low|organization has been disabled|organization is disabled/i;

function classify(status: number, type: string | undefined, message: string): UpstreamFailure {
  const deadKey =
    type === 'authentication_error' || type === 'permission_error' || type === 'billing_error' || DEAD_ACCOUNT_WORDS.test(message);
  const retryable =
    deadKey ||
    type === 'overloaded_error' ||
    type === 'api_error' ||
    type === 'rate_limit_error' ||
    type === 'timeout_error' ||
    // an unknown model on this channel may be served by another
    type === 'not_found_error' ||
    (type !== 'invalid_request_error' && type !== 'request_too_large' && (status === 429 || status >= 500));
  return upstreamFailure(status, message, { type: type ?? null, code: type ?? null, deadKey, retryable });
}

function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body) as AnthropicAnswer | undefined;
  const error = parsed && typeof parsed === 'object' ? parsed.error : undefined;
  if (error && typeof error === 'object') {
    return classify(status, typeof error.type === 'string' ? error.type : undefined, typeof error.message === 'string' ? error.message : '');
  }
  // not Anthropic's JSON (a proxy's page, a gateway timeout): keep a short piece of what it said
  const text = body.trim().slice(0, 300);
  return classify(status, undefined, text ? `upstream answered HTTP ${status}: ${text}` : '');
}

function errorInBody(error: AnthropicAnswer['error']): UpstreamFailure {
  const type = typeof error?.type === 'string' ? error.type : 'api_error';
  return classify(ERROR_STATUS[type] ?? 500, type, typeof error?.message === 'string' ? error.message : '');
}

function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseJson(body) as AnthropicAnswer | undefined;
  if (!answer || typeof answer !== 'object') return upstreamFailure(502, 'Anthropic answered with something that is not JSON', { retryable: true });
  if (answer.type === 'error' || answer.error) return errorInBody(answer.error);
  let text = '';
  let reasoning = '';
  let hasText = false;
  const toolCalls: ChatToolCall[] = [];
  for (const block of answer.content ?? []) {
    if (block?.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (block?.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
    } else if (block?.type === 'tool_use') {
      toolCalls.push({
        id: block.id || `call_${call.responseId}_${toolCalls.length}`,
        type: 'function',
        function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: hasText || toolCalls.length === 0 ? text : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id: answer.id || call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: answer.model || call.model,
    choices: [{ index: 0, message, finish_reason: finishReason(answer.stop_reason) }],
    usage: openAiUsage(anthropicUsage(answer.usage ?? {})),
  };
}

// ---- stream ----

interface StreamEvent {
  type?: string;
  index?: number;
  message?: AnthropicAnswer;
  content_block?: { type?: string; id?: string; name?: string; input?: unknown; text?: string; thinking?: string };
  delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** What a content block of the stream became on the OpenAI side. */
type OpenBlock = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; tool: number; sentArguments: boolean } | { kind: 'other' };

/**
 * Anthropic's event stream → OpenAI chunks: the role on message_start, one
 * chunk per text, thinking or tool-input delta, tool calls numbered in the
 * order their blocks start, and one finish chunk from message_delta. Usage is
 * message_start's (prompt side) with message_delta's output count (which is
 * cumulative; a message_delta carrying prompt-side counts overrides them). It
 * is reported only once message_delta arrived: a stream cut before it has no
 * final figures, and the relay estimates.
 */
class AnthropicStreamDecoder implements ChatStreamDecoder {
  private readonly parser = new SseParser();
  private id = '';
  private model = '';
  private readonly blocks = new Map<number, OpenBlock>();
  private tools = 0;
  private usageSoFar: AnthropicUsage = {};
  private final = false;
  private finished = false;
  private ended = false;
  private error: UpstreamFailure | undefined;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    return this.read(this.parser.push(data));
  }

  end(): ChatChunk[] {
    return this.read(this.parser.end());
  }

  usage(): Usage | undefined {
    return this.final ? anthropicUsage(this.usageSoFar) : undefined;
  }

  failure(): UpstreamFailure | undefined {
    return this.error;
  }

  done(): boolean {
    return this.ended;
  }

  private read(events: ReturnType<SseParser['push']>): ChatChunk[] {
    const chunks: ChatChunk[] = [];
    for (const { event, data } of events) {
      const parsed = parseJson(data) as StreamEvent | undefined;
      if (!parsed || typeof parsed !== 'object') continue;
      const chunk = this.handle(parsed.type ?? event, parsed);
      if (chunk) chunks.push(chunk);
    }
    return chunks;
  }

  private chunk(delta: ChatChunkChoice['delta'], finish: FinishReason | null = null): ChatChunk {
    const chunk = chunkOf(this.call, this.model, [{ index: 0, delta, finish_reason: finish }]);
    if (this.id) chunk.id = this.id;
    return chunk;
  }

  private mergeUsage(usage: AnthropicUsage | undefined): void {
    if (!usage || typeof usage !== 'object') return;
    for (const field of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      if (typeof usage[field] === 'number') this.usageSoFar[field] = usage[field];
    }
  }

  private handle(type: string, event: StreamEvent): ChatChunk | undefined {
    switch (type) {
      case 'message_start': {
        const message = event.message ?? {};
        this.id = message.id || '';
        this.model = message.model || '';
        this.mergeUsage(message.usage);
        return this.chunk({ role: 'assistant', content: '' });
      }
      case 'content_block_start': {
        const block = event.content_block ?? {};
        const index = event.index ?? 0;
        if (block.type === 'text') {
          this.blocks.set(index, { kind: 'text' });
          return block.text ? this.chunk({ content: block.text }) : undefined;
        }
        if (block.type === 'thinking') {
          this.blocks.set(index, { kind: 'thinking' });
          return block.thinking ? this.chunk({ reasoning_content: block.thinking }) : undefined;
        }
        if (block.type === 'tool_use') {
          const tool = this.tools;
          this.tools += 1;
          // a tool_use start carries `input: {}`; its arguments come as input_json_delta
          const input = block.input && typeof block.input === 'object' && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
          this.blocks.set(index, { kind: 'tool', tool, sentArguments: input !== '' });
          return this.chunk({
            tool_calls: [{ index: tool, id: block.id || `call_${this.call.responseId}_${tool}`, type: 'function', function: { name: block.name ?? '', arguments: input } }],
          });
        }
        this.blocks.set(index, { kind: 'other' });
        return undefined;
      }
      case 'content_block_delta': {
        const block = this.blocks.get(event.index ?? 0);
        const delta = event.delta ?? {};
        if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') return this.chunk({ content: delta.text });
        if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '') return this.chunk({ reasoning_content: delta.thinking });
        if (delta.type === 'input_json_delta' && block?.kind === 'tool' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
          block.sentArguments = true;
          return this.chunk({ tool_calls: [{ index: block.tool, function: { arguments: delta.partial_json } }] });
        }
        // signature_delta, citations and deltas of blocks OpenAI has no place for
        return undefined;
      }
      case 'content_block_stop': {
        const block = this.blocks.get(event.index ?? 0);
        // a tool called with no input streams no fragment: its arguments are still a JSON object
        if (block?.kind === 'tool' && !block.sentArguments) {
          block.sentArguments = true;
          return this.chunk({ tool_calls: [{ index: block.tool, function: { arguments: '{}' } }] });
        }
        return undefined;
      }
      case 'message_delta': {
        this.mergeUsage(event.usage);
        if (event.usage) this.final = true;
        if (this.finished || !event.delta || !('stop_reason' in event.delta) || !event.delta.stop_reason) return undefined;
        this.finished = true;
        return this.chunk({}, finishReason(event.delta.stop_reason));
      }
      case 'message_stop': {
        this.ended = true;
        if (this.finished) return undefined;
        this.finished = true;
        return this.chunk({}, 'stop');
      }
      case 'error': {
        this.error = errorInBody(event.error);
        return undefined;
      }
      default:
        // ping, and event types added after this was written
        return undefined;
    }
  }
}

// ---- the adaptor ----

function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (call.operation !== 'chat') return upstreamFailure(501, `Anthropic channels do not offer ${call.operation}`, { code: 'operation_unsupported', retryable: true });
  const base = trimmedBaseUrl(channel.baseUrl, findChannelType(channel.type)?.defaultBaseUrl, 'https://api.anthropic.com');
  return {
    url: `${base}/v1/messages`,
    method: 'POST',
    headers: {
      'x-api-key': channel.key,
      'anthropic-version': ANTHROPIC_VERSION,
      'content-type': 'application/json',
      ...(call.stream ? { accept: 'text/event-stream' } : {}),
    },
  };
}

export const anthropicAdaptor: UpstreamAdaptor = {
  protocol: 'anthropic',
  docs: 'https://docs.anthropic.com/en/api/messages',
  operations: new Set(['chat']),
  // a Messages client's request passes to it as bytes, only the model changed
  speaks: 'anthropic',
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream: (call) => new AnthropicStreamDecoder(call),
  failure,
};
