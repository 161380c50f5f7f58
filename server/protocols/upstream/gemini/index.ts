// Google's Gemini API (generativelanguage.googleapis.com), native protocol:
// https://ai.google.dev/api/generate-content and https://ai.google.dev/api/embeddings
// Serves channel type 24 (Gemini) and type 11 (Google PaLM2: PaLM is retired
// upstream, so a PaLM key relays through Gemini's API).
//
// Choices worth knowing:
// - The key travels in `x-goog-api-key`, never in the query string (URLs end up in logs).
// - System and developer messages become `systemInstruction`, never a fake user turn + "Okay".
// - A prompt Google blocks (promptFeedback.blockReason, no candidates) becomes an answer with
//   `finish_reason: "content_filter"` and empty content, billed with the usage Google reports:
//   the same thing OpenAI clients see when an answer is filtered, and no retry on another
//   channel (the prompt would be blocked there too).
// - Gemini reports no token usage for embeddings: decodeEmbeddings reports `prompt_tokens: 0`
//   unless the answer carries `usageMetadata`, and the relay counts the input itself then.
// - Gemini 3 rejects a replayed function call without its `thoughtSignature`; the signature
//   rides on the tool call as `extra_content.google.thought_signature` (the field Google's own
//   OpenAI-compatible endpoint uses), and comes back from it.
import { findChannelType } from '../../../../common/channelTypes';
import { SseParser, contentText, count, dataUrl, openAiUsage, parseJson, trimmedBaseUrl, upstreamFailure } from '../../shared';
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

const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com';

// ---- Gemini's wire shapes (lenient: only what we read or write) ----

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: GoogleError;
}

interface GoogleError {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; reason?: string }>;
}

/** A tool call as we hand it out: OpenAI's, plus the Gemini 3 thought signature when there is one. */
type SignedToolCall = ChatToolCall & { extra_content?: { google?: { thought_signature?: string } } };

// ---- target ----

function baseUrl(channel: ChannelConfig): string {
  const base = trimmedBaseUrl(channel.baseUrl, findChannelType(channel.type)?.defaultBaseUrl, GOOGLE_BASE_URL);
  // a base pasted with its version (".../v1beta") is taken as it is
  return /\/v1(beta|alpha)?\d*$/.test(base) ? base : `${base}/v1beta`;
}

/** `models/<model>` (or a tuned model's own resource name), each segment escaped. */
function modelResource(model: string): string {
  const name = /^(models|tunedModels)\//.test(model) ? model : `models/${model}`;
  return name.split('/').map(encodeURIComponent).join('/');
}

