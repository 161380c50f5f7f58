// Where a Baidu call goes (the model's endpoint, the access token in the
// query) and the request it carries: chat with `system` apart and alternating
// turns, embeddings.
import type {
  AdaptorCall,
  ChannelConfig,
  ChatMessage,
  ChatRequest,
  ChatToolCall,
  EmbeddingRequest,
  HttpTarget,
  UpstreamFailure,
} from '../../types';
import { contentText, embeddingTexts, trimmedBaseUrl, upstreamFailure } from '../../shared';
import { CREDENTIAL_REJECTED } from './errors';

const DEFAULT_BASE_URL = 'https://aip.baidubce.com';
const CHAT_PATH = '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/';
const EMBEDDINGS_PATH = '/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/';

/**
 * Model name -> endpoint, from Qianfan's model list. Baidu gives several
 * models historical endpoints (ERNIE-4.0-8K is `completions_pro`); newer ones
 * use their lowercased name, so an unknown model is sent to
 * `chat/<lowercased name>` (Baidu answers a clear 336xxx/"unsupported" error
 * if that is wrong), never to a meaningless URL.
 */
const CHAT_ENDPOINTS: Record<string, string> = {
  'ernie-4.0-8k': 'completions_pro',
  'ernie-bot-4': 'completions_pro',
  'ernie-4.0-8k-preview-0518': 'completions_adv_pro',
  'ernie-3.5-8k': 'completions',
  'ernie-bot': 'completions',
  'ernie-bot-8k': 'ernie_bot_8k',
  'ernie-bot-turbo': 'eb-instant',
  'ernie-lite-8k-0922': 'eb-instant',
  'ernie-lite-8k-0308': 'ernie-lite-8k',
  'ernie-lite-appbuilder-8k-0614': 'ai_apaas_lite',
  'ernie-speed': 'ernie_speed',
  'ernie speed': 'ernie_speed',
  'ernie-speed-8k': 'ernie_speed',
  'ernie speed-appbuilder': 'ai_apaas',
  'ernie-speed-appbuilder': 'ai_apaas',
  'ernie-bot-turbo-ai': 'ai_apaas',
  'eb-turbo-appbuilder': 'ai_apaas',
  'ernie-function-8k': 'ernie-func-8k',
  'ernie-functions-8k': 'ernie-func-8k',
  'ernie-character-8k': 'ernie-char-8k',
  'ernie-character-fiction-8k': 'ernie-char-fiction-8k',
  'bloomz-7b': 'bloomz_7b1',
  'qianfan-bloomz-7b-compressed': 'qianfan_bloomz_7b_compressed',
  'llama-2-7b-chat': 'llama_2_7b',
  'llama-2-13b-chat': 'llama_2_13b',
  'llama-2-70b-chat': 'llama_2_70b',
  'meta-llama-3-8b': 'llama_3_8b',
  'meta-llama-3-70b': 'llama_3_70b',
  'qianfan-chinese-llama-2-7b': 'qianfan_chinese_llama_2_7b',
  'qianfan-chinese-llama-2-13b': 'qianfan_chinese_llama_2_13b',
  'qianfan-chinese-llama-2-70b': 'qianfan_chinese_llama_2_70b',
  'chatglm2-6b-32k': 'chatglm2_6b_32k',
  'aquilachat-7b': 'aquilachat_7b',
  'xuanyuan-70b-chat-4bit': 'xuanyuan_70b_chat',
  chatlaw: 'chatlaw',
  'yi-34b-chat': 'yi_34b_chat',
  'mixtral-8x7b-instruct': 'mixtral_8x7b_instruct',
  'gemma-7b-it': 'gemma_7b_it',
  // the rest are served at their lowercased names (ERNIE-4.0-Turbo-8K -> ernie-4.0-turbo-8k, ERNIE-Lite-8K ->
  // ernie-lite-8k, ERNIE-Tiny-8K -> ernie-tiny-8k, ERNIE-3.5-128K, ERNIE-Speed-128K, ERNIE-Novel-8K, ...)
};

const EMBEDDING_ENDPOINTS: Record<string, string> = {
  'embedding-v1': 'embedding-v1',
  'bge-large-zh': 'bge_large_zh',
  'bge-large-en': 'bge_large_en',
  'tao-8k': 'tao_8k',
};

/** The endpoint (last path segment) Baidu serves a model at. */
export function baiduEndpoint(model: string, operation: 'chat' | 'embeddings'): string {
  const name = model.trim().toLowerCase();
  const known = (operation === 'chat' ? CHAT_ENDPOINTS : EMBEDDING_ENDPOINTS)[name];
  // the name's own characters, path-safe: a model name can never climb out of the endpoint folder
  return known ?? encodeURIComponent(name);
}

export const baseOf = (channel: ChannelConfig): string => trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL);

export function splitKey(key: string): { apiKey: string; secretKey: string } | undefined {
  const parts = key.split('|');
  if (parts.length !== 2) return undefined;
  const [apiKey, secretKey] = parts.map((part) => part.trim());
  return apiKey && secretKey ? { apiKey, secretKey } : undefined;
}

// ---- requests ----

type BaiduMessage = {
  role: 'user' | 'assistant' | 'function';
  content: string;
  name?: string;
  function_call?: { name: string; arguments: string };
};

/** What encodeMessages builds: the system texts, Baidu's turns, and each tool call's function by its id. */
interface BaiduConversation {
  system: string[];
  turns: BaiduMessage[];
  calls: Map<string, ChatToolCall['function']>;
}

