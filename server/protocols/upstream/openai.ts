// OpenAI's own API, and every vendor that speaks it (resellers, and the
// OpenAI-compatible types whose row in common/channelTypes.ts only changes
// the path prefix or the auth header). Reference:
// https://platform.openai.com/docs/api-reference/chat
//
// The relay passes this protocol's bytes unparsed (speaks: 'openai'); the
// decoders here serve the channel test and the contract suite, and say what
// an error inside a 200 means.
import { createHash } from 'node:crypto';
import { findChannelType, openAiPathPrefix, type ChannelType } from '../../../common/channelTypes';
import { count, isObject, OPENAI_OPERATION_PATHS, parseJson, SseParser, trimmedBaseUrl, upstreamFailure } from '../shared';

export { OPENAI_OPERATION_PATHS } from '../shared';
import { decodeRerankAnswer, encodeRerankRequest } from './rerank';
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatStreamDecoder,
  EmbeddingRequest,
  EmbeddingResponse,
  HttpTarget,
  OpenAIUsage,
  Operation,
  RerankRequest,
  RerankResponse,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../types';

/** The header that carries a channel's key, per the type's `authHeader`. */
export function openAiAuthHeader(row: Pick<ChannelType, 'authHeader'> | undefined, key: string): Record<string, string> {
  switch (row?.authHeader) {
    case 'api-key':
      return { 'api-key': key };
    case 'x-api-key':
      return { 'x-api-key': key };
    default:
      return { authorization: `Bearer ${key}` };
  }
}

/** The channel's base URL without trailing slashes: its own, else its type's default. */
export function baseUrlOf(channel: ChannelConfig): string {
  return trimmedBaseUrl(channel.baseUrl, findChannelType(channel.type)?.defaultBaseUrl);
}

const DEAD_KEY_CODES = new Set(['invalid_api_key', 'account_deactivated', 'insufficient_quota']);

/**
 * The words of an error body that is not OpenAI's: `{"message": ...}` (Cohere,
 * SiliconFlow), or FastAPI's `{"detail": "..."}` or `{"detail": [{"msg": ...}]}`
 * (Jina, Voyage, many self-hosted servers).
 */
function plainErrorMessage(parsed: unknown): string {
  if (!isObject(parsed)) return '';
  if (typeof parsed.message === 'string') return parsed.message;
  const { detail } = parsed;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail))
    return detail
      .map((item) => (isObject(item) && typeof item.msg === 'string' ? item.msg : ''))
      .filter(Boolean)
      .join('; ');
  return '';
}

/** OpenAI's `{error: {message, type, code}}` read from a body, classified; only the status when the body says nothing. */
export function openAiFailure(status: number, body: string): UpstreamFailure {
  const parsed = parseJson(body);
  const error = (parsed as { error?: unknown } | undefined)?.error;
  if (!error || typeof error !== 'object') {
    // some proxies answer `{"error": "text"}`
    return upstreamFailure(status, typeof error === 'string' ? error : plainErrorMessage(parsed));
  }
  const { message, type, code } = error as { message?: unknown; type?: unknown; code?: unknown };
  const typeText = typeof type === 'string' ? type : null;
  const codeValue = typeof code === 'string' || typeof code === 'number' ? code : null;
  const deadKey = typeText === 'insufficient_quota' || DEAD_KEY_CODES.has(String(codeValue ?? ''));
  return upstreamFailure(status, typeof message === 'string' ? message : '', { type: typeText, code: codeValue, deadKey });
}

/** A 200 carrying an error object is a failure; the status OpenAI would have used for it. */
function statusOfErrorInOkBody(failure: UpstreamFailure): number {
  const code = String(failure.code ?? '');
  if (code === 'invalid_api_key' || code === 'account_deactivated') return 401;
  if (failure.type === 'insufficient_quota' || code === 'insufficient_quota' || code === 'rate_limit_exceeded') return 429;
  return 502;
}

/** The failure an error object inside a 2xx body stands for. */
export function openAiFailureInOkBody(body: string): UpstreamFailure {
  const parsed = openAiFailure(200, body);
  const status = statusOfErrorInOkBody(parsed);
  return { ...parsed, status, retryable: parsed.deadKey || status === 429 || status >= 500 };
}

/** OpenAI's usage object in the relay's terms. */
export function usageOfOpenAi(usage: unknown): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const reported = usage as Partial<OpenAIUsage>;
  const result: Usage = {
    promptTokens: count(reported.prompt_tokens),
    completionTokens: count(reported.completion_tokens),
    cachedPromptTokens: count(reported.prompt_tokens_details?.cached_tokens),
  };
  const reasoning = count(reported.completion_tokens_details?.reasoning_tokens);
  if (reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}

const hasError = (value: unknown): boolean => {
  const error = (value as { error?: unknown } | undefined)?.error;
  return error !== undefined && error !== null && error !== '';
};

