// Baidu ERNIE (Qianfan "wenxinworkshop") chat and embeddings.
// API reference: https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11
// (chat: .../s/clntwmv7t, embeddings: .../s/alj562vvu, error codes: .../s/tlmyncueh)
//
// A channel key is `<API Key>|<Secret Key>`. The relay first exchanges it for
// an access token (`credential`), caches that until shortly before its
// `expires_in`, and every call carries it as `?access_token=`. Baidu answers
// errors inside HTTP 200 bodies (`{error_code, error_msg}`); an access token
// Baidu no longer accepts comes back with code CREDENTIAL_REJECTED, which
// tells the relay to drop its cached token and exchange the key again.
import { createHash } from 'node:crypto';
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatChunkChoice,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatStreamDecoder,
  ChatToolCall,
  CredentialExchange,
  EmbeddingRequest,
  EmbeddingResponse,
  FinishReason,
  HttpTarget,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../../types';
import { chunkOf, contentText, count, embeddingsInOrder, openAiUsage, parseJson, SseOrBareBody, trimmedBaseUrl, upstreamFailure } from '../../shared';

const DEFAULT_BASE_URL = 'https://aip.baidubce.com';
const CHAT_PATH = '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/';
const EMBEDDINGS_PATH = '/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/';

/**
 * The `code` of a failure that means Baidu refused the access token itself
 * (error 110 invalid, 111 expired, 100 an unreadable access_token): the key may be fine, so the relay drops
 * the cached credential, exchanges the key again and retries.
 */
export const CREDENTIAL_REJECTED = 'credential_rejected';

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
  'chatlaw': 'chatlaw',
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

const baseOf = (channel: ChannelConfig): string => trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL);

function splitKey(key: string): { apiKey: string; secretKey: string } | undefined {
  const parts = key.split('|');
  if (parts.length !== 2) return undefined;
  const [apiKey, secretKey] = parts.map((part) => part.trim());
  return apiKey && secretKey ? { apiKey, secretKey } : undefined;
}

// ---- the OAuth exchange ----

const credential: CredentialExchange = {
  cacheKey(channel) {
    // the secret stays out of cache keys (they may be logged)
    return `baidu:${createHash('sha256').update(`${baseOf(channel)}\n${channel.key}`).digest('hex')}`;
  },
  request(channel) {
    const parts = splitKey(channel.key);
    if (!parts) {
      // a configuration that can never work, but the vendor has not said so: not a dead key, another channel may serve
      return upstreamFailure(500, 'the Baidu channel key must be "<API Key>|<Secret Key>" (two parts separated by one "|")', {
        type: 'invalid_channel_config',
        code: 'invalid_baidu_key',
        retryable: true,
      });
    }
    const query = new URLSearchParams({ grant_type: 'client_credentials', client_id: parts.apiKey, client_secret: parts.secretKey });
    return {
      url: `${baseOf(channel)}/oauth/2.0/token?${query.toString()}`,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    };
  },
  parse(status, body) {
    const answer = parseJson(body) as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (answer && typeof answer.error === 'string' && answer.error) {
      const description = typeof answer.error_description === 'string' ? answer.error_description : '';
      // invalid_client: Baidu does not know this API key / secret pair
      const deadKey = answer.error === 'invalid_client';
      return upstreamFailure(status >= 400 ? status : 401, `Baidu token exchange: ${answer.error}${description ? `: ${description}` : ''}`, {
        type: 'baidu_oauth_error',
        code: answer.error,
        deadKey,
        retryable: true,
      });
    }
    if (status < 200 || status >= 300) return failure(status, body);
    if (!answer || typeof answer.access_token !== 'string' || !answer.access_token) {
      return upstreamFailure(502, 'Baidu token exchange answered without an access_token', { type: 'baidu_oauth_error', retryable: true });
    }
    return { credential: answer.access_token, expiresInSeconds: count(answer.expires_in) };
  },
};

// ---- errors ----

/**
 * Baidu's error codes (in 200 bodies and in HTTP errors alike).
 * https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh
 */
