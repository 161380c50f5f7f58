// The Messages request: where it goes (target), and the OpenAI chat request
// encoded as Messages wants it (system apart, alternating turns, tool blocks,
// max_tokens always, extended thinking from reasoning_effort).
import type { AdaptorCall, ChannelConfig, ChatMessage, ChatRequest, HttpTarget, UpstreamFailure } from '../../types';
import { contentText, count, dataUrl, parseJson, stopList, trimmedBaseUrl, upstreamFailure } from '../../shared';
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
  for (const part of content) {
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
  if (request.parallel_tool_calls === false && mapped?.type !== 'none')
    mapped = { ...(mapped ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return mapped;
}

/** The system prompt: text blocks when the client marked a part for the prompt cache (the mark must reach Anthropic), else one string. */
function systemOf(messages: ChatMessage[]): string | AnthropicBlock[] {
  const systemMessages = messages.filter((message) => message.role === 'system' || message.role === 'developer');
  const systemBlocks = systemMessages.flatMap((message) => contentBlocks(message.content)).filter((block) => block.type === 'text');
  if (systemBlocks.some((block) => block.cache_control)) return systemBlocks;
  return systemMessages
    .map((message) => contentText(message.content))
    .filter((text) => text !== '')
    .join('\n\n');
}

/** chat's web_search_options as Anthropic's server-side web search tool (searches billed by Anthropic per use). */
function webSearchTool(search: object): Record<string, unknown> {
  const options = search as { max_uses?: unknown; user_location?: { approximate?: unknown } };
  const tool: Record<string, unknown> = { type: 'web_search_20250305', name: 'web_search' };
  if (typeof options.max_uses === 'number') tool.max_uses = options.max_uses;
  if (options.user_location?.approximate && typeof options.user_location.approximate === 'object')
    tool.user_location = { type: 'approximate', ...options.user_location.approximate };
  return tool;
}

/** Sets the body's tools: the function tools with the tool choice, then web search when asked. */
function setTools(body: Record<string, unknown>, request: ChatRequest): void {
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
  const search = request.web_search_options;
  if (search && typeof search === 'object') body.tools = [...((body.tools as unknown[] | undefined) ?? []), webSearchTool(search)];
}

/** Sets extended thinking, for clients that know to ask for it, else from OpenAI's reasoning_effort, and drops the sampling it refuses. */
function setThinking(body: Record<string, unknown>, request: ChatRequest, model: string): void {
  const thinking =
    request.thinking && typeof request.thinking === 'object' ? request.thinking : thinkingFor(request.reasoning_effort, model, body);
  if (!thinking) return;
  body.thinking = thinking;
  // Anthropic refuses thinking with a changed temperature or top_k, or top_p below 0.95
  delete body.temperature;
  delete body.top_k;
  if (typeof body.top_p === 'number' && body.top_p < 0.95) delete body.top_p;
}

/** An OpenAI chat request as a Messages body. */
export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const system = systemOf(request.messages);
  const body: Record<string, unknown> = {
    model: call.model,
    messages: conversation(request.messages),
    max_tokens:
      count(request.max_tokens) || count(request.max_completion_tokens) || defaultMaxTokens(call.model, call.modelMaxOutputTokens),
  };
  if (system.length > 0) body.system = system;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  if (typeof request.top_k === 'number') body.top_k = request.top_k;
  const stops = stopList(request.stop);
  if (stops.length > 0) body.stop_sequences = stops;
  setTools(body, request);
  if (typeof request.user === 'string' && request.user !== '') body.metadata = { user_id: request.user };
  setThinking(body, request, call.model);
  if (call.stream) body.stream = true;
  return JSON.stringify(body);
}

/** The models that think when asked (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking). */
const THINKING_MODELS = /^claude-(3-7-sonnet|sonnet-4|opus-4|haiku-4)/;
/** The budget per effort, as Gemini's adaptor has it; Anthropic's floor is 1,024. */
const THINKING_BUDGETS: Record<string, number> = { minimal: 1024, low: 1024, medium: 8192, high: 24576 };
const MIN_THINKING_BUDGET = 1024;

/** The share of max_tokens thinking may take, so that the answer keeps room (a budget of max_tokens - 1 left it one token). */
const THINKING_SHARE = 0.75;

/**
 * Extended thinking for an OpenAI reasoning_effort: only on a model that
 * thinks, within THINKING_SHARE of max_tokens (Anthropic's rule is under it;
 * the answer needs the rest), and not with a forced tool (which Anthropic
 * refuses with thinking); otherwise none.
 */
export function thinkingFor(effort: unknown, model: string, body: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof effort !== 'string' || !(effort in THINKING_BUDGETS) || !THINKING_MODELS.test(model)) return undefined;
  const forced = (body.tool_choice as { type?: string } | undefined)?.type;
  if (forced === 'any' || forced === 'tool') return undefined;
  const budget = Math.min(THINKING_BUDGETS[effort], Math.floor((body.max_tokens as number) * THINKING_SHARE));
  return budget >= MIN_THINKING_BUDGET ? { type: 'enabled', budget_tokens: budget } : undefined;
}

// ---- where it goes ----

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (call.operation !== 'chat')
    return upstreamFailure(501, `Anthropic channels do not offer ${call.operation}`, { code: 'operation_unsupported', retryable: true });
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
