// A Gemini request in the relay's chat form (what a channel that does not
// speak Gemini is sent): contents with their function calls and responses
// paired, system instruction, tools and tool config, generation settings,
// search grounding and thinking. Pure: no I/O. The codec is ./geminiNative.ts.
import { reasoningEffortOf } from './anthropicMessagesRequest';
import { isObject, uncarriedToolsReason } from '../shared';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolCall } from '../types';
import type { GeminiPart } from '../upstream/gemini';

// ---- Gemini's request shapes (lenient: only what is read) ----

interface GeminiRequestContent {
  role?: unknown;
  parts?: unknown;
}

interface FunctionDeclaration {
  name?: unknown;
  description?: unknown;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
}

interface GenerationConfig {
  temperature?: unknown;
  topP?: unknown;
  topK?: unknown;
  maxOutputTokens?: unknown;
  stopSequences?: unknown;
  candidateCount?: unknown;
  seed?: unknown;
  presencePenalty?: unknown;
  frequencyPenalty?: unknown;
  responseMimeType?: unknown;
  responseSchema?: unknown;
  responseJsonSchema?: unknown;
  thinkingConfig?: { thinkingBudget?: unknown; thinkingLevel?: unknown; includeThoughts?: unknown };
}

/** A content's parts that are objects (none when it has no list of parts). */
export const partsOf = (content: unknown): GeminiPart[] =>
  content && typeof content === 'object' && Array.isArray((content as GeminiRequestContent).parts)
    ? ((content as GeminiRequestContent).parts as GeminiPart[]).filter((part) => part && typeof part === 'object')
    : [];

/** The request's contents that are objects. */
export const contentsOf = (body: Record<string, unknown>): GeminiRequestContent[] =>
  Array.isArray(body.contents) ? (body.contents as GeminiRequestContent[]).filter((content) => content && typeof content === 'object') : [];

/** The request's generationConfig, or an empty one. */
export const configOf = (body: Record<string, unknown>): GenerationConfig =>
  body.generationConfig && typeof body.generationConfig === 'object' ? body.generationConfig : {};

/** The text of parts that are text and not thoughts. */
const textOf = (parts: GeminiPart[]) =>
  parts
    .filter((part) => typeof part.text === 'string' && !part.thought)
    .map((part) => part.text as string)
    .join('');

/** systemInstruction: a Content, or (as the SDKs also accept) a bare string. */
export function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  return partsOf(system)
    .filter((part) => typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

// ---- the request in the chat form ----

/** A part's media as a chat content part: images as image_url, audio as input_audio, other inline files as file. */
function mediaPart(part: GeminiPart): ChatContentPart | undefined {
  if (part.inlineData && typeof part.inlineData.data === 'string') {
    const mimeType = part.inlineData.mimeType || 'application/octet-stream';
    const url = `data:${mimeType};base64,${part.inlineData.data}`;
    if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url } };
    if (mimeType.startsWith('audio/'))
      return {
        type: 'input_audio',
        input_audio: {
          data: part.inlineData.data,
          format: mimeType === 'audio/mpeg' ? 'mp3' : mimeType.slice('audio/'.length).replace(/^x-/, ''),
        },
      };
    return { type: 'file', file: { file_data: url } };
  }
  // a file Google hosts (or any URL): only an image has a chat form that takes a URL
  if (part.fileData && typeof part.fileData.fileUri === 'string' && (part.fileData.mimeType ?? '').startsWith('image/')) {
    return { type: 'image_url', image_url: { url: part.fileData.fileUri } };
  }
  return undefined;
}

