// The OpenAI Responses client side of the relay (`POST /v1/responses`, what
// the openai SDKs' `responses.create`, the Agents SDK and Codex call). Pure:
// no I/O. Reference: https://platform.openai.com/docs/api-reference/responses
// (the openai SDK's resources/responses/responses.d.ts is the exact shape of
// every object and event).
//
// The gateway stores nothing, so a request that leans on stored state
// (`previous_response_id`, `conversation`) is refused before anything is
// held; `store` itself is taken and ignored. For a channel whose type serves
// Responses itself (OpenAI's own, the `responses` row field) the client's bytes
// go on with only the model changed, and the answer's usage is read as it
// passes (the JSON `usage`; the stream's response.completed). For any other
// channel the request is decoded into the relay's chat form (`chatRequest`:
// items to messages, function tools and calls to chat tools and tool_calls,
// function_call_output to tool messages) and the decoded answer written back
// as a Response (`encodeResponse`) or as Responses' event stream
// (`encodeStream`: response.created, response.in_progress, per output item
// output_item.added, its content part or arguments deltas and dones,
// output_item.done, then response.completed, or response.incomplete when the
// output limit cut the answer), every event numbered by `sequence_number`.
//
// Usage: Responses' `input_tokens` includes the cached ones and
// `output_tokens` the reasoning ones, as chat's prompt and completion do.
import { reportedAnswerUsage } from './jsonField';
import { openAiErrorBody } from './openaiChat';
import { promptBound } from './promptBound';
import { countPartTokens, countTextTokens, type CountOptions } from './tokenCount';
import { PassingUsageWatcher, positiveWhole, selfReportingBodyRules } from './passingWatcher';
import type { InboundCodec, InboundError, TextMode } from './types';
import { parseJson, textOf, uncarriedToolsReason } from '../shared';
import type { ChatChunk, ChatContentPart, ChatMessage, ChatRequest, ChatResponse, ChatTool, FinishReason, Usage } from '../types';

// ---- Responses' shapes (lenient: only what is read) ----

type Item = Record<string, unknown> & { type?: string };

interface ResponsesUsage {
  input_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null } | null;
  output_tokens?: number | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
  total_tokens?: number | null;
}

/** Responses' counts in the relay's terms. */
export function usageOfResponses(usage: ResponsesUsage): Usage {
  return {
    promptTokens: positiveWhole(usage.input_tokens),
    completionTokens: positiveWhole(usage.output_tokens),
    cachedPromptTokens: positiveWhole(usage.input_tokens_details?.cached_tokens),
  };
}

/** The relay's usage as Responses reports it. */
export function responsesUsageOf(
  usage: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens' | 'reasoningTokens'>,
): Required<ResponsesUsage> {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens || 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens || 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

// ---- the request ----

/** The text of a content list (input_text, output_text, refusal parts), or the string itself. */
function itemText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content as Item[]) {
    if (typeof part?.text === 'string') text += part.text;
    else if (typeof part?.refusal === 'string') text += part.refusal;
  }
  return text;
}

/** A user's (or system's) content as chat content: text and images; a text-only list as a plain string. */
function userContent(content: unknown): string | ChatContentPart[] {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  const parts: ChatContentPart[] = [];
  for (const part of content as Item[]) {
    if ((part?.type === 'input_text' || part?.type === 'output_text') && typeof part.text === 'string')
      parts.push({ type: 'text', text: part.text });
    else if (part?.type === 'input_image' && typeof part.image_url === 'string') {
      // an image by file_id lives in OpenAI's storage: no other vendor can read it
      parts.push({
        type: 'image_url',
        image_url: { url: part.image_url, ...(typeof part.detail === 'string' && part.detail !== 'auto' ? { detail: part.detail } : {}) },
      });
    }
  }
  return parts.every((part) => part.type === 'text') ? parts.map((part) => part.text).join('') : parts;
}

/** Chat's role for an input message's: `developer` is OpenAI's newer name for system, which every vendor reads. */
const chatRole = (role: unknown) => (role === 'assistant' ? 'assistant' : role === 'system' || role === 'developer' ? 'system' : 'user');

