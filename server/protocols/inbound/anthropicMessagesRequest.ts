// An Anthropic Messages request in the relay's chat form (what a channel that
// does not speak Messages is sent): system prompt, messages with their tool
// calls and results, tools, tool choice, web search and extended thinking.
// Pure: no I/O. The codec is ./anthropicMessages.ts.
import { textOf, uncarriedToolsReason } from '../shared';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool } from '../types';

/** An Anthropic content block or tool (lenient: only what is read). */
export type Block = Record<string, unknown> & { type?: string };

/** A system prompt's text: a string, or text blocks. */
export function systemText(system: unknown): string {
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
export function blockText(content: unknown): string {
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

/** An assistant turn's blocks as one chat message: its tool_use blocks as the message's tool_calls. */
function assistantMessage(blocks: Block[]): ChatMessage {
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
  return assistant;
}

/** A tool_result block's content: its parts when it holds an image, else its text (marked when the tool failed). */
function toolResultContent(block: Block): string | ChatContentPart[] {
  const content = Array.isArray(block.content) ? partsOf(block.content as Block[]) : [];
  const text = typeof block.content === 'string' ? block.content : blockText(block.content);
  if (content.some((part) => part.type === 'image_url')) return content;
  return block.is_error === true ? `Error: ${text}` : text;
}

/** A user turn's blocks: tool results first (they answer the previous turn's calls), then what the user added. */
function userMessages(blocks: Block[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const block of blocks) {
    if (block?.type !== 'tool_result') continue;
    out.push({ role: 'tool', tool_call_id: textOf(block.tool_use_id), content: toolResultContent(block) });
  }
  const parts = partsOf(blocks.filter((block) => block?.type !== 'tool_result'));
  if (parts.length > 0) out.push({ role: 'user', content: simplified(parts) });
  return out;
}

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
    if (role === 'assistant') out.push(assistantMessage(blocks));
    else out.push(...userMessages(blocks));
  }
  return out;
}

/** A client tool (its schema given), as opposed to Anthropic's server and computer-use tools. */
const isClientTool = (tool: Block) => tool.type === undefined || tool.type === 'custom';

/** Anthropic's server-side web search (web_search_20250305 and later versions): chat's `web_search_options`, which each vendor serves its own way. */
const isWebSearch = (tool: Block) => typeof tool.type === 'string' && tool.type.startsWith('web_search_');

/** Anthropic's own tools (bash_20250124, text_editor..., code_execution...): only Anthropic runs or knows them. Web search travels as chat's `web_search_options`. */
export function uncarriedTools(body: Record<string, unknown>): string | undefined {
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

/** Sets the client's tool_choice in chat's terms, and disable_parallel_tool_use as parallel_tool_calls when tools go along. */
function setToolChoice(request: ChatRequest, given: unknown, withTools: boolean): void {
  const choice = given as { type?: string; name?: string; disable_parallel_tool_use?: boolean } | undefined;
  if (!choice || typeof choice !== 'object') return;
  if (choice.type === 'auto') request.tool_choice = 'auto';
  else if (choice.type === 'any') request.tool_choice = 'required';
  else if (choice.type === 'none') request.tool_choice = 'none';
  else if (choice.type === 'tool' && typeof choice.name === 'string')
    request.tool_choice = { type: 'function', function: { name: choice.name } };
  if (choice.disable_parallel_tool_use === true && withTools) request.parallel_tool_calls = false;
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
  setToolChoice(request, body.tool_choice, tools !== undefined);
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
    if (effort === 'low' || effort === 'high') return effort;
    return effort === 'max' ? 'high' : 'medium';
  }
  if (type !== 'enabled') return undefined;
  const tokens = typeof budget === 'number' && Number.isFinite(budget) ? budget : 0;
  if (tokens <= 1024) return 'low';
  return tokens <= 8192 ? 'medium' : 'high';
}
