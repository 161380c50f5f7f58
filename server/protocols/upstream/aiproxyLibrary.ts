// AI Proxy's knowledge-base ("library") chat, as one-api's type 21 speaks it:
// the last user message is asked of the library the channel names, the answer
// comes with the documents it drew on (appended as a numbered list of links,
// as one-api appends them). The key is the AI Proxy key (bearer); the
// library id is the channel's `other`.
// API reference: https://docs.aiproxy.io/dev/library
//
// The library reports no token usage: its answers are billed at the
// gateway's own count (the prompt as counted before the call, the answer's
// text by the model's tokenizer), as one-api bills them.
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatRequest,
  ChatResponse,
  ChatStreamDecoder,
  HttpTarget,
  UpstreamAdaptor,
  UpstreamFailure,
  Usage,
} from '../types';
import { assembleChatResponse, chunkOf, contentText, isObject, parseJson, SseOrBareBody, trimmedBaseUrl, upstreamFailure } from '../shared';

const DEFAULT_BASE_URL = 'https://api.aiproxy.io';
const NO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };

interface LibraryDocument {
  title?: string;
  url?: string;
}

/** The documents as one-api writes them under an answer; '' for none. */
export function documentsMarkdown(documents: readonly LibraryDocument[]): string {
  if (documents.length === 0) return '';
  return `\n\n参考文档：\n${documents.map((document, index) => `${index + 1}. [${document.title ?? ''}](${document.url ?? ''})\n`).join('')}`;
}

const documentsOf = (value: Record<string, unknown>): LibraryDocument[] =>
  Array.isArray(value.documents) ? value.documents.filter(isObject) : [];

function target(channel: ChannelConfig): HttpTarget | UpstreamFailure {
  if (!channel.other.trim())
    return upstreamFailure(500, 'this AI Proxy library channel names no library (its `other` is the library id)', {
      code: 'channel_library_missing',
      retryable: true,
    });
  return {
    url: `${trimmedBaseUrl(channel.baseUrl, DEFAULT_BASE_URL)}/api/library/ask`,
    method: 'POST',
    headers: { Authorization: `Bearer ${channel.key}`, 'Content-Type': 'application/json' },
  };
}

function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  if (request.tools && request.tools.length > 0) throw new Error('an AI Proxy library answers questions: function tools cannot be offered');
  if (request.messages.some((message) => message.role === 'tool' || message.role === 'function'))
    throw new Error('an AI Proxy library answers questions: tool results cannot be sent');
  const last = [...request.messages].reverse().find((message) => message.role === 'user');
  const query = last ? contentText(last.content) : '';
  if (!query.trim()) throw new Error('an AI Proxy library answers the last user message, and there is no text in it');
  return JSON.stringify({ model: call.model, query, libraryId: call.channel?.other.trim() ?? '', stream: call.stream });
}

/** `{success: false, errCode, errMsg}`: AI Proxy's refusal, in any status. */
/** What an error answer says: its errMsg, else its message, else its code in words. */
function errorMessage(value: Record<string, unknown>, code: number): string {
  if (typeof value.errMsg === 'string' && value.errMsg) return value.errMsg;
  return typeof value.message === 'string' ? value.message : `AI Proxy refused the question (code ${code})`;
}

function errorOf(value: unknown, status: number): UpstreamFailure | undefined {
  if (!isObject(value)) return undefined;
  const code = typeof value.errCode === 'number' ? value.errCode : 0;
  if (value.success !== false && code === 0) return undefined;
  const message = errorMessage(value, code);
  // the key itself: not accepted, or its points spent
  const deadKey =
    status === 401 || status === 402 || /invalid (api )?key|api key.*(invalid|not exist)|insufficient|余额不足/i.test(message);
  let effective = status;
  if (status < 400) effective = deadKey ? 401 : 400;
  return upstreamFailure(effective, message, {
    type: 'aiproxy_error',
    code: code || null,
    deadKey,
    retryable: deadKey || effective === 429 || effective >= 500,
  });
}

function failure(status: number, body: string): UpstreamFailure {
  const known = errorOf(parseJson(body), status);
  if (known) return known;
  const text = body.trim().slice(0, 500);
  return upstreamFailure(status, text ? `AI Proxy answered HTTP ${status}: ${text}` : '', { type: 'aiproxy_error' });
}

/** The usage is left at 0: the relay then bills its own count. */
function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const parsed = parseJson(body);
  const error = errorOf(parsed, 200);
  if (error) return error;
  if (!isObject(parsed) || typeof parsed.answer !== 'string')
    return upstreamFailure(502, `AI Proxy answered without an answer: ${body.slice(0, 200)}`, { type: 'aiproxy_error', retryable: true });
  const text = parsed.answer + documentsMarkdown(documentsOf(parsed));
  return assembleChatResponse(
    [chunkOf(call, call.model, [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: 'stop' }])],
    call,
    NO_USAGE,
  );
}

/** `data: {content, finish, model, documents}` events; the documents come once the answer is whole. */
function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseOrBareBody();
  let documents: LibraryDocument[] = [];
  let started = false;
  let finished = false;
  let failed: UpstreamFailure | undefined;
  const chunk = (content: string, finish: 'stop' | null): ChatChunk => {
    const delta = started ? { content } : { role: 'assistant' as const, content };
    started = true;
    return chunkOf(call, call.model, [{ index: 0, delta, finish_reason: finish }]);
  };
  const close = (): ChatChunk[] => {
    if (finished || failed) return [];
    finished = true;
    return [chunk(documentsMarkdown(documents), 'stop')];
  };
  const handle = (data: string): ChatChunk[] => {
    if (finished || failed) return [];
    if (data.trim() === '[DONE]') return close();
    const event = parseJson(data);
    failed = errorOf(event, 200);
    if (failed || !isObject(event)) return [];
    if (documentsOf(event).length > 0) documents = documentsOf(event);
    const out = typeof event.content === 'string' && event.content ? [chunk(event.content, null)] : [];
    return event.finish === true ? [...out, ...close()] : out;
  };
  return {
    push: (data) => parser.push(data).flatMap((event) => handle(event.data)),
    end() {
      const { events, bareBody } = parser.end();
      const chunks = events.flatMap((event) => handle(event.data));
      if (bareBody && !failed)
        failed =
          errorOf(parseJson(bareBody), 200) ??
          upstreamFailure(502, `AI Proxy answered a stream with no events: ${bareBody.slice(0, 200)}`, {
            type: 'aiproxy_error',
            retryable: true,
          });
      // a stream that just ends has ended its answer (one-api's reading)
      return failed ? chunks : [...chunks, ...close()];
    },
    // none reported: the relay counts
    usage: () => undefined,
    failure: () => failed,
    done: () => finished,
  };
}

export const aiProxyLibraryAdaptor: UpstreamAdaptor = {
  protocol: 'aiproxy-library',
  docs: 'https://docs.aiproxy.io/dev/library',
  operations: new Set(['chat']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  failure,
};