function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const parsed = parseJson(body);
  if (!parsed || typeof parsed !== 'object') return upstreamFailure(502, 'the upstream answered with a body that is not JSON');
  if (hasError(parsed)) return openAiFailureInOkBody(body);
  const answer = parsed as Partial<ChatResponse>;
  const choices = Array.isArray(answer.choices) ? answer.choices : [];
  return {
    ...(answer as object),
    id: typeof answer.id === 'string' && answer.id ? answer.id : call.responseId,
    object: 'chat.completion',
    created: typeof answer.created === 'number' && answer.created > 0 ? answer.created : call.now,
    model: typeof answer.model === 'string' && answer.model ? answer.model : call.model,
    choices: choices.map((choice, position) => ({ ...choice, index: typeof choice.index === 'number' ? choice.index : position })),
    usage: answer.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
}

/** OpenAI's SSE: `data: <chunk>` events ending with `data: [DONE]`; usage on the last chunk when asked for. */
function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseParser();
  let usage: Usage | undefined;
  let failure: UpstreamFailure | undefined;
  let done = false;
  const read = (events: ReturnType<SseParser['push']>): ChatChunk[] => {
    const chunks: ChatChunk[] = [];
    for (const { data } of events) {
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      const parsed = parseJson(data);
      if (!parsed || typeof parsed !== 'object') continue;
      if (hasError(parsed)) {
        failure ??= openAiFailureInOkBody(data);
        continue;
      }
      const chunk = parsed as Partial<ChatChunk>;
      if (chunk.usage) usage = usageOfOpenAi(chunk.usage) ?? usage;
      // Azure opens with a chunk of prompt filter results only (no id, no choices): nothing to pass on
      if ((!Array.isArray(chunk.choices) || chunk.choices.length === 0) && !chunk.usage) continue;
      chunks.push({
        ...(chunk as object),
        id: typeof chunk.id === 'string' && chunk.id ? chunk.id : call.responseId,
        object: 'chat.completion.chunk',
        created: typeof chunk.created === 'number' && chunk.created > 0 ? chunk.created : call.now,
        model: typeof chunk.model === 'string' && chunk.model ? chunk.model : call.model,
        choices: (Array.isArray(chunk.choices) ? chunk.choices : []).map((choice, position) => ({
          ...choice,
          index: typeof choice.index === 'number' ? choice.index : position,
          finish_reason: choice.finish_reason || null,
        })),
      });
    }
    return chunks;
  };
  return {
    push: (bytes) => read(parser.push(bytes)),
    end: () => read(parser.end()),
    usage: () => usage,
    failure: () => failure,
    done: () => done,
  };
}

/** The rerank shape and path of a channel's type; undefined for a type that does not rerank. */
const rerankOf = (channelType: number) => findChannelType(channelType)?.rerank;

function encodeRerank(request: RerankRequest, call: AdaptorCall): string {
  const rerank = call.channel ? rerankOf(call.channel.type) : undefined;
  if (!rerank) throw new Error('this channel type does not rerank');
  return encodeRerankRequest(rerank.wire, request, call.model);
}

function decodeRerank(body: string, call: AdaptorCall): RerankResponse | UpstreamFailure {
  const rerank = call.channel ? rerankOf(call.channel.type) : undefined;
  if (!rerank) return upstreamFailure(501, 'this channel type does not rerank', { retryable: true });
  if (hasError(parseJson(body))) return openAiFailureInOkBody(body);
  return decodeRerankAnswer(rerank.wire, body, call);
}

function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const parsed = parseJson(body);
  if (!parsed || typeof parsed !== 'object') return upstreamFailure(502, 'the upstream answered with a body that is not JSON');
  if (hasError(parsed)) return openAiFailureInOkBody(body);
  const answer = parsed as Partial<EmbeddingResponse>;
  const promptTokens = count(answer.usage?.prompt_tokens);
  return {
    object: 'list',
    data: (Array.isArray(answer.data) ? answer.data : []).map((item, position) => ({
      object: 'embedding',
      index: typeof item.index === 'number' ? item.index : position,
      embedding: item.embedding,
    })),
    model: typeof answer.model === 'string' && answer.model ? answer.model : call.model,
    usage: { prompt_tokens: promptTokens, total_tokens: count(answer.usage?.total_tokens) || promptTokens },
  };
}

export const ALL_OPERATIONS: ReadonlySet<Operation> = new Set(Object.keys(OPENAI_OPERATION_PATHS) as Operation[]);

/** The models that take reasoning_effort: OpenAI's o-series and GPT-5, and the open reasoning models vendors serve. */
const REASONING_MODELS = /^(o\d|gpt-5|gpt-oss|grok-3-mini|codex)/;

/** OpenAI refuses a longer `user` (Anthropic's metadata.user_id, Claude Code's among them, runs past it). */
export const OPENAI_USER_MAX = 64;

