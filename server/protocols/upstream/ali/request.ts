// Where a DashScope call goes (text, multimodal or embeddings path) and the
// request it carries.
import type { AdaptorCall, ChannelConfig, ChatContentPart, ChatMessage, ChatRequest, EmbeddingRequest, HttpTarget } from '../../types';
import { contentText, embeddingTexts, trimmedBaseUrl } from '../../shared';

const DEFAULT_BASE_URL = 'https://dashscope.aliyuncs.com';
const TEXT_PATH = '/api/v1/services/aigc/text-generation/generation';
const MULTIMODAL_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
const EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding';

const baseOf = (channel: ChannelConfig): string => trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL);

/** Models served at the multimodal path (their messages carry {image}/{text} lists). */
export const isMultimodalModel = (model: string): boolean => /(^|[-_])vl([-_.]|$)|^qvq/i.test(model);

// ---- requests ----

/** The path of a call: embeddings, or chat at the multimodal or the text path by its model. */
function pathOf(call: AdaptorCall): string {
  if (call.operation === 'embeddings') return EMBEDDINGS_PATH;
  return isMultimodalModel(call.model) ? MULTIMODAL_PATH : TEXT_PATH;
}

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget {
  const path = pathOf(call);
  const headers: Record<string, string> = { Authorization: `Bearer ${channel.key}`, 'Content-Type': 'application/json' };
  if (call.stream && call.operation === 'chat') {
    headers['X-DashScope-SSE'] = 'enable';
    headers.Accept = 'text/event-stream';
  } else {
    headers.Accept = 'application/json';
  }
  return { url: `${baseOf(channel)}${path}`, method: 'POST', headers };
}

/** A vision model's content: a list of {image} and {text} items. */
type MultimodalItem = { image: string } | { text: string };

function multimodalContent(content: ChatMessage['content']): MultimodalItem[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: ChatContentPart): MultimodalItem[] => {
    if (part.type === 'image_url' && part.image_url?.url) return [{ image: part.image_url.url }];
    if (typeof part.text === 'string') return [{ text: part.text }];
    return [];
  });
}

/** A chat role as DashScope names it: developer is system, function is tool. */
function dashScopeRole(role: ChatMessage['role']): string {
  if (role === 'developer') return 'system';
  return role === 'function' ? 'tool' : role;
}

function encodeMessages(messages: readonly ChatMessage[], multimodal: boolean): Array<Record<string, unknown>> {
  return messages.map((message) => {
    const role = dashScopeRole(message.role);
    const out: Record<string, unknown> = {
      role,
      content: multimodal && role !== 'tool' ? multimodalContent(message.content) : contentText(message.content),
    };
    if (message.name) out.name = message.name;
    if (message.tool_call_id) out.tool_call_id = message.tool_call_id;
    if (message.tool_calls && message.tool_calls.length > 0)
      out.tool_calls = message.tool_calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.function.name, arguments: call.function.arguments },
      }));
    return out;
  });
}

/** Sets the request's tools, with its tool choice and parallel_tool_calls, when it has any. */
function setTools(parameters: Record<string, unknown>, request: ChatRequest): void {
  if (!request.tools || request.tools.length === 0) return;
  parameters.tools = request.tools;
  if (request.tool_choice !== undefined) parameters.tool_choice = request.tool_choice;
  if (typeof request.parallel_tool_calls === 'boolean') parameters.parallel_tool_calls = request.parallel_tool_calls;
}

export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const parameters: Record<string, unknown> = { result_format: 'message' };
  if (call.stream) parameters.incremental_output = true;
  if (typeof request.temperature === 'number') parameters.temperature = request.temperature;
  if (typeof request.top_p === 'number') parameters.top_p = request.top_p;
  if (typeof request.top_k === 'number') parameters.top_k = request.top_k;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') parameters.max_tokens = maxTokens;
  if (request.stop !== undefined && request.stop !== null) parameters.stop = request.stop;
  if (typeof request.seed === 'number') parameters.seed = request.seed;
  // DashScope has presence_penalty; it has no frequency penalty (repetition_penalty is multiplicative, 1.0 = none)
  if (typeof request.presence_penalty === 'number') parameters.presence_penalty = request.presence_penalty;
  if (typeof request.repetition_penalty === 'number') parameters.repetition_penalty = request.repetition_penalty;
  if (typeof request.enable_search === 'boolean') parameters.enable_search = request.enable_search;
  if (typeof request.enable_thinking === 'boolean') parameters.enable_thinking = request.enable_thinking;
  if (typeof request.n === 'number' && request.n > 1) parameters.n = request.n;
  if (request.response_format?.type === 'json_object') parameters.response_format = { type: 'json_object' };
  setTools(parameters, request);
  return JSON.stringify({
    model: call.model,
    input: { messages: encodeMessages(request.messages ?? [], isMultimodalModel(call.model)) },
    parameters,
  });
}

export function encodeEmbeddings(request: EmbeddingRequest, call: AdaptorCall): string {
  const texts = embeddingTexts(request.input);
  const parameters: Record<string, unknown> = { text_type: 'document' };
  if (typeof request.dimensions === 'number') parameters.dimension = request.dimensions;
  return JSON.stringify({ model: call.model, input: { texts }, parameters });
}
