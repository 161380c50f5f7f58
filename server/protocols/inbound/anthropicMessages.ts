// The Anthropic Messages client side of the relay (`POST /v1/messages`, what
// Claude Code and the Anthropic SDKs call). Pure: no I/O.
//
// Read from a request: the key (`x-api-key`, else `Authorization: Bearer`),
// the model, `max_tokens` (required by Anthropic; its absence is a 400 in
// Anthropic's shape), the prompt's bound and count. For a channel that speaks
// Messages (Anthropic's own) the client's bytes go on with only the model
// changed, and the answer's usage is read as it passes (the JSON `usage`, the
// stream's message_start and message_delta). For any other channel the request
// is decoded into the relay's chat form (`chatRequest`) and the decoded answer
// written back as a Messages answer (`encodeResponse`, `encodeStream`: the
// exact event sequence message_start, content_block_start/delta/stop per
// block, message_delta with the stop reason and usage, message_stop).
//
// Usage: Anthropic's `input_tokens` excludes the prompt-cache reads and writes,
// so the prompt billed is the sum of the three (as the upstream adaptor reads it).
import type { IncomingHttpHeaders } from 'node:http';
import { reportedAnswerUsage } from './jsonField';
import { PassingUsageWatcher, positiveWhole, selfReportingBodyRules } from './passingWatcher';
import { promptBound } from './promptBound';
import { countPartTokens, countTextTokens, type CountOptions } from './tokenCount';
import type { InboundCodec, InboundError, TextMode } from './types';
import { parseJson, textOf, uncarriedToolsReason } from '../shared';
import type { ChatChunk, ChatContentPart, ChatMessage, ChatRequest, ChatResponse, ChatTool, FinishReason, Usage } from '../types';

// ---- Anthropic's shapes (lenient: only what is read) ----

type Block = Record<string, unknown> & { type?: string };

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Anthropic's counts in the relay's terms (cache reads and writes are part of the prompt). */
export function usageOfAnthropic(usage: AnthropicUsage): Usage {
  const read = positiveWhole(usage.cache_read_input_tokens);
  const created = positiveWhole(usage.cache_creation_input_tokens);
  const billed: Usage = {
    promptTokens: positiveWhole(usage.input_tokens) + read + created,
    completionTokens: positiveWhole(usage.output_tokens),
    cachedPromptTokens: read,
  };
  if (created > 0) billed.cacheCreationTokens = created;
  return billed;
}

/** The relay's usage as Anthropic reports it. */
export function anthropicUsageOf(
  usage: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens' | 'cacheCreationTokens'>,
): Required<AnthropicUsage> {
  const read = usage.cachedPromptTokens || 0;
  const created = usage.cacheCreationTokens || 0;
  return {
    input_tokens: Math.max(0, usage.promptTokens - read - created),
    cache_creation_input_tokens: created,
    cache_read_input_tokens: read,
    output_tokens: usage.completionTokens,
  };
}

// ---- the request ----

/** A system prompt's text: a string, or text blocks. */
function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return (system as Block[])
    .filter((block) => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('\n\n');
}

/**
 * A system prompt in the chat form: one string, or its text blocks as parts
 * when the client marked one for the prompt cache (Claude Code marks both of
 * its blocks), so the mark reaches a vendor that caches prompts.
 */
function systemContent(system: unknown): string | ChatContentPart[] {
  if (!Array.isArray(system) || !(system as Block[]).some((block) => block?.type === 'text' && block.cache_control))
    return systemText(system);
  return partsOf((system as Block[]).filter((block) => block?.type === 'text'));
}

/** A tool result's content as text (a string, or text blocks). */
function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[])
    .filter((block) => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('');
}

function imagePart(block: Block): ChatContentPart | undefined {
  const source = (block.source ?? {}) as { type?: string; media_type?: string; data?: string; url?: string };
  if (source.type === 'base64' && typeof source.data === 'string')
    return { type: 'image_url', image_url: { url: `data:${source.media_type ?? 'image/png'};base64,${source.data}` } };
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  return undefined;
}

