// A Responses request in the relay's chat form (what a channel that does not
// serve Responses is sent): input items as messages, function tools (those in
// namespaces under flat names) and their calls and outputs, tool choice, text
// format, web search and reasoning effort. Pure: no I/O. The codec is
// ./openaiResponses.ts.
import { textOf, uncarriedToolsReason } from '../shared';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool } from '../types';

/** A Responses item, content part or tool (lenient: only what is read). */
export type Item = Record<string, unknown> & { type?: string };

/** The text of a content list (input_text, output_text, refusal parts), or the string itself. */
export function itemText(content: unknown): string {
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
function chatRole(role: unknown): 'assistant' | 'system' | 'user' {
  if (role === 'assistant') return 'assistant';
  return role === 'system' || role === 'developer' ? 'system' : 'user';
}

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
export function uncarriedTools(body: Record<string, unknown>): string | undefined {
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