/** A tool result as a function-role turn, the assistant turn before it naming the call it answers. */
function addToolResult(conversation: BaiduConversation, message: ChatMessage, text: string): void {
  const { turns, calls } = conversation;
  const call = message.tool_call_id ? calls.get(message.tool_call_id) : undefined;
  const name = call?.name ?? message.name ?? '';
  const previous = turns.at(-1);
  if (call && previous?.role === 'assistant' && previous.function_call) {
    // the assistant turn names the call this result answers (results may come in any order)
    previous.function_call = { name: call.name, arguments: call.arguments };
  } else if (call && previous?.role === 'function') {
    // a further result of one assistant turn: Baidu wants its call restated before it
    turns.push({ role: 'assistant', content: '', function_call: { name: call.name, arguments: call.arguments } });
  }
  turns.push({ role: 'function', name, content: text });
}

/** An assistant turn that calls tools, as one turn with its first call (or its legacy function_call); false when it calls none. */
function addCallingTurn(conversation: BaiduConversation, message: ChatMessage, text: string): boolean {
  const toolCalls = message.tool_calls ?? [];
  for (const call of toolCalls) conversation.calls.set(call.id, call.function);
  const legacy = message.function_call as { name?: string; arguments?: string } | undefined;
  const first = toolCalls[0]?.function ?? (legacy?.name ? { name: legacy.name, arguments: legacy.arguments ?? '' } : undefined);
  if (!first) return false;
  conversation.turns.push({ role: 'assistant', content: text, function_call: { name: first.name, arguments: first.arguments } });
  return true;
}

/** A user or assistant turn, joined to the one before when that is of the same side (and calls nothing). */
function addTurn(turns: BaiduMessage[], role: 'user' | 'assistant', text: string): void {
  const previous = turns.at(-1);
  if (previous && previous.role === role && !previous.function_call)
    previous.content = previous.content ? `${previous.content}\n\n${text}` : text;
  else turns.push({ role, content: text });
}

/**
 * OpenAI messages as Baidu takes them: system text in the `system` field,
 * user and assistant turns alternating (consecutive turns of one side are
 * joined, since Baidu refuses two in a row), and tool calls as Baidu's
 * function_call / function-role pairs, one call per assistant turn.
 */
function encodeMessages(messages: readonly ChatMessage[]): { system: string; messages: BaiduMessage[] } {
  const conversation: BaiduConversation = { system: [], turns: [], calls: new Map() };
  for (const message of messages) {
    const text = contentText(message.content);
    if (message.role === 'system' || message.role === 'developer') {
      if (text) conversation.system.push(text);
    } else if (message.role === 'tool' || message.role === 'function') {
      addToolResult(conversation, message, text);
    } else if (message.role !== 'assistant' || !addCallingTurn(conversation, message, text)) {
      addTurn(conversation.turns, message.role === 'assistant' ? 'assistant' : 'user', text);
    }
  }
  return { system: conversation.system.join('\n\n'), messages: conversation.turns };
}

const clamp = (value: number, low: number, high: number): number => Math.min(high, Math.max(low, value));

/** Sets the request's tools as Baidu's functions (none when the client said none), with a forced function's choice. */
function setFunctions(body: Record<string, unknown>, request: ChatRequest): void {
  if (!request.tools || request.tools.length === 0 || request.tool_choice === 'none') return;
  body.functions = request.tools.map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    parameters: tool.function.parameters ?? { type: 'object', properties: {} },
  }));
  if (typeof request.tool_choice === 'object' && request.tool_choice)
    body.tool_choice = { type: 'function', function: { name: request.tool_choice.function.name } };
}

export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  const { system, messages } = encodeMessages(request.messages ?? []);
  const body: Record<string, unknown> = { messages };
  if (system) body.system = system;
  // Baidu takes temperature in (0, 1] and top_p in [0, 1]: out-of-range values are refused, so they are pulled in
  if (typeof request.temperature === 'number') body.temperature = clamp(request.temperature, 0.01, 1);
  if (typeof request.top_p === 'number') body.top_p = clamp(request.top_p, 0, 1);
  // penalty_score is a repetition penalty in [1, 2] (1 = none); OpenAI's penalties are in [-2, 2] (0 = none)
  const penalty = typeof request.frequency_penalty === 'number' ? request.frequency_penalty : request.presence_penalty;
  if (typeof penalty === 'number' && penalty > 0) body.penalty_score = clamp(1 + penalty / 2, 1, 2);
  if (request.stop !== undefined && request.stop !== null) body.stop = Array.isArray(request.stop) ? request.stop : [request.stop];
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') body.max_output_tokens = maxTokens;
  if (typeof request.user === 'string' && request.user) body.user_id = request.user;
  if (request.response_format?.type === 'json_object') body.response_format = 'json_object';
  // Baidu's own switches, when a client that knows them sends them
  for (const flag of ['disable_search', 'enable_citation', 'enable_trace'] as const)
    if (typeof request[flag] === 'boolean') body[flag] = request[flag];
  setFunctions(body, request);
  if (call.stream) body.stream = true;
  return JSON.stringify(body);
}

export function encodeEmbeddings(request: EmbeddingRequest): string {
  const texts = embeddingTexts(request.input);
  return JSON.stringify({ input: texts, ...(typeof request.user === 'string' && request.user ? { user_id: request.user } : {}) });
}

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (!call.credential) {
    return upstreamFailure(500, 'a Baidu call needs an access token from the key exchange', {
      type: 'invalid_channel_config',
      code: CREDENTIAL_REJECTED,
      retryable: true,
    });
  }
  const path =
    call.operation === 'embeddings'
      ? `${EMBEDDINGS_PATH}${baiduEndpoint(call.model, 'embeddings')}`
      : `${CHAT_PATH}${baiduEndpoint(call.model, 'chat')}`;
  return {
    url: `${baseOf(channel)}${path}?access_token=${encodeURIComponent(call.credential)}`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: call.stream ? 'text/event-stream' : 'application/json' },
  };
}