/** Content parts (text and images); the single-text case as a plain string. */
function partsOf(blocks: Block[]): ChatContentPart[] {
  const parts: ChatContentPart[] = [];
  for (const block of blocks) {
    if (block?.type === 'text' && typeof block.text === 'string') {
      const part: ChatContentPart = { type: 'text', text: block.text };
      if (block.cache_control) part.cache_control = block.cache_control;
      parts.push(part);
    } else if (block?.type === 'image') {
      const part = imagePart(block);
      if (part) parts.push(part);
    }
  }
  return parts;
}

const simplified = (parts: ChatContentPart[]): string | ChatContentPart[] =>
  parts.every((part) => part.type === 'text' && !part.cache_control) ? parts.map((part) => part.text).join('') : parts;

/** Anthropic messages as chat messages: tool_use blocks → assistant tool_calls, tool_result blocks → tool messages. */
function chatMessages(messages: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of Array.isArray(messages) ? (messages as Array<{ role?: unknown; content?: unknown }>) : []) {
    if (!message || typeof message !== 'object') continue;
    if (message.role === 'system') {
      // some clients put a system turn among the messages: it stays an instruction, where it was
      const content = systemContent(message.content);
      if (content !== '' && content.length > 0) out.push({ role: 'system', content });
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    if (typeof message.content === 'string') {
      out.push({ role, content: message.content });
      continue;
    }
    const blocks = Array.isArray(message.content) ? (message.content as Block[]) : [];
    if (role === 'assistant') {
      const toolCalls = blocks
        .filter((block) => block?.type === 'tool_use')
        .map((block) => ({
          id: textOf(block.id),
          type: 'function' as const,
          function: { name: textOf(block.name), arguments: JSON.stringify(block.input ?? {}) },
        }));
      const text = blocks
        .filter((block) => block?.type === 'text' && typeof block.text === 'string')
        .map((block) => block.text as string)
        .join('');
      const assistant: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
      if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
      out.push(assistant);
      continue;
    }
    // a user turn: tool results first (they answer the previous turn's calls), then what the user added
    for (const block of blocks) {
      if (block?.type !== 'tool_result') continue;
      const content = Array.isArray(block.content) ? partsOf(block.content as Block[]) : [];
      const text = typeof block.content === 'string' ? block.content : blockText(block.content);
      const result = content.some((part) => part.type === 'image_url') ? content : block.is_error === true ? `Error: ${text}` : text;
      out.push({ role: 'tool', tool_call_id: textOf(block.tool_use_id), content: result });
    }
    const parts = partsOf(blocks.filter((block) => block?.type !== 'tool_result'));
    if (parts.length > 0) out.push({ role: 'user', content: simplified(parts) });
  }
  return out;
}

/** A client tool (its schema given), as opposed to Anthropic's server and computer-use tools. */
const isClientTool = (tool: Block) => tool.type === undefined || tool.type === 'custom';

/** Anthropic's server-side web search (web_search_20250305 and later versions): chat's `web_search_options`, which each vendor serves its own way. */
const isWebSearch = (tool: Block) => typeof tool.type === 'string' && tool.type.startsWith('web_search_');

/** Anthropic's own tools (bash_20250124, text_editor..., code_execution...): only Anthropic runs or knows them. Web search travels as chat's `web_search_options`. */
function uncarriedTools(body: Record<string, unknown>): string | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Block[]) : [];
  return uncarriedToolsReason(
    tools.filter((tool) => tool && typeof tool === 'object' && !isClientTool(tool) && !isWebSearch(tool)).map((tool) => String(tool.type)),
  );
}

function webSearchOptions(tools: unknown): Record<string, unknown> | undefined {
  const search = (Array.isArray(tools) ? (tools as Block[]) : []).find((tool) => tool && typeof tool === 'object' && isWebSearch(tool));
  if (!search) return undefined;
  const options: Record<string, unknown> = {};
  if (typeof search.max_uses === 'number') options.max_uses = search.max_uses;
  if (search.user_location && typeof search.user_location === 'object')
    options.user_location = { type: 'approximate', approximate: search.user_location };
  return options;
}

