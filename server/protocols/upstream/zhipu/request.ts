// Which protocol a call speaks (v4 or v3), where it goes, and the request
// each protocol wants.
import { createHmac } from 'node:crypto';
import type { AdaptorCall, ChannelConfig, ChatMessage, ChatRequest, EmbeddingRequest, HttpTarget, UpstreamFailure } from '../../types';
import { contentText, trimmedBaseUrl, upstreamFailure } from '../../shared';
import type { Json } from './json';

const DEFAULT_BASE_URL = 'https://open.bigmodel.cn';
/** How long a v3 JWT is valid; it is made afresh for every call. */
const JWT_LIFETIME_SECONDS = 3600;

// ---- which protocol ----

/** The channel of a call: `call.channel` when the relay passes it, else the one target() saw for this call. */
export function channelOf(call: AdaptorCall): ChannelConfig | undefined {
  return call.channel;
}

function usesV3(channel: ChannelConfig | undefined, call: AdaptorCall): boolean {
  if (channel) return channel.other.trim().toLowerCase() === 'v3';
  // no channel known: the v3 models were the chatglm_* / characterglm family
  return /^(chatglm_|characterglm)/i.test(call.model);
}

function baseUrl(channel: ChannelConfig): string {
  // a base URL stored with the API prefix (as for an OpenAI-compatible row) still works
  return trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL).replace(/\/api\/paas\/v[34]$/, '');
}

/** Zhipu's v3 API JWT: HS256 over the key's secret, `sign_type: SIGN`, times in milliseconds. */
export function zhipuJwt(key: string, now: number): string | undefined {
  const parts = key.trim().split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  const [id, secret] = parts;
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = encode({ alg: 'HS256', typ: 'JWT', sign_type: 'SIGN' });
  const claims = encode({ api_key: id, exp: (now + JWT_LIFETIME_SECONDS) * 1000, timestamp: now * 1000 });
  const signature = createHmac('sha256', secret).update(`${head}.${claims}`).digest('base64url');
  return `${head}.${claims}.${signature}`;
}

// ---- requests ----

/** v3's prompt: the conversation as `{role, content}` turns; a system message stays a system turn. */
function v3Turn(message: ChatMessage): { role: string; content: string } {
  let role = message.role === 'developer' ? 'system' : 'user';
  if (message.role === 'assistant' || message.role === 'system') role = message.role;
  return { role, content: contentText(message.content) };
}

function encodeV3(request: ChatRequest): string {
  const body: Json = { prompt: request.messages.map(v3Turn) };
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  // increments, not the whole text so far, in the sse-invoke stream (ignored by invoke)
  body.incremental = true;
  return JSON.stringify(body);
}

// ---- the adaptor's request side ----

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  const base = baseUrl(channel);
  const json = { 'Content-Type': 'application/json', Accept: call.stream ? 'text/event-stream' : 'application/json' };
  if (call.operation === 'embeddings') {
    return { url: `${base}/api/paas/v4/embeddings`, method: 'POST', headers: { ...json, Authorization: `Bearer ${channel.key.trim()}` } };
  }
  if (usesV3(channel, call)) {
    const token = zhipuJwt(channel.key, call.now);
    if (!token)
      return upstreamFailure(401, 'invalid Zhipu key: expected <id>.<secret>', {
        code: 'invalid_zhipu_key',
        type: 'authentication_error',
        deadKey: true,
      });
    const method = call.stream ? 'sse-invoke' : 'invoke';
    return {
      url: `${base}/api/paas/v3/model-api/${encodeURIComponent(call.model)}/${method}`,
      method: 'POST',
      headers: { ...json, Authorization: token },
    };
  }
  return {
    url: `${base}/api/paas/v4/chat/completions`,
    method: 'POST',
    headers: { ...json, Authorization: `Bearer ${channel.key.trim()}` },
  };
}

export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  if (usesV3(channelOf(call), call)) return encodeV3(request);
  const body: ChatRequest = { ...request, model: call.model };
  // v4 knows max_tokens only: a limit sent as OpenAI's newer name must not be lost
  if (body.max_tokens === undefined && typeof body.max_completion_tokens === 'number') {
    body.max_tokens = body.max_completion_tokens;
    delete body.max_completion_tokens;
  }
  return JSON.stringify(body);
}

export function encodeEmbeddings(request: EmbeddingRequest, call: AdaptorCall): string {
  return JSON.stringify({ ...request, model: call.model });
}