function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  const key = channel.key.trim();
  if (!key) return upstreamFailure(401, 'the channel has no Gemini API key', { code: 'API_KEY_INVALID', deadKey: true });
  let method: string;
  if (call.operation === 'chat') method = call.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  else if (call.operation === 'embeddings') method = 'batchEmbedContents';
  else return upstreamFailure(400, `Gemini channels do not offer ${call.operation}`, { code: 'operation_unsupported', retryable: true });
  return {
    url: `${baseUrl(channel)}/${modelResource(call.model)}:${method}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
  };
}

// ---- request encoding ----

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
};

function imageMimeType(url: string): string {
  const path = url.split(/[?#]/)[0];
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (extension && IMAGE_TYPES[extension]) || 'image/jpeg';
}

function mediaPart(url: string, fallbackType: (url: string) => string): GeminiPart {
  const inline = dataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  return { fileData: { mimeType: fallbackType(url), fileUri: url } };
}

function contentParts(content: ChatMessage['content']): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const parts: GeminiPart[] = [];
  for (const part of content as ChatContentPart[]) {
    if (!part || typeof part !== 'object') continue;
    if (part.type === 'text' && typeof part.text === 'string') {
      parts.push({ text: part.text });
    } else if (part.type === 'image_url' && part.image_url?.url) {
      parts.push(mediaPart(part.image_url.url, imageMimeType));
    } else if (part.type === 'input_audio') {
      const audio = part.input_audio as { data?: string; format?: string } | undefined;
      if (audio?.data) parts.push({ inlineData: { mimeType: `audio/${audio.format || 'wav'}`, data: audio.data } });
    } else if (part.type === 'file') {
      const file = part.file as { file_data?: string } | undefined;
      const inline = file?.file_data ? dataUrl(file.file_data) : undefined;
      if (inline) parts.push({ inlineData: { mimeType: inline.mediaType, data: inline.data } });
    }
  }
  return parts;
}

/** A JSON object from a tool call's arguments or a tool's answer (Gemini wants a Struct). */
function jsonObject(text: string): Record<string, unknown> | undefined {
  const value = parseJson(text);
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

// The keys of Gemini's Schema (an OpenAPI 3.0 subset); anything else (additionalProperties,
// $schema, strict, const, examples...) makes Google refuse the whole request.
const SCHEMA_KEYS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
]);
// Google accepts only these formats; `uri`, `email` and the like are refused.
const SCHEMA_FORMATS: Record<string, ReadonlySet<string>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};

type JsonSchema = Record<string, unknown>;

/** A JSON Schema made acceptable to Gemini: unknown keys dropped, local $refs inlined, type unions read. */
function cleanSchema(schema: unknown, root: JsonSchema, depth = 0): JsonSchema | undefined {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || depth > 24) return undefined;
  let node = schema as JsonSchema;
  if (typeof node.$ref === 'string') {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(node.$ref);
    const definitions = match ? (root[match[1]] as Record<string, unknown> | undefined) : undefined;
    const resolved = match && definitions ? definitions[decodeURIComponent(match[2])] : undefined;
    if (!resolved) return undefined;
    const { $ref: _ref, ...rest } = node;
    node = { ...(resolved as JsonSchema), ...rest };
  }
  const clean: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (!SCHEMA_KEYS.has(key)) continue;
    if (key === 'properties') {
      if (!value || typeof value !== 'object') continue;
      const properties: Record<string, JsonSchema> = {};
      for (const [name, property] of Object.entries(value as Record<string, unknown>)) {
        const cleaned = cleanSchema(property, root, depth + 1);
        if (cleaned) properties[name] = cleaned;
      }
      if (Object.keys(properties).length > 0) clean.properties = properties;
    } else if (key === 'items') {
      const cleaned = cleanSchema(value, root, depth + 1);
      if (cleaned) clean.items = cleaned;
    } else if (key === 'anyOf') {
      if (!Array.isArray(value)) continue;
      const options = value.map((option) => cleanSchema(option, root, depth + 1)).filter((option): option is JsonSchema => option !== undefined);
      if (options.length > 0) clean.anyOf = options;
    } else if (key === 'type' && Array.isArray(value)) {
      // ["string", "null"]: Gemini says the same with nullable
      const types = value.filter((type) => type !== 'null');
      if (types.length < value.length) clean.nullable = true;
      if (types.length === 1) clean.type = types[0];
      else if (types.length > 1) clean.anyOf = types.map((type) => ({ type }));
    } else {
      clean[key] = value;
    }
  }
  if (node.const !== undefined && clean.enum === undefined && typeof node.const === 'string') clean.enum = [node.const];
  if (Array.isArray(node.oneOf) && clean.anyOf === undefined) {
    const options = node.oneOf.map((option) => cleanSchema(option, root, depth + 1)).filter((option): option is JsonSchema => option !== undefined);
    if (options.length > 0) clean.anyOf = options;
  }
  if (typeof clean.format === 'string' && !SCHEMA_FORMATS[String(clean.type)]?.has(clean.format)) delete clean.format;
  if (Array.isArray(clean.required) && clean.properties) {
    const known = clean.properties as Record<string, unknown>;
    clean.required = (clean.required as unknown[]).filter((name) => typeof name === 'string' && name in known);
    if ((clean.required as unknown[]).length === 0) delete clean.required;
  } else {
    delete clean.required;
  }
  return clean;
}

/** A function's parameters for Gemini; undefined for a function that takes none (Google refuses an empty object). */
function functionParameters(parameters: Record<string, unknown> | undefined): JsonSchema | undefined {
  if (!parameters) return undefined;
  const clean = cleanSchema(parameters, parameters);
  if (!clean) return undefined;
  if ((clean.type === 'object' || clean.type === undefined) && !clean.properties && !clean.anyOf) return undefined;
  return clean;
}

// OpenAI's reasoning_effort in Gemini's terms, as Google's OpenAI-compatible endpoint maps it:
// a thinking budget for the 2.5 models, a thinking level for Gemini 3. Models that do not think
// refuse a thinkingConfig, so they get none.
const THINKING_BUDGETS: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 };

function thinkingConfig(effort: unknown, model: string): Record<string, unknown> | undefined {
  if (typeof effort !== 'string' || !(effort in THINKING_BUDGETS)) return undefined;
  if (/^(models\/)?gemini-3/.test(model)) return { thinkingLevel: effort === 'medium' || effort === 'high' ? 'high' : 'low' };
  // 2.5 Pro cannot stop thinking: its smallest budget (128) is the nearest thing to none
  if (/^(models\/)?gemini-2\.5-pro/.test(model)) return { thinkingBudget: Math.max(128, THINKING_BUDGETS[effort]) };
  if (/^(models\/)?gemini-2\.5/.test(model)) return { thinkingBudget: THINKING_BUDGETS[effort] };
  return undefined;
}

const THOUGHT_SIGNATURE_SKIP = 'skip_thought_signature_validator';

function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();
  // Gemini 3 refuses replayed function calls without a signature; Google documents this value for calls it did not sign
  const needsSignature = /^(models\/)?gemini-3/.test(call.model);

  const append = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  for (const message of request.messages ?? []) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(message.content).filter((part) => part.text !== undefined));
        break;
      case 'assistant': {
        const parts = contentParts(message.content);
        let first = true;
        for (const toolCall of (message.tool_calls ?? []) as SignedToolCall[]) {
          if (!toolCall?.function?.name) continue;
          toolNames.set(toolCall.id, toolCall.function.name);
          const part: GeminiPart = { functionCall: { name: toolCall.function.name, args: jsonObject(toolCall.function.arguments) ?? {} } };
          const signature = toolCall.extra_content?.google?.thought_signature;
          if (signature) part.thoughtSignature = signature;
          else if (needsSignature && first) part.thoughtSignature = THOUGHT_SIGNATURE_SKIP;
          first = false;
          parts.push(part);
        }
        append('model', parts);
        break;
      }
      case 'tool':
      case 'function': {
        const name = (message.tool_call_id && toolNames.get(message.tool_call_id)) || message.name || '';
        const text = contentText(message.content);
        const response = jsonObject(text) ?? { content: parseJson(text) ?? text };
        append('user', [{ functionResponse: { name, response } }]);
        break;
      }
      default:
        append('user', contentParts(message.content));
    }
  }

  const body: Record<string, unknown> = {};
  if (contents.length === 0 && system.length > 0) {
    // nothing but instructions: they are the prompt (Google refuses a request without contents)
    body.contents = [{ role: 'user', parts: system }];
  } else {
    body.contents = contents;
    if (system.length > 0) body.systemInstruction = { parts: system };
  }

  const tools = (request.tools ?? []).filter((tool) => tool?.type === 'function' && tool.function?.name);
  if (tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: tools.map((tool) => {
          const declaration: Record<string, unknown> = { name: tool.function.name };
          if (tool.function.description) declaration.description = tool.function.description;
          const parameters = functionParameters(tool.function.parameters);
          if (parameters) declaration.parameters = parameters;
          return declaration;
        }),
      },
    ];
  }
  // a functionCallingConfig without declarations is refused, so a tool_choice alone is dropped
  const choice = tools.length > 0 ? request.tool_choice : undefined;
  if (choice === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (choice && typeof choice === 'object' && choice.function?.name) {
    body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }

  const config: Record<string, unknown> = {};
  const set = (field: string, value: unknown) => {
    if (value !== undefined && value !== null) config[field] = value;
  };
  set('temperature', request.temperature);
  set('topP', request.top_p);
  set('topK', request.top_k);
  set('maxOutputTokens', request.max_completion_tokens ?? request.max_tokens);
  if (typeof request.stop === 'string') config.stopSequences = [request.stop];
  else if (Array.isArray(request.stop) && request.stop.length > 0) config.stopSequences = request.stop;
  set('candidateCount', request.n);
  set('seed', request.seed);
  // A penalty of 0 (OpenAI's default, which some clients always send) changes nothing and is left
  // out; any other goes through, and the models that take none (2.5 and later: "Penalty is not
  // enabled for this model") refuse it in Google's words, which reach the client
  if (request.presence_penalty) config.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty) config.frequencyPenalty = request.frequency_penalty;
  const format = request.response_format;
  if (format?.type === 'json_object') {
    config.responseMimeType = 'application/json';
  } else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = (format.json_schema as { schema?: Record<string, unknown> } | undefined)?.schema;
    const clean = schema ? cleanSchema(schema, schema) : undefined;
    if (clean) config.responseSchema = clean;
  }
  const thinking = thinkingConfig(request.reasoning_effort, call.model);
  if (thinking) config.thinkingConfig = thinking;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return JSON.stringify(body);
}

// ---- answer decoding ----

function finishReason(reason: string | undefined, calledTools: boolean): FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    default:
      // STOP, and the reasons with no OpenAI word (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL...)
      return calledTools ? 'tool_calls' : 'stop';
  }
}

/** Usage as Google reports it: thoughts are completion tokens; tool-use prompt tokens are billed as input. */
function usageOf(metadata: GeminiUsageMetadata | undefined): Usage {
  const thoughts = count(metadata?.thoughtsTokenCount);
  const usage: Usage = {
    promptTokens: count(metadata?.promptTokenCount) + count(metadata?.toolUsePromptTokenCount),
    completionTokens: count(metadata?.candidatesTokenCount) + thoughts,
    cachedPromptTokens: count(metadata?.cachedContentTokenCount),
  };
  if (thoughts > 0) usage.reasoningTokens = thoughts;
  return usage;
}

interface DecodedParts {
  text: string;
  hasText: boolean;
  reasoning: string;
  calls: Array<{ id?: string; name: string; arguments: string; signature?: string }>;
}

function decodeParts(parts: GeminiPart[] | undefined): DecodedParts {
  const decoded: DecodedParts = { text: '', hasText: false, reasoning: '', calls: [] };
  for (const part of parts ?? []) {
    if (part.functionCall?.name) {
      decoded.calls.push({
        id: part.functionCall.id,
        name: part.functionCall.name,
        arguments: JSON.stringify(part.functionCall.args ?? {}),
        signature: part.thoughtSignature,
      });
    } else if (typeof part.text === 'string') {
      if (part.thought) decoded.reasoning += part.text;
      else {
        decoded.text += part.text;
        decoded.hasText = true;
      }
    }
  }
  return decoded;
}

function toolCallOf(call: DecodedParts['calls'][number], id: string): SignedToolCall {
  const toolCall: SignedToolCall = { id: call.id || id, type: 'function', function: { name: call.name, arguments: call.arguments } };
  if (call.signature) toolCall.extra_content = { google: { thought_signature: call.signature } };
  return toolCall;
}

function parseGoogle(body: string): GeminiResponse | undefined {
  let value = parseJson(body);
  // the non-SSE stream form (and some error answers) is a JSON array of responses
  if (Array.isArray(value)) value = value.find((item) => item && typeof item === 'object' && 'error' in item) ?? value[value.length - 1];
  return value && typeof value === 'object' ? (value as GeminiResponse) : undefined;
}

function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseGoogle(body);
  if (!answer) return upstreamFailure(502, `Gemini answered something that is not JSON: ${body.slice(0, 200)}`, { retryable: true });
  if (answer.error) return failure(count(answer.error.code) || 500, body);
  const id = answer.responseId || call.responseId;
  const candidates = [...(answer.candidates ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  let toolNumber = 0;
  const choices: ChatResponse['choices'] = candidates.map((candidate, position) => {
    const parts = decodeParts(candidate.content?.parts);
    const toolCalls = parts.calls.map((toolCall) => toolCallOf(toolCall, `call_${id}_${toolNumber++}`));
    const message: ChatResponse['choices'][number]['message'] = {
      role: 'assistant',
      content: parts.hasText || toolCalls.length === 0 ? parts.text : null,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (parts.reasoning) message.reasoning_content = parts.reasoning;
    return { index: position, message, finish_reason: finishReason(candidate.finishReason, toolCalls.length > 0) };
  });
  if (choices.length === 0) {
    if (!answer.promptFeedback?.blockReason) {
      return upstreamFailure(502, 'Gemini answered without candidates', { retryable: true });
    }
    // a blocked prompt: answered as filtered (see the top of this file)
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
  }
  return {
    id,
    object: 'chat.completion',
    created: call.now,
    model: answer.modelVersion || call.model,
    choices,
    usage: openAiUsage(usageOf(answer.usageMetadata)),
  };
}

// ---- stream decoding ----

function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseParser();
  let id: string | undefined;
  let model = call.model;
  let modelSeen = false;
  let toolNumber = 0;
  let lastUsage: GeminiUsageMetadata | undefined;
  let failed: UpstreamFailure | undefined;
  let finishedAll = false;
  const started = new Set<number>();
  const finished = new Set<number>();
  const calledTools = new Set<number>();
  const toolCounts = new Map<number, number>();

  const chunk = (choice: ChatChunkChoice): ChatChunk => ({
    id: id ?? call.responseId,
    object: 'chat.completion.chunk',
    created: call.now,
    model,
    choices: [choice],
  });

  const onEvent = (data: string): ChatChunk[] => {
    if (failed || data.trim() === '' || data.trim() === '[DONE]') return [];
    const event = parseJson(data) as GeminiResponse | undefined;
    if (!event || typeof event !== 'object') return [];
    if (event.error) {
      failed = failure(count(event.error.code) || 500, data);
      return [];
    }
    // one id and model for the whole stream: the first the vendor gives
    if (id === undefined) id = event.responseId || call.responseId;
    if (!modelSeen && event.modelVersion) {
      model = event.modelVersion;
      modelSeen = true;
    }
    if (event.usageMetadata) lastUsage = event.usageMetadata;
    const chunks: ChatChunk[] = [];
    const candidates = event.candidates ?? [];
    if (candidates.length === 0 && event.promptFeedback?.blockReason && started.size === 0) {
      // a blocked prompt: answered as filtered (see the top of this file)
      started.add(0);
      finished.add(0);
      chunks.push(chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }));
    }
    candidates.forEach((candidate, position) => {
      const index = candidate.index ?? position;
      if (finished.has(index)) return;
      const parts = decodeParts(candidate.content?.parts);
      const delta: ChatChunkChoice['delta'] = {};
      if (!started.has(index)) delta.role = 'assistant';
      if (parts.hasText) delta.content = parts.text;
      if (parts.reasoning) delta.reasoning_content = parts.reasoning;
      if (parts.calls.length > 0) {
        calledTools.add(index);
        let position = toolCounts.get(index) ?? 0;
        delta.tool_calls = parts.calls.map((toolCall): ChatChunkToolCall & { extra_content?: SignedToolCall['extra_content'] } => {
          const { id: toolId, function: fn, extra_content } = toolCallOf(toolCall, `call_${id}_${toolNumber++}`);
          const entry: ChatChunkToolCall & { extra_content?: SignedToolCall['extra_content'] } = { index: position++, id: toolId, type: 'function', function: fn };
          if (extra_content) entry.extra_content = extra_content;
          return entry;
        });
        toolCounts.set(index, position);
      }
      let reason: FinishReason | null = null;
      if (candidate.finishReason) {
        reason = finishReason(candidate.finishReason, calledTools.has(index));
        finished.add(index);
      }
      const hasDelta = delta.content !== undefined || delta.reasoning_content !== undefined || delta.tool_calls !== undefined;
      if (!hasDelta && reason === null) return;
      started.add(index);
      chunks.push(chunk({ index, delta, finish_reason: reason }));
    });
    finishedAll = started.size > 0 && [...started].every((index) => finished.has(index));
    return chunks;
  };

  return {
    push: (data) => parser.push(data).flatMap((event) => onEvent(event.data)),
    end: () => parser.end().flatMap((event) => onEvent(event.data)),
    // Google sends partial usage on every event and the full figures on the last: only a finished stream has them
    usage: () => (finishedAll && lastUsage ? usageOf(lastUsage) : undefined),
    failure: () => failed,
    done: () => finishedAll || failed !== undefined,
  };
}

// ---- embeddings ----

function encodeEmbeddings(request: EmbeddingRequest, call: AdaptorCall): string {
  const inputs = Array.isArray(request.input) ? request.input : [request.input];
  if (inputs.some((input) => typeof input !== 'string')) {
    // Gemini embeds text only; token arrays cannot be turned back into text here
    throw new TypeError('Gemini embeddings take text input only, not token arrays');
  }
  const model = `models/${call.model.replace(/^models\//, '')}`;
  return JSON.stringify({
    requests: (inputs as string[]).map((text) => {
      const entry: Record<string, unknown> = { model, content: { parts: [{ text }] } };
      if (request.dimensions !== undefined && request.dimensions !== null) entry.outputDimensionality = request.dimensions;
      return entry;
    }),
  });
}

function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const answer = parseJson(body) as { embeddings?: Array<{ values?: number[] }>; usageMetadata?: GeminiUsageMetadata; error?: GoogleError } | undefined;
  if (!answer || typeof answer !== 'object') return upstreamFailure(502, `Gemini answered something that is not JSON: ${body.slice(0, 200)}`, { retryable: true });
  if (answer.error) return failure(count(answer.error.code) || 500, body);
  if (!Array.isArray(answer.embeddings)) return upstreamFailure(502, 'Gemini answered without embeddings', { retryable: true });
  // Google reports no usage here (0 tells the relay to count the input itself), unless a newer answer carries it
  const prompt = count(answer.usageMetadata?.promptTokenCount);
  return {
    object: 'list',
    data: answer.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: embedding.values ?? [] })),
    model: call.model,
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  };
}