function classify(code: number, message: string, httpStatus: number): UpstreamFailure {
  const text = message || `Baidu error ${code}`;
  const details = { type: 'baidu_error', code };
  switch (code) {
    case 100: // Invalid parameter: Baidu documents it as an invalid access_token parameter
    case 110: // Access token invalid or no longer valid
    case 111: // Access token expired
      return upstreamFailure(401, text, { ...details, code: CREDENTIAL_REJECTED, deadKey: false, retryable: true });
    case 13: // Get service token failed
    case 14: // IAM Certification failed
    case 15: // App not exists or create failed
      return upstreamFailure(401, text, { ...details, deadKey: true });
    case 19: // Open api total request limit reached: the account's balance / total quota is used up
      return upstreamFailure(402, text, { ...details, deadKey: true });
    case 4: // Open api request limit reached (cluster)
    case 17: // Open api daily request limit reached
    case 18: // Open api qps request limit reached
    case 336501: // rpm limit
    case 336502: // tpm limit
      return upstreamFailure(429, text, { ...details, retryable: true });
    case 6: // No permission to access data (this key may not use this model; another channel may)
    case 336004: // permission error
      return upstreamFailure(403, text, { ...details, retryable: true });
    case 1: // Unknown error
    case 2: // Service temporarily unavailable
    case 336000: // internal error
    case 336100: // try again later
      return upstreamFailure(503, text, { ...details, retryable: true });
    default:
      if (code >= 336000 && code < 337000) return upstreamFailure(400, text, { ...details, retryable: false }); // the request itself
      if (code === 3) return upstreamFailure(400, text, { ...details, retryable: false });
      return upstreamFailure(httpStatus >= 400 ? httpStatus : 500, text, details);
  }
}

/** A Baidu error object in a body, if the body is one. */
function bodyError(body: unknown, httpStatus: number): UpstreamFailure | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as { error_code?: unknown; error_msg?: unknown };
  if (record.error_code === undefined || record.error_code === null || record.error_code === 0) return undefined;
  const code = Number(record.error_code);
  return classify(Number.isFinite(code) ? code : -1, typeof record.error_msg === 'string' ? record.error_msg : '', httpStatus);
}

function failure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  const known = bodyError(parsed, status);
  if (known) return known;
  const oauth = parsed as { error?: unknown; error_description?: unknown } | undefined;
  if (oauth && typeof oauth === 'object' && typeof oauth.error === 'string') {
    return upstreamFailure(status, `${oauth.error}${typeof oauth.error_description === 'string' ? `: ${oauth.error_description}` : ''}`, { type: 'baidu_error', code: oauth.error });
  }
  const text = body.trim().slice(0, 500);
  return upstreamFailure(status, text ? `Baidu answered HTTP ${status}: ${text}` : '', { type: 'baidu_error' });
}

// ---- requests ----

type BaiduMessage = { role: 'user' | 'assistant' | 'function'; content: string; name?: string; function_call?: { name: string; arguments: string } };

/**
 * OpenAI messages as Baidu takes them: system text in the `system` field,
 * user and assistant turns alternating (consecutive turns of one side are
 * joined, since Baidu refuses two in a row), and tool calls as Baidu's
 * function_call / function-role pairs, one call per assistant turn.
 */