/** Input items as chat messages: function_call items join the assistant turn before them as tool_calls, outputs become tool messages. */
function chatMessages(input: unknown): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: ChatMessage[] = [];
  for (const item of Array.isArray(input) ? (input as Item[]) : []) {
    if (!item || typeof item !== 'object') continue;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = chatRole(item.role);
      out.push({ role, content: role === 'assistant' ? itemText(item.content) : userContent(item.content) });
    } else if (type === 'function_call') {
      const name =
        typeof item.namespace === 'string' && item.namespace !== '' ? flatToolName(item.namespace, textOf(item.name)) : textOf(item.name);
      const call = {
        id: textOf(item.call_id ?? item.id),
        type: 'function' as const,
        function: { name, arguments: typeof item.arguments === 'string' ? item.arguments : '{}' },
      };
      const last = out.at(-1);
      // calls made in one turn follow that turn's message (or each other): chat wants them on one assistant message
      if (last?.role === 'assistant') {
        last.tool_calls = [...(last.tool_calls ?? []), call];
        if (last.content === '') last.content = null;
      } else {
        out.push({ role: 'assistant', content: null, tool_calls: [call] });
      }
    } else if (type === 'function_call_output') {
      out.push({ role: 'tool', tool_call_id: textOf(item.call_id), content: itemText(item.output) });
    }
    // reasoning items, item references and built-in tool calls have no chat form: a vendor without Responses cannot take them
  }
  return out;
}

/** The name a namespace's function goes by in chat, which has no namespaces: `mcp__docs` and `search_docs` make `mcp__docs__search_docs`. */
export const flatToolName = (namespace: string, name: string) => `${namespace}__${name}`;

/**
 * The function tools of a request, those inside a `namespace` tool (Codex
 * groups an MCP server's tools so) lifted out under their flat names.
 */
function functionTools(tools: unknown): Array<{ tool: Item; name: string }> {
  const found: Array<{ tool: Item; name: string }> = [];
  for (const tool of Array.isArray(tools) ? (tools as Item[]) : []) {
    if (tool?.type === 'function' && typeof tool.name === 'string') found.push({ tool, name: tool.name });
    else if (tool?.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools as Item[]) {
        if (inner?.type === 'function' && typeof inner.name === 'string')
          found.push({ tool: inner, name: flatToolName(tool.name, inner.name) });
      }
    }
  }
  return found;
}

/** A chat call's name as the client knows it: a flat name of a namespace's function goes back to its namespace and name. */
export function clientToolName(request: Record<string, unknown>, name: string): { name: string; namespace?: string } {
  for (const tool of Array.isArray(request.tools) ? (request.tools as Item[]) : []) {
    if (tool?.type === 'function' && tool.name === name) return { name };
  }
  for (const tool of Array.isArray(request.tools) ? (request.tools as Item[]) : []) {
    if (tool?.type !== 'namespace' || typeof tool.name !== 'string' || !Array.isArray(tool.tools)) continue;
    for (const inner of tool.tools as Item[])
      if (typeof inner?.name === 'string' && flatToolName(tool.name, inner.name) === name)
        return { name: inner.name, namespace: tool.name };
  }
  return { name };
}

/** Web search as the client asked for it (`web_search`, `web_search_preview`): chat's `web_search_options`, which each channel's vendor serves its own way or drops. */
function webSearchOptions(tools: unknown): Record<string, unknown> | undefined {
  const search = (Array.isArray(tools) ? (tools as Item[]) : []).find((tool) => WEB_SEARCH_TOOLS.has(String(tool?.type)));
  if (!search) return undefined;
  const options: Record<string, unknown> = {};
  if (typeof search.search_context_size === 'string') options.search_context_size = search.search_context_size;
  if (search.user_location && typeof search.user_location === 'object')
    options.user_location = { type: 'approximate', approximate: search.user_location };
  return options;
}
const WEB_SEARCH_TOOLS = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

function chatTools(tools: unknown): ChatTool[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const mapped = functionTools(tools).map(({ tool, name }) => {
    const definition: ChatTool['function'] & { strict?: boolean } = {
      name,
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters: (tool.parameters as Record<string, unknown> | null | undefined) ?? { type: 'object', properties: {} },
    };
    if (typeof tool.strict === 'boolean') definition.strict = tool.strict;
    return { type: 'function' as const, function: definition };
  });
  return mapped.length > 0 ? mapped : undefined;
}

