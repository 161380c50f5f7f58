// The Gemini request: where it goes (target), the OpenAI chat request as
// generateContent wants it (systemInstruction, contents, tools with schemas
// cleaned by ./schema.ts, thinking), and embeddings as batchEmbedContents.
import { findChannelType } from '../../../../common/channelTypes';
import { contentText, dataUrl, parseJson, trimmedBaseUrl, upstreamFailure } from '../../shared';
import type { AdaptorCall, ChannelConfig, ChatMessage, ChatRequest, EmbeddingRequest, HttpTarget, UpstreamFailure } from '../../types';
import type { GeminiContent, GeminiPart, SignedToolCall } from './json';
import { cleanSchema, functionParameters } from './schema';

const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com';

// ---- target ----

export function baseUrl(channel: ChannelConfig): string {
  const base = trimmedBaseUrl(channel.baseUrl, findChannelType(channel.type)?.defaultBaseUrl, GOOGLE_BASE_URL);
  // a base pasted with its version (".../v1beta") is taken as it is
  return /\/v1(beta|alpha)?\d*$/.test(base) ? base : `${base}/v1beta`;
}

/** `models/<model>` (or a tuned model's own resource name), each segment escaped. */
export function modelResource(model: string): string {
  const name = /^(models|tunedModels)\//.test(model) ? model : `models/${model}`;
  return name.split('/').map(encodeURIComponent).join('/');
}

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
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
  for (const part of content) {
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

/** A turn's parts, added to the last content when it has the same role (Gemini wants the roles to alternate). */
function append(contents: GeminiContent[], role: GeminiContent['role'], parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

/** An assistant message's parts: its content, then its tool calls as functionCall parts (their names noted by id for the answers). */
function modelParts(message: ChatMessage, toolNames: Map<string, string>, needsSignature: boolean): GeminiPart[] {
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
  return parts;
}

/** A tool message as a functionResponse part, named after the call it answers. */
function functionResponsePart(message: ChatMessage, toolNames: Map<string, string>): GeminiPart {
  const name = (message.tool_call_id && toolNames.get(message.tool_call_id)) || message.name || '';
  const text = contentText(message.content);
  const response = jsonObject(text) ?? { content: parseJson(text) ?? text };
  return { functionResponse: { name, response } };
}

/** Chat messages as Gemini's system instruction parts and alternating contents. */
function conversation(request: ChatRequest, model: string): { system: GeminiPart[]; contents: GeminiContent[] } {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();
  // Gemini 3 refuses replayed function calls without a signature; Google documents this value for calls it did not sign
  const needsSignature = /^(models\/)?gemini-3/.test(model);
  for (const message of request.messages ?? []) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(message.content).filter((part) => part.text !== undefined));
        break;
      case 'assistant':
        append(contents, 'model', modelParts(message, toolNames, needsSignature));
        break;
      case 'tool':
      case 'function':
        append(contents, 'user', [functionResponsePart(message, toolNames)]);
        break;
      default:
        append(contents, 'user', contentParts(message.content));
    }
  }
  return { system, contents };
}

/** Sets the body's tools (function declarations, Google Search for web_search_options) and toolConfig from the tool choice. */
function setTools(body: Record<string, unknown>, request: ChatRequest): void {
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
  // chat's web_search_options: Google Search grounding
  if (request.web_search_options && typeof request.web_search_options === 'object')
    body.tools = [...((body.tools as unknown[] | undefined) ?? []), { googleSearch: {} }];
  // a functionCallingConfig without declarations is refused, so a tool_choice alone is dropped
  const choice = tools.length > 0 ? request.tool_choice : undefined;
  if (choice === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (choice && typeof choice === 'object' && choice.function?.name) {
    body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
}

/** The request's sampling, limits, stops, output format and thinking as a generationConfig (empty when it sets none). */
function generationConfig(request: ChatRequest, model: string): Record<string, unknown> {
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
  const thinking = thinkingConfig(request.reasoning_effort, model);
  if (thinking) config.thinkingConfig = thinking;
  return config;
}

/** An OpenAI chat request as a generateContent body. */
export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const { system, contents } = conversation(request, call.model);
  const body: Record<string, unknown> = {};
  if (contents.length === 0 && system.length > 0) {
    // nothing but instructions: they are the prompt (Google refuses a request without contents)
    body.contents = [{ role: 'user', parts: system }];
  } else {
    body.contents = contents;
    if (system.length > 0) body.systemInstruction = { parts: system };
  }
  setTools(body, request);
  const config = generationConfig(request, call.model);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return JSON.stringify(body);
}

// ---- embeddings ----

export function encodeEmbeddings(request: EmbeddingRequest, call: AdaptorCall): string {
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