function encodeMessages(messages: readonly ChatMessage[]): { system: string; messages: BaiduMessage[] } {
  const system: string[] = [];
  const out: BaiduMessage[] = [];
  const calls = new Map<string, ChatToolCall['function']>();
  for (const message of messages) {
    const text = contentText(message.content);
    if (message.role === 'system' || message.role === 'developer') {
      if (text) system.push(text);
      continue;
    }
    if (message.role === 'tool' || message.role === 'function') {
      const call = message.tool_call_id ? calls.get(message.tool_call_id) : undefined;
      const name = call?.name ?? message.name ?? '';
      const previous = out.at(-1);
      if (call && previous?.role === 'assistant' && previous.function_call) {
        // the assistant turn names the call this result answers (results may come in any order)
        previous.function_call = { name: call.name, arguments: call.arguments };
      } else if (call && previous?.role === 'function') {
        // a further result of one assistant turn: Baidu wants its call restated before it
        out.push({ role: 'assistant', content: '', function_call: { name: call.name, arguments: call.arguments } });
      }
      out.push({ role: 'function', name, content: text });
      continue;
    }
    if (message.role === 'assistant') {
      const toolCalls = message.tool_calls ?? [];
      for (const call of toolCalls) calls.set(call.id, call.function);
      const legacy = message.function_call as { name?: string; arguments?: string } | undefined;
      const first = toolCalls[0]?.function ?? (legacy?.name ? { name: legacy.name, arguments: legacy.arguments ?? '' } : undefined);
      if (first) {
        out.push({ role: 'assistant', content: text, function_call: { name: first.name, arguments: first.arguments } });
        continue;
      }
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const previous = out.at(-1);
    if (previous && previous.role === role && !previous.function_call) previous.content = previous.content ? `${previous.content}\n\n${text}` : text;
    else out.push({ role, content: text });
  }
  return { system: system.join('\n\n'), messages: out };
}

const clamp = (value: number, low: number, high: number): number => Math.min(high, Math.max(low, value));

function encodeChat(request: ChatRequest, call: AdaptorCall): string {
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
  for (const flag of ['disable_search', 'enable_citation', 'enable_trace'] as const) if (typeof request[flag] === 'boolean') body[flag] = request[flag];
  if (request.tools && request.tools.length > 0 && request.tool_choice !== 'none') {
    body.functions = request.tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      parameters: tool.function.parameters ?? { type: 'object', properties: {} },
    }));
    if (typeof request.tool_choice === 'object' && request.tool_choice) body.tool_choice = { type: 'function', function: { name: request.tool_choice.function.name } };
  }
  if (call.stream) body.stream = true;
  return JSON.stringify(body);
}

function encodeEmbeddings(request: EmbeddingRequest): string {
  const input = request.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input.filter((item): item is string => typeof item === 'string') : [];
  return JSON.stringify({ input: texts, ...(typeof request.user === 'string' && request.user ? { user_id: request.user } : {}) });
}

function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (!call.credential) {
    return upstreamFailure(500, 'a Baidu call needs an access token from the key exchange', { type: 'invalid_channel_config', code: CREDENTIAL_REJECTED, retryable: true });
  }
  const path = call.operation === 'embeddings' ? `${EMBEDDINGS_PATH}${baiduEndpoint(call.model, 'embeddings')}` : `${CHAT_PATH}${baiduEndpoint(call.model, 'chat')}`;
  return {
    url: `${baseOf(channel)}${path}?access_token=${encodeURIComponent(call.credential)}`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: call.stream ? 'text/event-stream' : 'application/json' },
  };
}

// ---- answers ----

interface BaiduAnswer {
  id?: string;
  created?: number;
  result?: string;
  is_end?: boolean;
  is_truncated?: boolean;
  need_clear_history?: boolean;
  finish_reason?: string;
  function_call?: { name?: string; arguments?: string; thoughts?: string };
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

function finishOf(answer: BaiduAnswer): FinishReason {
  if (answer.function_call?.name) return 'tool_calls';
  switch (answer.finish_reason) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'function_call':
      return 'tool_calls';
    default:
      // need_clear_history: Baidu judged the input unsafe and answered a canned reply
      if (answer.need_clear_history) return 'content_filter';
      return answer.is_truncated ? 'length' : 'stop';
  }
}

function usageOf(answer: BaiduAnswer): Usage | undefined {
  if (!answer.usage) return undefined;
  return { promptTokens: count(answer.usage.prompt_tokens), completionTokens: count(answer.usage.completion_tokens), cachedPromptTokens: 0 };
}

const toolCallOf = (answer: BaiduAnswer, call: AdaptorCall): ChatToolCall | undefined =>
  answer.function_call?.name ? { id: `call_${call.responseId}_0`, type: 'function', function: { name: answer.function_call.name, arguments: answer.function_call.arguments || '{}' } } : undefined;