function chatTools(tools: unknown): ChatTool[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const mapped = (tools as Block[])
    .filter((tool) => tool && typeof tool.name === 'string' && isClientTool(tool))
    .map((tool) => ({
      type: 'function' as const,
      function: {
        name: tool.name as string,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: (tool.input_schema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
      },
    }));
  return mapped.length > 0 ? mapped : undefined;
}

/** A Messages request in the relay's chat form (what a channel that does not speak Messages is sent). */
export function chatRequestOf(body: Record<string, unknown>): ChatRequest {
  const messages = chatMessages(body.messages);
  const system = systemContent(body.system);
  if (system !== '') messages.unshift({ role: 'system', content: system });
  const request: ChatRequest = { model: typeof body.model === 'string' ? body.model : '', messages };
  if (body.stream === true) request.stream = true;
  if (typeof body.max_tokens === 'number') request.max_tokens = body.max_tokens;
  for (const field of ['temperature', 'top_p', 'top_k'] as const) if (typeof body[field] === 'number') request[field] = body[field];
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0)
    request.stop = body.stop_sequences.filter((stop): stop is string => typeof stop === 'string');
  const tools = chatTools(body.tools);
  if (tools) request.tools = tools;
  const search = webSearchOptions(body.tools);
  if (search) request.web_search_options = search;
  const choice = body.tool_choice as { type?: string; name?: string; disable_parallel_tool_use?: boolean } | undefined;
  if (choice && typeof choice === 'object') {
    if (choice.type === 'auto') request.tool_choice = 'auto';
    else if (choice.type === 'any') request.tool_choice = 'required';
    else if (choice.type === 'none') request.tool_choice = 'none';
    else if (choice.type === 'tool' && typeof choice.name === 'string')
      request.tool_choice = { type: 'function', function: { name: choice.name } };
    if (choice.disable_parallel_tool_use === true && tools) request.parallel_tool_calls = false;
  }
  const userId = (body.metadata as { user_id?: unknown } | undefined)?.user_id;
  if (typeof userId === 'string' && userId !== '') request.user = userId;
  // extended thinking as OpenAI's reasoning_effort, the one knob every other vendor's adaptor reads
  // (an Anthropic channel gets the client's own request, budget and all)
  const effort = reasoningEffortOf(body.thinking, body.output_config);
  if (effort) request.reasoning_effort = effort;
  return request;
}

/**
 * Anthropic's thinking budget as an effort: the budgets the adaptors give an
 * effort back (1,024 low, 8,192 medium, 24,576 high) each map to themselves;
 * what lies between goes to the nearest level up.
 */
export function reasoningEffortOf(thinking: unknown, outputConfig?: unknown): 'low' | 'medium' | 'high' | undefined {
  if (!thinking || typeof thinking !== 'object') return undefined;
  const { type, budget_tokens: budget } = thinking as { type?: unknown; budget_tokens?: unknown };
  // Claude Code's adaptive thinking: the model decides how much, at the effort output_config names (medium unless said)
  if (type === 'adaptive') {
    const effort = (outputConfig as { effort?: unknown } | null | undefined)?.effort;
    return effort === 'low' || effort === 'high' ? effort : effort === 'max' ? 'high' : 'medium';
  }
  if (type !== 'enabled') return undefined;
  const tokens = typeof budget === 'number' && Number.isFinite(budget) ? budget : 0;
  if (tokens <= 1024) return 'low';
  return tokens <= 8192 ? 'medium' : 'high';
}

// ---- counting ----

/** The prompt's tokens: system, every block's text, tool inputs and results, tool definitions; 3 per message and 3 to prime the reply. */
export function countMessagesPromptTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  const texts: string[] = [systemText(body.system)];
  let total = 3;
  for (const message of Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : []) {
    total += 3;
    const content = message?.content;
    if (typeof content === 'string') {
      texts.push(content);
      continue;
    }
    for (const block of Array.isArray(content) ? (content as Block[]) : []) {
      if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
      else if (block?.type === 'image' || block?.type === 'document') total += countPartTokens(block, model, options);
      else if (block?.type === 'tool_use') texts.push(textOf(block.name), JSON.stringify(block.input ?? {}));
      else if (block?.type === 'tool_result') texts.push(typeof block.content === 'string' ? block.content : blockText(block.content));
      else if (block?.type === 'thinking' && typeof block.thinking === 'string') texts.push(block.thinking);
    }
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return total + countTextTokens(texts.join('\n'), model, options);
}

// ---- errors ----

/** Anthropic's error type for a status (https://docs.anthropic.com/en/api/errors). */
export function anthropicErrorType(status: number | undefined): string {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status !== undefined && status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

export const anthropicErrorBody = (error: InboundError & { status?: number }) =>
  JSON.stringify({ type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } });

