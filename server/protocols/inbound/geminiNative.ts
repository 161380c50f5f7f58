// The Gemini client side of the relay (`POST /v1beta/models/{model}:generateContent`
// and `:streamGenerateContent?alt=sse`, what @google/genai and Google's other
// SDKs call): https://ai.google.dev/api/generate-content. Pure: no I/O.
//
// Unlike OpenAI's and Anthropic's, a Gemini body names neither the model nor
// whether to stream: both are in the path (`models/{model}:{method}`), which the
// route reads (server/routes/v1/geminiNative.ts) and hands over as `pathModel`
// and `pathMethod`. So for a channel that speaks Gemini (types 24 and 11) the
// client's bytes go on as they are: the channel's adaptor writes the upstream
// model and method into the URL; only a limit the balance lowered rewrites
// `generationConfig.maxOutputTokens`. The answer's usage is read as it passes:
// the JSON `usageMetadata`, or the last SSE event's (Google's figures are
// cumulative, the last event's are the whole answer's).
//
// For any other channel the request is decoded into the relay's chat form
// (`chatRequest`) and the decoded answer written back as Gemini's
// (`encodeResponse`, `encodeStream`: `data: {...}\r\n\r\n` events each with the
// candidates' new parts, the finish reason and usage on the last).
//
// Gemini's function calls carry no ids (newer models sometimes send one): a
// call in the history gets a stable one from its place in the conversation and
// its name, and a functionResponse goes to the earliest unanswered call of its
// name (or its own id when it has one).
//
// Usage: thoughtsTokenCount is output, toolUsePromptTokenCount input, as the
// upstream adaptor reads them (../upstream/gemini `usageOfGemini`, its json.ts usageOf).
import type { IncomingHttpHeaders } from 'node:http';
import { reasoningEffortOf } from './anthropicMessages';
import { topLevelObjectField } from './jsonField';
import { promptBound } from './promptBound';
import { countPartTokens, countTextTokens, type CountOptions } from './tokenCount';
import { PassingUsageWatcher } from './passingWatcher';
import type { InboundCodec, InboundError, JsonAnswer, TextMode } from './types';
import { count, isObject, MAX_TOKENS_LIMIT, parseJson, uncarriedToolsReason } from '../shared';
import type {
  ChatChunk,
  ChatContentPart,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatToolCall,
  FinishReason,
  Usage,
} from '../types';
import { decodeGeminiParts, usageOfGemini, type GeminiPart, type GeminiResponse, type GeminiUsageMetadata } from '../upstream/gemini';

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

const partsOf = (content: unknown): GeminiPart[] =>
  content && typeof content === 'object' && Array.isArray((content as GeminiRequestContent).parts)
    ? ((content as GeminiRequestContent).parts as GeminiPart[]).filter((part) => part && typeof part === 'object')
    : [];

const contentsOf = (body: Record<string, unknown>): GeminiRequestContent[] =>
  Array.isArray(body.contents) ? (body.contents as GeminiRequestContent[]).filter((content) => content && typeof content === 'object') : [];

const configOf = (body: Record<string, unknown>): GenerationConfig =>
  body.generationConfig && typeof body.generationConfig === 'object' ? body.generationConfig : {};

/**
 * What Google would refuse in the request's structure, named as it names it:
 * a content that is not an object with a list of part objects, tools that are
 * not a list of objects, a function declaration without a name. Refused here,
 * before anything is held, so a channel that passes bytes never carries them
 * (Google answers 400 INVALID_ARGUMENT; a lenient proxy might answer worse).
 */
function shapeProblem(body: Record<string, unknown>): string | undefined {
  const contents = body.contents as unknown[];
  for (const [index, content] of contents.entries()) {
    if (!isObject(content) || !Array.isArray(content.parts))
      return `* GenerateContentRequest.contents[${index}].parts: must be a list of parts`;
    if (content.parts.some((part) => !isObject(part)))
      return `* GenerateContentRequest.contents[${index}].parts: each part must be an object`;
  }
  if (
    body.systemInstruction !== undefined &&
    typeof body.systemInstruction !== 'string' &&
    !(isObject(body.systemInstruction) && Array.isArray(body.systemInstruction.parts))
  ) {
    return '* GenerateContentRequest.system_instruction: must be a content with parts';
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return '* GenerateContentRequest.tools: must be a list of tools';
    for (const [index, tool] of body.tools.entries()) {
      if (!isObject(tool)) return `* GenerateContentRequest.tools[${index}]: must be a tool object`;
      const declarations = tool.functionDeclarations ?? tool.function_declarations;
      if (declarations === undefined) continue;
      if (
        !Array.isArray(declarations) ||
        declarations.some((declaration) => !isObject(declaration) || typeof declaration.name !== 'string' || declaration.name === '')
      ) {
        return `* GenerateContentRequest.tools[${index}].function_declarations: each must be an object with a name`;
      }
    }
  }
  if (body.generationConfig !== undefined && !isObject(body.generationConfig))
    return '* GenerateContentRequest.generation_config: must be an object';
  return undefined;
}