function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseJson(body);
  if (!answer || typeof answer !== 'object') return upstreamFailure(502, `Baidu answered something other than JSON: ${body.slice(0, 200)}`, { type: 'baidu_error', retryable: true });
  const error = bodyError(answer, 200);
  if (error) return error;
  const baidu = answer as BaiduAnswer;
  const toolCall = toolCallOf(baidu, call);
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: toolCall && !baidu.result ? null : (baidu.result ?? '') };
  if (toolCall) message.tool_calls = [toolCall];
  return {
    id: baidu.id || call.responseId,
    object: 'chat.completion',
    created: count(baidu.created) || call.now,
    model: call.model,
    choices: [{ index: 0, message, finish_reason: finishOf(baidu) }],
    usage: openAiUsage(usageOf(baidu) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 }),
  };
}

/**
 * Baidu streams SSE `data: {...}` events, each with a piece of `result` and
 * the running usage, the last with `is_end: true`. A refusal arrives as a
 * bare JSON body (no `data:`), so the raw text is kept until the first event.
 */
function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseOrBareBody();
  let started = false;
  let finished = false;
  let id = '';
  let created = 0;
  // Baidu repeats the usage on every event, but only the last event's counts the whole answer: a stream cut
  // short reports none, and the relay estimates, rather than billing the prompt alone
  let running: Usage | undefined;
  let failed: UpstreamFailure | undefined;

  const chunk = (choice: ChatChunkChoice): ChatChunk => ({ ...chunkOf(call, call.model, [choice]), id: id || call.responseId, created: created || call.now });

  function handle(data: string): ChatChunk[] {
    const answer = parseJson(data);
    if (!answer || typeof answer !== 'object' || finished || failed) return [];
    const error = bodyError(answer, 200);
    if (error) {
      failed = error;
      return [];
    }
    const baidu = answer as BaiduAnswer;
    if (!id && baidu.id) id = baidu.id;
    if (!created) created = count(baidu.created);
    running = usageOf(baidu) ?? running;
    const chunks: ChatChunk[] = [];
    const delta: ChatChunkChoice['delta'] = {};
    if (!started) delta.role = 'assistant';
    if (baidu.result) delta.content = baidu.result;
    const toolCall = toolCallOf(baidu, call);
    if (toolCall) delta.tool_calls = [{ index: 0, id: toolCall.id, type: 'function', function: toolCall.function }];
    if (delta.role || delta.content || delta.tool_calls) {
      started = true;
      chunks.push(chunk({ index: 0, delta, finish_reason: baidu.is_end ? finishOf(baidu) : null }));
    } else if (baidu.is_end) {
      chunks.push(chunk({ index: 0, delta: {}, finish_reason: finishOf(baidu) }));
    }
    if (baidu.is_end) finished = true;
    return chunks;
  }

  const take = (events: { data: string }[]): ChatChunk[] => events.flatMap((event) => handle(event.data));

  return {
    push: (data) => take(parser.push(data)),
    end() {
      const { events, bareBody } = parser.end();
      const chunks = take(events);
      if (bareBody && !failed) {
        failed = bodyError(parseJson(bareBody), 200) ?? upstreamFailure(502, `Baidu answered a stream with no events: ${bareBody.slice(0, 200)}`, { type: 'baidu_error', retryable: true });
      }
      return chunks;
    },
    usage: () => (finished ? running : undefined),
    failure: () => failed,
    done: () => finished,
  };
}

function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const answer = parseJson(body) as { data?: Array<{ index?: number; embedding?: number[] }>; usage?: { prompt_tokens?: number; total_tokens?: number } } | undefined;
  if (!answer || typeof answer !== 'object') return upstreamFailure(502, `Baidu answered something other than JSON: ${body.slice(0, 200)}`, { type: 'baidu_error', retryable: true });
  const error = bodyError(answer, 200);
  if (error) return error;
  const data = embeddingsInOrder((answer.data ?? []).map((item, position) => ({ index: typeof item.index === 'number' ? item.index : position, embedding: item.embedding ?? [] })));
  const promptTokens = count(answer.usage?.prompt_tokens);
  return { object: 'list', data, model: call.model, usage: { prompt_tokens: promptTokens, total_tokens: count(answer.usage?.total_tokens) || promptTokens } };
}

export const baiduAdaptor: UpstreamAdaptor = {
  protocol: 'baidu',
  docs: 'https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',
  credential,
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  encodeEmbeddings,
  decodeEmbeddings,
  failure,
};