// ---- answers written back (the translated path) ----

function stopReason(finish: FinishReason | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** An id in Anthropic's form (`msg_...`) from whatever the vendor gave. */
const messageId = (id: string) => (id.startsWith('msg_') ? id : `msg_${id.replace(/[^A-Za-z0-9_]/g, '')}`);
const toolId = (id: string) => (id.startsWith('toolu_') ? id : `toolu_${id.replace(/[^A-Za-z0-9_]/g, '')}`);

function toolInput(text: string): unknown {
  const parsed = parseJson(text || '{}');
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
}

/** A whole chat answer as a Messages answer (its first choice: Messages has one). */
export function encodeResponse(chat: ChatResponse, usage: Usage, model: string): string {
  const choice = chat.choices[0];
  const content: Block[] = [];
  if (choice?.message.reasoning_content) content.push({ type: 'thinking', thinking: choice.message.reasoning_content, signature: '' });
  if (choice?.message.content) content.push({ type: 'text', text: choice.message.content });
  for (const call of choice?.message.tool_calls ?? [])
    content.push({ type: 'tool_use', id: toolId(call.id), name: call.function.name, input: toolInput(call.function.arguments) });
  return JSON.stringify({
    id: messageId(chat.id),
    type: 'message',
    role: 'assistant',
    model: model || chat.model,
    content,
    stop_reason: stopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: anthropicUsageOf(usage),
  });
}

const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** Writes chat chunks as Anthropic's event stream. */
export class MessagesStreamEncoder {
  private started = false;
  /** The open content block: its Anthropic index, and what it is (a tool call by its OpenAI index). */
  private open: { kind: 'text' | 'thinking' } | { kind: 'tool'; tool: number } | undefined;
  private next = 0;
  private finish: FinishReason | null = null;

  constructor(private readonly model: string) {}

  /** message_start, once: id and model from the first chunk, input usage as known so far. */
  private start(id: string, usage: Usage | undefined): string {
    if (this.started) return '';
    this.started = true;
    const input = usage ? anthropicUsageOf(usage) : { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    return event('message_start', {
      type: 'message_start',
      message: {
        id: messageId(id),
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...input, output_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (!this.open) return '';
    this.open = undefined;
    return event('content_block_stop', { type: 'content_block_stop', index: this.next - 1 });
  }

  private openBlock(kind: 'text' | 'thinking', block: Block): string;
  private openBlock(kind: 'tool', block: Block, tool: number): string;
  private openBlock(kind: 'text' | 'thinking' | 'tool', block: Block, tool = 0): string {
    const closed = this.close();
    this.open = kind === 'tool' ? { kind, tool } : { kind };
    const index = this.next;
    this.next += 1;
    return closed + event('content_block_start', { type: 'content_block_start', index, content_block: block });
  }

  private delta(delta: Block): string {
    return event('content_block_delta', { type: 'content_block_delta', index: this.next - 1, delta });
  }

  /** The events for these chunks ('' when they carry nothing to send). */
  chunks(chunks: readonly ChatChunk[], usage: Usage | undefined, fallbackId: string): string {
    let out = '';
    for (const chunk of chunks) {
      out += this.start(chunk.id || fallbackId, usage);
      for (const choice of chunk.choices) {
        // Messages has one answer
        if (choice.index !== 0) continue;
        const { delta } = choice;
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
          if (this.open?.kind !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
          out += this.delta({ type: 'thinking_delta', thinking: delta.reasoning_content });
        }
        if (typeof delta.content === 'string' && delta.content !== '') {
          if (this.open?.kind !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
          out += this.delta({ type: 'text_delta', text: delta.content });
        }
        for (const call of delta.tool_calls ?? []) {
          const open = this.open;
          if (open?.kind !== 'tool' || open.tool !== call.index) {
            out += this.openBlock(
              'tool',
              { type: 'tool_use', id: toolId(call.id ?? `${fallbackId}_${call.index}`), name: call.function?.name ?? '', input: {} },
              call.index,
            );
          }
          const fragment = call.function?.arguments;
          if (typeof fragment === 'string' && fragment !== '') out += this.delta({ type: 'input_json_delta', partial_json: fragment });
        }
        if (choice.finish_reason) this.finish = choice.finish_reason;
      }
    }
    return out;
  }

  /** The end of a complete answer: the last block closed, message_delta with the stop reason and usage, message_stop. */
  end(usage: Usage, fallbackId: string): string {
    return (
      this.start(fallbackId, undefined) +
      this.close() +
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason(this.finish), stop_sequence: null },
        usage: anthropicUsageOf(usage),
      }) +
      event('message_stop', { type: 'message_stop' })
    );
  }

  /** An error mid-stream, as Anthropic sends one. */
  error(error: InboundError & { status?: number }): string {
    return `event: error\ndata: ${anthropicErrorBody(error)}\n\n`;
  }
}

// ---- the passthrough stream watcher ----

/** Passes an Anthropic event stream on as it came; reads its usage (message_start, message_delta) and text. */
export class MessagesUsageWatcher extends PassingUsageWatcher {
  private usage: AnthropicUsage = {};
  private final = false;

  protected readEvent(data: string): void {
    // only the events that bill: message_start, message_delta and text deltas
    if (!data.includes('"message_start"') && !data.includes('"message_delta"') && !data.includes('"text_delta"')) return;
    const parsed = parseJson(data) as
      | { type?: string; message?: { usage?: AnthropicUsage }; usage?: AnthropicUsage; delta?: { type?: string; text?: unknown } }
      | undefined;
    if (!parsed || typeof parsed !== 'object') return;
    if (parsed.type === 'message_start') this.merge(parsed.message?.usage);
    else if (parsed.type === 'message_delta') {
      this.merge(parsed.usage);
      if (parsed.usage) this.final = true;
    } else if (parsed.type === 'content_block_delta' && parsed.delta?.type === 'text_delta' && typeof parsed.delta.text === 'string')
      this.text += parsed.delta.text;
  }

  private merge(usage: AnthropicUsage | undefined): void {
    if (!usage || typeof usage !== 'object') return;
    for (const field of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      if (typeof usage[field] === 'number') this.usage[field] = usage[field];
    }
  }

  reportedUsage(): Usage | undefined {
    return this.final ? usageOfAnthropic(this.usage) : undefined;
  }
}

// ---- the codec ----

const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

function answerText(value: unknown): string {
  const content = (value as { content?: unknown } | undefined)?.content;
  return blockText(content);
}

/** `x-api-key` (Anthropic's own header), else the Authorization header as it is. */
function authorization(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return `Bearer ${key}`;
  const header = headers.authorization;
  return typeof header === 'string' ? header : undefined;
}

/** The client's beta flags, for a channel that speaks Messages (prompt caching, interleaved thinking and the like). */
function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> | undefined {
  const beta = headers['anthropic-beta'];
  if (beta === undefined || beta === '') return undefined;
  return { 'anthropic-beta': Array.isArray(beta) ? beta.join(',') : beta };
}

export const anthropicMessages = {
  protocol: 'anthropic',
  contentType: 'application/json',
  authorization,
  forwardedHeaders,
  model: (_mode: TextMode, body: Record<string, unknown>) => modelOf(body),
  check(_mode, body) {
    if (!Array.isArray(body.messages)) return { message: 'messages: Field required', code: 'invalid_request_error' };
    if (body.max_tokens === undefined || body.max_tokens === null)
      return { message: 'max_tokens: Field required', code: 'invalid_request_error' };
    if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
      return { message: 'max_tokens: Input should be a valid positive integer', code: 'invalid_request_error' };
    return undefined;
  },
  promptTokens: (_mode, body, model, options) =>
    options.bound ? promptBound(body, model, undefined, 1, options.contextWindow) : countMessagesPromptTokens(body, model, options),
  // Anthropic's stream always reports its usage
  ...selfReportingBodyRules('max_tokens'),
  jsonUsage: (json) => reportedAnswerUsage(json, usageOfAnthropic),
  answerText,
  // nothing to strip: the gateway never asks a Messages stream for anything on the client's behalf
  watchStream: (_stripUsageEvent: boolean) => new MessagesUsageWatcher(),
  errorBody: anthropicErrorBody,
  chatRequest: chatRequestOf,
  untranslatable: uncarriedTools,
  encodeResponse,
  encodeStream: (model: string) => new MessagesStreamEncoder(model),
} satisfies InboundCodec;