function chatToolChoice(choice: unknown): ChatRequest['tool_choice'] | undefined {
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  if (!choice || typeof choice !== 'object') return undefined;
  const { type, name, mode } = choice as { type?: unknown; name?: unknown; mode?: unknown };
  if (type === 'function' && typeof name === 'string') return { type: 'function', function: { name } };
  // a subset of the tools: chat has no such choice, so the mode alone
  if (type === 'allowed_tools' && (mode === 'auto' || mode === 'required')) return mode;
  return undefined;
}

/** `text.format` as chat's response_format (json_schema's fields sit one level down there). */
function responseFormat(text: unknown): ChatRequest['response_format'] | undefined {
  const format = (text as { format?: Item } | undefined)?.format;
  if (!format || typeof format !== 'object') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') return undefined;
  const schema: Record<string, unknown> = { name: typeof format.name === 'string' ? format.name : 'response', schema: format.schema ?? {} };
  if (typeof format.description === 'string') schema.description = format.description;
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}

/** Built-in tools (file_search, code_interpreter, custom...): chat has function tools only. Namespaces are flattened and web search goes as chat's `web_search_options`. */
function uncarriedTools(body: Record<string, unknown>): string | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Item[]) : [];
  const names = tools
    .filter(
      (tool) =>
        tool &&
        typeof tool === 'object' &&
        tool.type !== 'function' &&
        tool.type !== 'namespace' &&
        !WEB_SEARCH_TOOLS.has(String(tool.type)),
    )
    .map((tool) => (typeof tool.name === 'string' ? `${String(tool.type)} ${tool.name}` : String(tool.type)));
  return uncarriedToolsReason(names);
}

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

/** A Responses request in the relay's chat form (what a channel that does not serve Responses is sent). */
export function chatRequestOf(body: Record<string, unknown>): ChatRequest {
  const messages = chatMessages(body.input);
  if (typeof body.instructions === 'string' && body.instructions !== '') messages.unshift({ role: 'system', content: body.instructions });
  const request: ChatRequest = { model: typeof body.model === 'string' ? body.model : '', messages };
  if (body.stream === true) request.stream = true;
  if (typeof body.max_output_tokens === 'number') request.max_tokens = body.max_output_tokens;
  for (const field of ['temperature', 'top_p'] as const) if (typeof body[field] === 'number') request[field] = body[field];
  const tools = chatTools(body.tools);
  const search = webSearchOptions(body.tools);
  if (search) request.web_search_options = search;
  if (tools) {
    request.tools = tools;
    const choice = chatToolChoice(body.tool_choice);
    if (choice) request.tool_choice = choice;
    if (typeof body.parallel_tool_calls === 'boolean') request.parallel_tool_calls = body.parallel_tool_calls;
  }
  const format = responseFormat(body.text);
  if (format) request.response_format = format;
  const effort = (body.reasoning as { effort?: unknown } | null | undefined)?.effort;
  if (typeof effort === 'string' && EFFORTS.has(effort)) request.reasoning_effort = effort;
  // `safety_identifier` is the newer name of `user`
  const user = typeof body.user === 'string' && body.user !== '' ? body.user : body.safety_identifier;
  if (typeof user === 'string' && user !== '') request.user = user;
  return request;
}

// ---- counting ----

/** The prompt's tokens: instructions, every item's text, calls and outputs, tool definitions; 3 per item and 3 to prime the reply. */
export function countResponsesPromptTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  const texts: string[] = [typeof body.instructions === 'string' ? body.instructions : ''];
  let total = 3;
  if (typeof body.input === 'string') {
    total += 3;
    texts.push(body.input);
  }
  for (const item of Array.isArray(body.input) ? (body.input as Item[]) : []) {
    if (!item || typeof item !== 'object') continue;
    total += 3;
    if (item.type === 'function_call') texts.push(textOf(item.name), typeof item.arguments === 'string' ? item.arguments : '');
    else if (item.type === 'function_call_output') texts.push(itemText(item.output));
    else {
      texts.push(itemText(item.content));
      if (Array.isArray(item.content)) {
        for (const part of item.content as Item[])
          if (part?.type === 'input_image' || part?.type === 'input_file' || part?.type === 'input_audio')
            total += countPartTokens(part, model, options);
      }
    }
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return total + countTextTokens(texts.join('\n'), model, options);
}

// ---- answers written back (the translated path) ----