// ---- failures ----

// ErrorInfo reasons that say the key itself will not work again as it is
const DEAD_KEY_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'CONSUMER_SUSPENDED', 'API_KEY_SERVICE_BLOCKED', 'SERVICE_DISABLED']);
// and the words Google uses where it gives no reason (a leaked key: 403 with a message only)
const DEAD_KEY_WORDS = /api key (not valid|not found|expired)|api key was reported as leaked|consumer .* has been suspended|has been suspended/i;
const RETRYABLE_STATUSES = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'UNKNOWN', 'ABORTED']);

function failure(status: number, body: string): UpstreamFailure {
  const answer = parseGoogle(body);
  const error = answer?.error;
  if (!error || typeof error !== 'object') {
    const text = body.trim().slice(0, 500);
    return upstreamFailure(status, text ? `Gemini answered HTTP ${status}: ${text}` : '', {});
  }
  const reasons = (Array.isArray(error.details) ? error.details : []).map((detail) => detail?.reason).filter((reason): reason is string => typeof reason === 'string');
  const message = typeof error.message === 'string' ? error.message : '';
  const grpcStatus = typeof error.status === 'string' ? error.status : null;
  const deadKey =
    reasons.some((reason) => DEAD_KEY_REASONS.has(reason)) ||
    grpcStatus === 'UNAUTHENTICATED' ||
    ((status === 400 || status === 401 || status === 403) && DEAD_KEY_WORDS.test(message));
  // a refusal that is this channel's own (permissions, location, a model it lacks) may pass on another channel;
  // a malformed request (INVALID_ARGUMENT) would fail anywhere
  const retryable =
    deadKey ||
    status === 429 ||
    status >= 500 ||
    (grpcStatus !== null && RETRYABLE_STATUSES.has(grpcStatus)) ||
    grpcStatus === 'PERMISSION_DENIED' ||
    grpcStatus === 'FAILED_PRECONDITION' ||
    grpcStatus === 'NOT_FOUND' ||
    status === 403 ||
    status === 404;
  return upstreamFailure(status, message || `Gemini answered HTTP ${status}${grpcStatus ? ` ${grpcStatus}` : ''}`, {
    type: grpcStatus,
    code: reasons[0] ?? grpcStatus ?? (typeof error.code === 'number' ? error.code : null),
    deadKey,
    retryable,
  });
}

export const geminiAdaptor: UpstreamAdaptor = {
  protocol: 'gemini',
  docs: 'https://ai.google.dev/api/generate-content',
  // Google's own wire: a Gemini client's request passes as bytes (the model is in the path `target` writes)
  speaks: 'gemini',
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

// what the Gemini client side (../inbound/geminiNative.ts) reads from the same wire
export { decodeParts as decodeGeminiParts, usageOf as usageOfGemini };