/** The text of parts that are text and not thoughts. */
const textOf = (parts: GeminiPart[]) =>
  parts
    .filter((part) => typeof part.text === 'string' && !part.thought)
    .map((part) => part.text as string)
    .join('');

/** systemInstruction: a Content, or (as the SDKs also accept) a bare string. */
function systemText(system: unknown): string {
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

/** Gemini contents as chat messages: functionCall parts → assistant tool_calls, functionResponse parts → tool messages. */
function chatMessages(contents: GeminiRequestContent[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // calls made and not answered yet, oldest first: a functionResponse answers the first of its name
  const unanswered: Array<{ id: string; name: string }> = [];
  let calls = 0;
  for (const content of contents) {
    const parts = partsOf(content);
    if (content.role === 'model') {
      const toolCalls: ChatToolCall[] = [];
      for (const part of parts) {
        const call = part.functionCall;
        if (!call || typeof call.name !== 'string') continue;
        const id = typeof call.id === 'string' && call.id !== '' ? call.id : callId(calls, call.name);
        calls += 1;
        unanswered.push({ id, name: call.name });
        toolCalls.push({ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
      }
      const text = textOf(parts);
      const assistant: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
      if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
      messages.push(assistant);
      continue;
    }
    // a user turn: function results first (they answer the previous turn's calls), then what the user added
    for (const part of parts) {
      const result = part.functionResponse;
      if (!result || typeof result.name !== 'string') continue;
      const byId = typeof result.id === 'string' ? unanswered.findIndex((call) => call.id === result.id) : -1;
      const index = byId !== -1 ? byId : unanswered.findIndex((call) => call.name === result.name);
      let id: string;
      if (index === -1) {
        // an answer to a call the history does not show: its own id, or a fresh one
        id = typeof result.id === 'string' && result.id !== '' ? result.id : callId(calls, result.name);
        calls += 1;
      } else {
        id = unanswered[index].id;
        unanswered.splice(index, 1);
      }
      messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(result.response ?? {}) });
    }
    const added = userContent(parts.filter((part) => !part.functionResponse));
    if (added !== undefined) messages.push({ role: 'user', content: added });
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
function uncarriedTools(body: Record<string, unknown>): string | undefined {
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

// ---- counting ----

/** The prompt's tokens: system, every part's text, function calls and results, tool declarations; 3 per turn and 3 to prime the reply. */
export function countGeminiPromptTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  const texts: string[] = [systemText(body.systemInstruction)];
  let total = 3;
  for (const content of contentsOf(body)) {
    total += 3;
    for (const part of partsOf(content)) {
      if (typeof part.text === 'string') texts.push(part.text);
      else if (part.inlineData || part.fileData) total += countPartTokens(part, model, options);
      else if (part.functionCall) texts.push(String(part.functionCall.name ?? ''), JSON.stringify(part.functionCall.args ?? {}));
      else if (part.functionResponse)
        texts.push(String(part.functionResponse.name ?? ''), JSON.stringify(part.functionResponse.response ?? {}));
    }
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return total + countTextTokens(texts.join('\n'), model, options);
}

// ---- errors ----

/** Google's canonical status name for an HTTP status (https://ai.google.dev/gemini-api/docs/troubleshooting). */
export function googleStatus(status: number | undefined): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status !== undefined && status >= 400 && status < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL';
  }
}

export const googleErrorBody = (error: InboundError & { status?: number }) => {
  const status = error.status ?? 500;
  return JSON.stringify({ error: { code: status, message: error.message, status: googleStatus(status) } });
};

// ---- answers written back (the translated path) ----

function geminiFinishReason(finish: FinishReason | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      // Gemini ends an answer that calls functions with STOP too
      return 'STOP';
  }
}

/** The relay's usage as Google reports it: thoughts apart from the candidates' tokens. */
export function geminiUsageMetadataOf(usage: Usage): GeminiUsageMetadata {
  const thoughts = usage.reasoningTokens ?? 0;
  const metadata: GeminiUsageMetadata = {
    promptTokenCount: usage.promptTokens,
    candidatesTokenCount: Math.max(0, usage.completionTokens - thoughts),
    totalTokenCount: usage.promptTokens + usage.completionTokens,
  };
  if (usage.cachedPromptTokens > 0) metadata.cachedContentTokenCount = usage.cachedPromptTokens;
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  return metadata;
}

function argsOf(text: string): Record<string, unknown> {
  const parsed = parseJson(text || '{}');
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

const functionCallPart = (call: { id?: string; name: string; arguments: string }): GeminiPart => ({
  functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: argsOf(call.arguments) },
});

/** A whole chat answer as a GenerateContentResponse (one candidate per choice). */
export function encodeResponse(chat: ChatResponse, usage: Usage, model: string): string {
  const candidates = chat.choices.map((choice) => {
    const parts: GeminiPart[] = [];
    if (choice.message.reasoning_content) parts.push({ text: choice.message.reasoning_content, thought: true });
    if (choice.message.content) parts.push({ text: choice.message.content });
    for (const call of choice.message.tool_calls ?? [])
      parts.push(functionCallPart({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
    if (parts.length === 0) parts.push({ text: '' });
    return { content: { role: 'model', parts }, finishReason: geminiFinishReason(choice.finish_reason), index: choice.index };
  });
  const answer: GeminiResponse & { usageMetadata: GeminiUsageMetadata } = {
    candidates,
    usageMetadata: geminiUsageMetadataOf(usage),
    modelVersion: model || chat.model,
    responseId: chat.id,
  };
  return JSON.stringify(answer);
}

const sseEvent = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/**
 * Writes chat chunks as Gemini's event stream: an event per chunk with text,
 * function calls whole (chat streams their arguments in pieces; Gemini sends a
 * call in one part) and the finish reasons and usage in the closing event.
 */
export class GenerateContentStreamEncoder {
  private id: string | undefined;
  /** Per candidate, its function calls as they build up, by their chat index. */
  private readonly calls = new Map<number, Map<number, { id?: string; name: string; arguments: string }>>();
  private readonly finishes = new Map<number, FinishReason>();
  private readonly seen = new Set<number>();

  constructor(private readonly model: string) {}

  private event(candidates: unknown[], usage: Usage | undefined, fallbackId: string): string {
    this.id ??= fallbackId;
    return sseEvent({
      candidates,
      ...(usage ? { usageMetadata: geminiUsageMetadataOf(usage) } : {}),
      modelVersion: this.model,
      responseId: this.id,
    });
  }

  /** The events for these chunks ('' when they carry nothing to send). */
  chunks(chunks: readonly ChatChunk[], usage: Usage | undefined, fallbackId: string): string {
    let out = '';
    for (const chunk of chunks) {
      this.id ??= chunk.id || fallbackId;
      const candidates: unknown[] = [];
      for (const choice of chunk.choices) {
        const { delta } = choice;
        this.seen.add(choice.index);
        const parts: GeminiPart[] = [];
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '')
          parts.push({ text: delta.reasoning_content, thought: true });
        if (typeof delta.content === 'string' && delta.content !== '') parts.push({ text: delta.content });
        for (const call of delta.tool_calls ?? []) {
          let calls = this.calls.get(choice.index);
          if (!calls) this.calls.set(choice.index, (calls = new Map<number, { id?: string; name: string; arguments: string }>()));
          const building = calls.get(call.index);
          if (!building) calls.set(call.index, { id: call.id, name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' });
          else {
            if (call.id) building.id = call.id;
            if (call.function?.name) building.name += call.function.name;
            if (call.function?.arguments) building.arguments += call.function.arguments;
          }
        }
        if (choice.finish_reason) this.finishes.set(choice.index, choice.finish_reason);
        if (parts.length > 0) candidates.push({ content: { role: 'model', parts }, index: choice.index });
      }
      if (candidates.length > 0) out += this.event(candidates, usage, fallbackId);
    }
    return out;
  }

  /** The closing event of a complete answer: each candidate's function calls and finish reason, and the usage. */
  end(usage: Usage, fallbackId: string): string {
    const indexes = [...new Set([0, ...this.seen])].sort((a, b) => a - b);
    const candidates = indexes.map((index) => {
      const calls = [...(this.calls.get(index)?.entries() ?? [])].sort(([a], [b]) => a - b).map(([, call]) => functionCallPart(call));
      // Google's last event carries a part too: an empty text when nothing is left to say
      return {
        content: { role: 'model', parts: calls.length > 0 ? calls : [{ text: '' }] },
        finishReason: geminiFinishReason(this.finishes.get(index)),
        index,
      };
    });
    return this.event(candidates, usage, fallbackId);
  }

  /** An error mid-stream, as Google sends one. */
  error(error: InboundError & { status?: number }): string {
    return `data: ${googleErrorBody(error)}\r\n\r\n`;
  }
}

// ---- the passthrough stream watcher ----

/** Passes Gemini's event stream on as it came; reads its usage (the last event's) and text. */
export class GenerateContentUsageWatcher extends PassingUsageWatcher {
  private usage: GeminiUsageMetadata | undefined;
  /** Google's figures are the whole answer's only once it finished (or the prompt was blocked). */
  private finished = false;

  protected readEvent(data: string): void {
    const parsed = parseJson(data) as GeminiResponse | undefined;
    if (!parsed || typeof parsed !== 'object') return;
    if (parsed.usageMetadata && typeof parsed.usageMetadata === 'object') this.usage = parsed.usageMetadata;
    if (parsed.promptFeedback?.blockReason) this.finished = true;
    for (const candidate of Array.isArray(parsed.candidates) ? parsed.candidates : []) {
      this.text += decodeGeminiParts(candidate?.content?.parts).text;
      if (candidate?.finishReason) this.finished = true;
    }
  }

  reportedUsage(): Usage | undefined {
    return this.finished && this.usage ? streamUsageOf(this.usage) : undefined;
  }
}

// ---- the codec ----

function streamUsageOf(metadata: GeminiUsageMetadata): Usage {
  const { promptTokens, completionTokens, cachedPromptTokens } = usageOfGemini(metadata);
  return { promptTokens, completionTokens, cachedPromptTokens };
}

function reportedJsonUsage(json: JsonAnswer): Usage | undefined {
  const read = topLevelObjectField(json.bytes, 'usageMetadata');
  const metadata = (
    'found' in read ? (read.found ? read.value : undefined) : (json.value as { usageMetadata?: unknown } | undefined)?.usageMetadata
  ) as GeminiUsageMetadata | null | undefined;
  if (!metadata || typeof metadata !== 'object') return undefined;
  const billed = streamUsageOf(metadata);
  return billed.promptTokens + billed.completionTokens > 0 ? billed : undefined;
}

function answerText(value: unknown): string {
  const candidates = (value as GeminiResponse | undefined)?.candidates;
  return Array.isArray(candidates) ? candidates.map((candidate) => decodeGeminiParts(candidate?.content?.parts).text).join('') : '';
}

/** `x-goog-api-key` (Google's own header; the route puts a `?key=` there too), else the Authorization header as it is. */
function authorization(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-goog-api-key'];
  if (typeof key === 'string' && key !== '') return `Bearer ${key}`;
  const header = headers.authorization;
  return typeof header === 'string' ? header : undefined;
}

/** The methods of `models/{model}:{method}` this codec serves, and whether each streams. */
export const GEMINI_METHODS: Readonly<Record<string, { streamed: boolean }>> = {
  generateContent: { streamed: false },
  streamGenerateContent: { streamed: true },
};

export const geminiNative = {
  protocol: 'gemini',
  contentType: 'application/json',
  authorization,
  model: (_mode: TextMode, _body: Record<string, unknown>, pathModel: string | undefined) => (pathModel ?? '').trim(),
  check(_mode, body) {
    if (contentsOf(body).length === 0)
      return { message: '* GenerateContentRequest.contents: contents is not specified', code: 'INVALID_ARGUMENT' };
    const malformed = shapeProblem(body);
    if (malformed) return { message: malformed, code: 'INVALID_ARGUMENT' };
    const limit = configOf(body).maxOutputTokens;
    if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_TOKENS_LIMIT)) {
      return {
        message: `* GenerateContentRequest.generation_config.max_output_tokens: must be an integer from 1 to ${MAX_TOKENS_LIMIT}`,
        code: 'INVALID_ARGUMENT',
      };
    }
    return undefined;
  },
  promptTokens: (_mode, body, model, options) =>
    options.bound ? promptBound(body, model, undefined, 1, options.contextWindow) : countGeminiPromptTokens(body, model, options),
  outputLimit: (body) => count(configOf(body).maxOutputTokens),
  answers: (_mode, body) => count(configOf(body).candidateCount) || 1,
  streamed: (_body, pathMethod) => GEMINI_METHODS[pathMethod ?? '']?.streamed === true,
  // Gemini's stream always reports its usage
  streamUsageAskable: () => false,
  clientAskedUsage: () => false,
  // the body names no model: the channel's adaptor writes the upstream's into the path
  modelUnchanged: (_body, _upstreamModel) => true,
  encodeChanged: (body, change) =>
    JSON.stringify(
      change.outputLimit === undefined ? body : { ...body, generationConfig: { ...configOf(body), maxOutputTokens: change.outputLimit } },
    ),
  jsonUsage: reportedJsonUsage,
  answerText,
  watchStream: (_stripUsageEvent: boolean) => new GenerateContentUsageWatcher(),
  errorBody: googleErrorBody,
  chatRequest: chatRequestOf,
  untranslatable: uncarriedTools,
  encodeResponse,
  encodeStream: (model: string) => new GenerateContentStreamEncoder(model),
} satisfies InboundCodec;