/** A user turn's text and media as chat content; the all-text case as a plain string. */
function userContent(parts: GeminiPart[]): string | ChatContentPart[] | undefined {
  const content: ChatContentPart[] = [];
  for (const part of parts) {
    if (typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    else {
      const media = mediaPart(part);
      if (media) content.push(media);
    }
  }
  if (content.length === 0) return undefined;
  return content.every((part) => part.type === 'text') ? content.map((part) => part.text).join('') : content;
}

/** A stable id for the n-th function call of a conversation (Gemini gives calls none). */
const callId = (number: number, name: string) => `call_${number}_${name.replace(/[^A-Za-z0-9_-]/g, '')}`.slice(0, 40);

/** The function calls of a conversation so far: how many were made, and those not answered yet (oldest first). */
interface CallBook {
  made: number;
  unanswered: Array<{ id: string; name: string }>;
}

/** A model turn as an assistant message: its functionCall parts as tool_calls, each entered in the book. */
function modelMessage(parts: GeminiPart[], book: CallBook): ChatMessage {
  const toolCalls: ChatToolCall[] = [];
  for (const part of parts) {
    const call = part.functionCall;
    if (!call || typeof call.name !== 'string') continue;
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : callId(book.made, call.name);
    book.made += 1;
    book.unanswered.push({ id, name: call.name });
    toolCalls.push({ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
  }
  const text = textOf(parts);
  const assistant: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  return assistant;
}

/** The id of the call a functionResponse answers (its own id's, else the earliest unanswered of its name), taken off the book. */
function answeredCallId(result: NonNullable<GeminiPart['functionResponse']>, book: CallBook): string {
  const { unanswered } = book;
  const byId = typeof result.id === 'string' ? unanswered.findIndex((call) => call.id === result.id) : -1;
  const index = byId !== -1 ? byId : unanswered.findIndex((call) => call.name === result.name);
  if (index !== -1) return unanswered.splice(index, 1)[0].id;
  // an answer to a call the history does not show: its own id, or a fresh one
  const id = typeof result.id === 'string' && result.id !== '' ? result.id : callId(book.made, result.name);
  book.made += 1;
  return id;
}

/** A user turn: function results first (they answer the previous turn's calls), then what the user added. */
function userMessages(parts: GeminiPart[], book: CallBook): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const part of parts) {
    const result = part.functionResponse;
    if (!result || typeof result.name !== 'string') continue;
    messages.push({ role: 'tool', tool_call_id: answeredCallId(result, book), content: JSON.stringify(result.response ?? {}) });
  }
  const added = userContent(parts.filter((part) => !part.functionResponse));
  if (added !== undefined) messages.push({ role: 'user', content: added });
  return messages;
}

/** Gemini contents as chat messages: functionCall parts → assistant tool_calls, functionResponse parts → tool messages. */
function chatMessages(contents: GeminiRequestContent[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const book: CallBook = { made: 0, unanswered: [] };
  for (const content of contents) {
    const parts = partsOf(content);
    if (content.role === 'model') messages.push(modelMessage(parts, book));
    else messages.push(...userMessages(parts, book));
  }
  return messages;
}

/** Keywords whose values are data, not schemas: kept as they are. */
const SCHEMA_DATA = new Set(['enum', 'required', 'const', 'default', 'example', 'examples']);

const typeName = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

/**
 * Gemini's Schema (OpenAPI types in capitals: "OBJECT", "STRING") as JSON
 * Schema. The JSON-Schema fields (`responseJsonSchema`, `parametersJsonSchema`)
 * go through it too: Gemini reads type names in either case, so clients send
 * capitals there as well, which a strict JSON Schema validator refuses.
 */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'type') out[key] = Array.isArray(value) ? value.map(typeName) : typeName(value);
    else if (SCHEMA_DATA.has(key)) out[key] = value;
    // property names are the client's own words (a property may be called "type" or "enum")
    else if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, jsonSchemaOf(property)]));
    else out[key] = jsonSchemaOf(value);
  }
  return out;
}

/** Google Search grounding, in either spelling (and the 1.5 models' googleSearchRetrieval): chat's `web_search_options`. */
const SEARCH_TOOLS = new Set(['googleSearch', 'google_search', 'googleSearchRetrieval', 'google_search_retrieval']);

/** Google's own tools (codeExecution, urlContext...): a tool entry holds them beside or instead of declarations. Search travels as chat's `web_search_options`. */
export function uncarriedTools(body: Record<string, unknown>): string | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  const names = tools.flatMap((tool) =>
    tool && typeof tool === 'object'
      ? Object.keys(tool).filter((key) => key !== 'functionDeclarations' && key !== 'function_declarations' && !SEARCH_TOOLS.has(key))
      : [],
  );
  return uncarriedToolsReason(names);
}

const asksSearch = (tools: unknown) =>
  Array.isArray(tools) && (tools as unknown[]).some((tool) => isObject(tool) && Object.keys(tool).some((key) => SEARCH_TOOLS.has(key)));