/** An id in Responses' form (`resp_...`, `msg_...`) from whatever the vendor gave. */
const idOf = (prefix: string, id: string) => (id.startsWith(prefix) ? id : `${prefix}${id.replace(/[^A-Za-z0-9_]/g, '')}`);
/** The common part of a response's and its items' ids (`chatcmpl-abc` → `abc`). */
const idCore = (id: string) => id.replace(/^(resp_|chatcmpl-|chatcmpl_)/, '').replace(/[^A-Za-z0-9_]/g, '');

/** Where a response stands once its answer ended: `length` means the output limit cut it. */
function outcome(finish: FinishReason | null | undefined): {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
} {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const numberOr = (value: unknown, fallback: number | null) => (typeof value === 'number' ? value : fallback);

/** A response as OpenAI writes one, its settings repeated from the request; output and usage still empty. */
function responseShell(id: string, createdAt: number, model: string, request: Record<string, unknown>): Record<string, unknown> {
  const reasoning = (request.reasoning ?? {}) as { effort?: unknown; summary?: unknown };
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: numberOr(request.max_output_tokens, null),
    max_tool_calls: null,
    model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    service_tier: 'default',
    // the gateway stores nothing, whatever the client asked
    store: false,
    temperature: numberOr(request.temperature, 1),
    text: { format: (request.text as { format?: unknown } | undefined)?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_p: numberOr(request.top_p, 1),
    truncation: 'disabled',
    usage: null,
    user: typeof request.user === 'string' ? request.user : null,
    metadata: request.metadata && typeof request.metadata === 'object' ? request.metadata : {},
  };
}

const outputText = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
const reasoningText = (text: string) => ({ type: 'reasoning_text', text });
const messageItem = (id: string, status: string, text: string | undefined) => ({
  id,
  type: 'message',
  status,
  content: text === undefined ? [] : [outputText(text)],
  role: 'assistant',
});
const reasoningItem = (id: string, text: string | undefined) => ({
  id,
  type: 'reasoning',
  summary: [],
  content: text === undefined ? [] : [reasoningText(text)],
});
/** A function call item; a call of a namespace's function names its namespace, as the client declared it. */
const functionCallItem = (id: string, status: string, callId: string, called: { name: string; namespace?: string }, args: string) => ({
  id,
  type: 'function_call',
  status,
  arguments: args,
  call_id: callId,
  name: called.name,
  ...(called.namespace === undefined ? {} : { namespace: called.namespace }),
});

/** A whole chat answer as a Response (its first choice: a Response has one answer). */
export function encodeResponse(chat: ChatResponse, usage: Usage, model: string, request: Record<string, unknown>): string {
  const choice = chat.choices[0];
  const core = idCore(chat.id);
  const { status, incomplete_details } = outcome(choice?.finish_reason);
  const output: Item[] = [];
  if (choice?.message.reasoning_content) output.push(reasoningItem(`rs_${core}`, choice.message.reasoning_content));
  if (choice?.message.content) output.push(messageItem(`msg_${core}`, status, choice.message.content));
  for (const [index, call] of (choice?.message.tool_calls ?? []).entries()) {
    output.push(
      functionCallItem(`fc_${core}_${index}`, 'completed', call.id, clientToolName(request, call.function.name), call.function.arguments),
    );
  }
  return JSON.stringify({
    ...responseShell(idOf('resp_', core), chat.created, model || chat.model, request),
    status,
    incomplete_details,
    output,
    usage: responsesUsageOf(usage),
  });
}

/** The output item being streamed: a text (message or reasoning) or a function call (by its chat index). */
type OpenItem =
  | { kind: 'message' | 'reasoning'; index: number; id: string; text: string }
  | { kind: 'function_call'; index: number; id: string; tool: number; callId: string; name: string; arguments: string };

/** Names of the events of each text kind (what differs between a message's text and reasoning's). */
const TEXT_EVENTS = {
  message: { delta: 'response.output_text.delta', done: 'response.output_text.done', part: outputText },
  reasoning: { delta: 'response.reasoning_text.delta', done: 'response.reasoning_text.done', part: reasoningText },
} as const;

/** Writes chat chunks as Responses' event stream. */
export class ResponsesStreamEncoder {
  private sequence = 0;
  /** The response as response.created announced it, once it has. */
  private shell: Record<string, unknown> | undefined;
  private core = '';
  /** The items closed so far, as output_item.done gave them. */
  private readonly output: Item[] = [];
  private open: OpenItem | undefined;
  private finish: FinishReason | null = null;

  constructor(
    private readonly model: string,
    private readonly request: Record<string, unknown>,
  ) {}

  private event(type: string, fields: Record<string, unknown>): string {
    const data = { type, sequence_number: this.sequence, ...fields };
    this.sequence += 1;
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  /** response.created and response.in_progress, once: the id and time from the first chunk. */
  private start(id: string, createdAt: number): string {
    if (this.shell) return '';
    this.core = idCore(id);
    this.shell = responseShell(idOf('resp_', this.core), createdAt, this.model, this.request);
    return this.event('response.created', { response: this.shell }) + this.event('response.in_progress', { response: this.shell });
  }

  /** Closes the open item: its text's or arguments' done event, its content part's, output_item.done. */
  private close(status: 'completed' | 'incomplete' = 'completed'): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    const at = { item_id: open.id, output_index: open.index };
    let item: Item;
    let out = '';
    if (open.kind === 'function_call') {
      out += this.event('response.function_call_arguments.done', { ...at, arguments: open.arguments });
      item = functionCallItem(open.id, 'completed', open.callId, clientToolName(this.request, open.name), open.arguments);
    } else {
      const names = TEXT_EVENTS[open.kind];
      out += this.event(names.done, { ...at, content_index: 0, text: open.text, ...(open.kind === 'message' ? { logprobs: [] } : {}) });
      out += this.event('response.content_part.done', { ...at, content_index: 0, part: names.part(open.text) });
      item = open.kind === 'message' ? messageItem(open.id, status, open.text) : reasoningItem(open.id, open.text);
    }
    this.output.push(item);
    return out + this.event('response.output_item.done', { output_index: open.index, item });
  }

  /** A message or reasoning item, opened with its empty content part. */
  private openText(kind: 'message' | 'reasoning'): string {
    const closed = this.close();
    const index = this.output.length;
    const id = `${kind === 'message' ? 'msg' : 'rs'}_${this.core}_${index}`;
    this.open = { kind, index, id, text: '' };
    const item = kind === 'message' ? messageItem(id, 'in_progress', undefined) : reasoningItem(id, undefined);
    return (
      closed +
      this.event('response.output_item.added', { output_index: index, item }) +
      this.event('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: TEXT_EVENTS[kind].part('') })
    );
  }

  private text(kind: 'message' | 'reasoning', delta: string): string {
    let out = this.open?.kind === kind ? '' : this.openText(kind);
    const open = this.open as OpenItem & { text: string };
    open.text += delta;
    out += this.event(TEXT_EVENTS[kind].delta, {
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      delta,
      ...(kind === 'message' ? { logprobs: [] } : {}),
    });
    return out;
  }

  /** The events for these chunks ('' when they carry nothing to send). */
  chunks(chunks: readonly ChatChunk[], _usage: Usage | undefined, fallbackId: string): string {
    let out = '';
    for (const chunk of chunks) {
      out += this.start(chunk.id || fallbackId, chunk.created);
      for (const choice of chunk.choices) {
        // a Response has one answer
        if (choice.index !== 0) continue;
        const { delta } = choice;
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '')
          out += this.text('reasoning', delta.reasoning_content);
        if (typeof delta.content === 'string' && delta.content !== '') out += this.text('message', delta.content);
        for (const call of delta.tool_calls ?? []) {
          const open = this.open;
          if (open?.kind !== 'function_call' || open.tool !== call.index) {
            out += this.close();
            const index = this.output.length;
            const item = {
              kind: 'function_call' as const,
              index,
              id: `fc_${this.core}_${index}`,
              tool: call.index,
              callId: call.id ?? `call_${this.core}_${call.index}`,
              name: call.function?.name ?? '',
              arguments: '',
            };
            this.open = item;
            out += this.event('response.output_item.added', {
              output_index: index,
              item: functionCallItem(item.id, 'in_progress', item.callId, clientToolName(this.request, item.name), ''),
            });
          }
          const fragment = call.function?.arguments;
          if (typeof fragment === 'string' && fragment !== '') {
            const current = this.open as Extract<OpenItem, { kind: 'function_call' }>;
            current.arguments += fragment;
            out += this.event('response.function_call_arguments.delta', {
              item_id: current.id,
              output_index: current.index,
              delta: fragment,
            });
          }
        }
        if (choice.finish_reason) this.finish = choice.finish_reason;
      }
    }
    return out;
  }

  /** The end of a complete answer: the last item closed, then response.completed (or response.incomplete) with the whole response and usage. */
  end(usage: Usage, fallbackId: string): string {
    const { status, incomplete_details } = outcome(this.finish);
    const out = this.start(fallbackId, 0) + this.close(status);
    const response = { ...this.shell, status, incomplete_details, output: this.output, usage: responsesUsageOf(usage) };
    return out + this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  /** An error mid-stream, as OpenAI sends one: the error event, then response.failed. */
  error(error: InboundError & { status?: number }): string {
    let out = this.event('error', {
      code: error.code === null ? null : String(error.code),
      message: error.message,
      param: error.param ?? null,
    });
    if (this.shell) {
      const code = error.code === 'rate_limit_exceeded' ? error.code : 'server_error';
      out += this.event('response.failed', {
        response: { ...this.shell, status: 'failed', error: { code, message: error.message }, output: this.output },
      });
    }
    return out;
  }
}

// ---- the passthrough stream watcher ----

/** The events whose response carries the final usage. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** Passes a Responses event stream on as it came; reads its usage (the final response's) and the text streamed. */
export class ResponsesUsageWatcher extends PassingUsageWatcher {
  private usage: Usage | undefined;

  protected readEvent(data: string): void {
    // only the events that bill: the final response and the deltas counted should it never come
    const final = data.includes('"response.completed"') || data.includes('"response.incomplete"') || data.includes('"response.failed"');
    if (!final && !data.includes('_text.delta"') && !data.includes('"response.function_call_arguments.delta"')) return;
    const parsed = parseJson(data) as { type?: string; delta?: unknown; response?: { usage?: ResponsesUsage | null } } | undefined;
    if (!parsed || typeof parsed !== 'object' || typeof parsed.type !== 'string') return;
    if (FINAL_EVENTS.has(parsed.type)) {
      const usage = parsed.response?.usage;
      if (usage && typeof usage === 'object') this.usage = usageOfResponses(usage);
    } else if (typeof parsed.delta === 'string' && parsed.type.endsWith('.delta')) this.text += parsed.delta;
  }

  reportedUsage(): Usage | undefined {
    return this.usage;
  }
}

// ---- the codec ----

const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

/** The generated text of a Response: its messages' text and its calls' arguments. */
function answerText(value: unknown): string {
  const output = (value as { output?: unknown } | undefined)?.output;
  let text = '';
  for (const item of Array.isArray(output) ? (output as Item[]) : []) {
    if (item?.type === 'message') text += itemText(item.content);
    else if (item?.type === 'function_call' && typeof item.arguments === 'string') text += item.arguments;
  }
  return text;
}

/** Fields that ask OpenAI for state it stored: the gateway stores none, so no channel could answer them. */
const STORED_STATE = ['previous_response_id', 'conversation'] as const;

export const openaiResponses = {
  protocol: 'openai-responses',
  passthroughOperation: 'responses',
  contentType: 'application/json; charset=utf-8',
  model: (_mode: TextMode, body: Record<string, unknown>) => modelOf(body),
  check(_mode, body) {
    for (const field of STORED_STATE) {
      if (body[field] !== undefined && body[field] !== null) {
        return {
          message: `${field} is not supported: this gateway does not store responses; send the whole conversation in input`,
          code: 'unsupported_parameter',
          param: field,
        };
      }
    }
    return undefined;
  },
  promptTokens: (_mode, body, model, options) =>
    options.bound ? promptBound(body, model, undefined, 1, options.contextWindow) : countResponsesPromptTokens(body, model, options),
  // a Responses stream always ends with its usage
  ...selfReportingBodyRules('max_output_tokens'),
  jsonUsage: (json) => reportedAnswerUsage(json, usageOfResponses),
  answerText,
  // nothing to strip: the gateway never asks a Responses stream for anything on the client's behalf
  watchStream: (_stripUsageEvent: boolean) => new ResponsesUsageWatcher(),
  errorBody: openAiErrorBody,
  chatRequest: chatRequestOf,
  untranslatable: uncarriedTools,
  encodeResponse,
  encodeStream: (model: string, request: Record<string, unknown>) => new ResponsesStreamEncoder(model, request),
} satisfies InboundCodec;