/** A user id OpenAI takes: as it is when short enough, else its SHA-256 in hex (64 characters), the same for the same id. */
export function openAiUser(user: string): string {
  return user.length <= OPENAI_USER_MAX ? user : createHash('sha256').update(user).digest('hex');
}

/** A message's content without prompt-cache marks; text parts alone become one string, as every vendor takes it. */
function unmarked(message: ChatMessage): ChatMessage {
  if (!Array.isArray(message.content) || !message.content.some((part) => part.cache_control !== undefined)) return message;
  const parts = message.content.map(({ cache_control: _mark, ...part }) => part);
  if (!parts.every((part) => part.type === 'text')) return { ...message, content: parts };
  return { ...message, content: parts.map((part) => part.text ?? '').join(message.role === 'system' ? '\n\n' : '') };
}

/**
 * A request translated from another client protocol (only those reach this
 * encoder; an OpenAI client's bytes pass through): its fields as this vendor
 * takes them. reasoning_effort goes only to a model that reasons (the others
 * refuse it), top_k only to a vendor that takes it (OpenAI refuses it), the
 * prompt-cache marks only to a vendor that reads them, `user` within OpenAI's
 * length.
 */
function outgoingChat(request: ChatRequest, call: AdaptorCall): ChatRequest {
  const body: ChatRequest = { ...request, model: call.model };
  const row = call.channel ? findChannelType(call.channel.type) : undefined;
  const reasons = REASONING_MODELS.test(call.model.slice(call.model.lastIndexOf('/') + 1));
  if (body.reasoning_effort !== undefined && !reasons) delete body.reasoning_effort;
  // a reasoning model takes its limit as max_completion_tokens and refuses max_tokens
  if (reasons && typeof body.max_tokens === 'number') {
    body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
  }
  if (body.top_k !== undefined && row?.samplingTopK === false) delete body.top_k;
  if (row?.promptCacheMarks !== true) body.messages = body.messages.map(unmarked);
  if (typeof body.user === 'string') body.user = openAiUser(body.user);
  return body;
}

export const openAiAdaptor: UpstreamAdaptor = {
  protocol: 'openai',
  docs: 'https://platform.openai.com/docs/api-reference',
  operations: ALL_OPERATIONS,
  speaks: 'openai',
  // OpenAI answers some failures (a rate limit, a dead key) as an error object in a 200
  failureInOkBody: openAiFailureInOkBody,
  // only the types whose row says so serve /v1/responses; every other gets a Responses client's request as chat
  alsoSpeaks: (channelType, inbound) => inbound === 'openai-responses' && findChannelType(channelType)?.responses === true,
  transport: 'http',

  target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
    const base = baseUrlOf(channel);
    if (!base) return upstreamFailure(500, 'this channel has no base URL', { code: 'channel_base_url_missing', retryable: true });
    const row = findChannelType(channel.type);
    // Cloudflare's account id is part of its path, from `other` or the base URL; an imported channel may have neither
    const prefix = openAiPathPrefix(channel.type, channel.other, channel.baseUrl);
    if (prefix === undefined)
      return upstreamFailure(500, 'this channel has no account id (other)', { code: 'channel_account_missing', retryable: true });
    const path = call.operation === 'rerank' ? row?.rerank?.path : `${prefix}${OPENAI_OPERATION_PATHS[call.operation]}`;
    if (path === undefined)
      return upstreamFailure(501, `channel type ${channel.type} does not rerank`, { code: 'channel_type_unsupported', retryable: true });
    return {
      url: `${base}${path}`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        ...openAiAuthHeader(row, channel.key),
      },
    };
  },

  encodeChat(request: ChatRequest, call: AdaptorCall): string {
    const body = outgoingChat(request, call);
    if (!call.stream) return JSON.stringify(body);
    // a stream reports its usage only when asked to
    return JSON.stringify({ ...body, stream: true, stream_options: { ...request.stream_options, include_usage: true } });
  },
  decodeChat,
  decodeChatStream,
  encodeEmbeddings: (request: EmbeddingRequest, call: AdaptorCall) => JSON.stringify({ ...request, model: call.model }),
  decodeEmbeddings,
  // only the types whose row names a rerank endpoint rerank; a vendor with no chat serves embeddings besides
  servesOperation: (channelType, operation) => {
    if (operation === 'rerank') return rerankOf(channelType) !== undefined;
    // Sora's videos: OpenAI's own type, and the types that proxy its whole API (Realtime too)
    if (operation === 'videos') return findChannelType(channelType)?.realtime === true;
    return operation === 'embeddings' || findChannelType(channelType)?.noChat !== true;
  },
  encodeRerank,
  decodeRerank,
  failure: openAiFailure,
  // chat's own web_search_options, which OpenAI's search models take (gpt-4o-search-preview, gpt-5-search-api); the others refuse it
  webSearch: (model) => model.includes('search'),
};