function chatTools(tools: unknown): ChatTool[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const declarations = tools.flatMap((tool) =>
    tool && typeof tool === 'object' && Array.isArray((tool as { functionDeclarations?: unknown }).functionDeclarations)
      ? (tool as { functionDeclarations: FunctionDeclaration[] }).functionDeclarations
      : [],
  );
  const mapped = declarations
    .filter((declaration) => declaration && typeof declaration.name === 'string')
    .map((declaration) => {
      const schema = declaration.parametersJsonSchema ?? declaration.parameters;
      const parameters = schema ? jsonSchemaOf(schema) : undefined;
      return {
        type: 'function' as const,
        function: {
          name: declaration.name as string,
          ...(typeof declaration.description === 'string' ? { description: declaration.description } : {}),
          parameters: (parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
        },
      };
    });
  return mapped.length > 0 ? mapped : undefined;
}

function toolChoice(toolConfig: unknown): ChatRequest['tool_choice'] | undefined {
  const config = (toolConfig as { functionCallingConfig?: { mode?: unknown; allowedFunctionNames?: unknown } } | undefined)
    ?.functionCallingConfig;
  if (!config || typeof config !== 'object') return undefined;
  const allowed = Array.isArray(config.allowedFunctionNames)
    ? config.allowedFunctionNames.filter((name): name is string => typeof name === 'string')
    : [];
  switch (config.mode) {
    case 'NONE':
      return 'none';
    case 'ANY':
      // chat can force one function, or any: several allowed names are "any"
      return allowed.length === 1 ? { type: 'function', function: { name: allowed[0] } } : 'required';
    case 'AUTO':
    case 'VALIDATED':
      return 'auto';
    default:
      return undefined;
  }
}

/** Gemini's thinking settings as OpenAI's reasoning_effort (the one knob every adaptor reads); a budget of 0 asks for none. */
function reasoningEffort(thinking: GenerationConfig['thinkingConfig']): ChatRequest['reasoning_effort'] {
  if (!thinking || typeof thinking !== 'object') return undefined;
  const level = typeof thinking.thinkingLevel === 'string' ? thinking.thinkingLevel.toLowerCase() : '';
  if (level === 'minimal' || level === 'low') return 'low';
  if (level === 'medium' || level === 'high') return level;
  const budget = thinking.thinkingBudget;
  if (typeof budget !== 'number' || budget === 0) return undefined;
  // -1: the model decides how much; the middle level says the same
  if (budget < 0) return 'medium';
  return reasoningEffortOf({ type: 'enabled', budget_tokens: budget });
}

/** A Gemini request in the relay's chat form (what a channel that does not speak Gemini is sent). */
export function chatRequestOf(body: Record<string, unknown>, call: { model: string; streamed: boolean }): ChatRequest {
  const messages = chatMessages(contentsOf(body));
  const system = systemText(body.systemInstruction);
  if (system !== '') messages.unshift({ role: 'system', content: system });
  const request: ChatRequest = { model: call.model, messages };
  if (call.streamed) request.stream = true;
  const config = configOf(body);
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const set = <Field extends 'max_tokens' | 'temperature' | 'top_p' | 'top_k' | 'n' | 'seed' | 'presence_penalty' | 'frequency_penalty'>(
    field: Field,
    value: unknown,
  ) => {
    const read = number(value);
    if (read !== undefined) request[field] = read;
  };
  set('max_tokens', config.maxOutputTokens);
  set('temperature', config.temperature);
  set('top_p', config.topP);
  set('top_k', config.topK);
  // one answer is chat's default: n is sent only when more are asked
  if ((number(config.candidateCount) ?? 1) > 1) set('n', config.candidateCount);
  set('seed', config.seed);
  set('presence_penalty', config.presencePenalty);
  set('frequency_penalty', config.frequencyPenalty);
  if (Array.isArray(config.stopSequences) && config.stopSequences.length > 0)
    request.stop = config.stopSequences.filter((stop): stop is string => typeof stop === 'string');
  if (config.responseMimeType === 'application/json') {
    const given = config.responseJsonSchema ?? config.responseSchema;
    const schema = given ? jsonSchemaOf(given) : undefined;
    request.response_format = schema ? { type: 'json_schema', json_schema: { name: 'response', schema } } : { type: 'json_object' };
  }
  const tools = chatTools(body.tools);
  if (tools) {
    request.tools = tools;
    const choice = toolChoice(body.toolConfig);
    if (choice) request.tool_choice = choice;
  }
  if (asksSearch(body.tools)) request.web_search_options = {};
  const effort = reasoningEffort(config.thinkingConfig);
  if (effort) request.reasoning_effort = effort;
  return request;
}
