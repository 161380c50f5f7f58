// The playground's call to the relay: POST /v1/chat/completions, streamed,
// with one of the user's own keys as the bearer, so the answer is routed,
// billed and logged as any client's would be. Not through httpClient: the
// relay authenticates by key rather than by session (its 401 means the key
// was refused, never that the session ended, so it must not sign the user
// out), and it answers in OpenAI's shapes (an SSE stream of chunks, or
// `{error: {message, type, code}}`), not in the console's envelope. It asks
// the stream's usage (stream_options.include_usage) and reads the exchange's
// X-Request-Id, so the page can report each turn and find its log row.
// https://platform.openai.com/docs/api-reference/chat/create

/** One message of the conversation, as Chat Completions takes it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
}

/** The usage the stream's last chunk reports (stream_options.include_usage). */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache (prompt_tokens_details.cached_tokens). */
  cachedTokens: number;
}

/** What a call tells beside its text, filled in as it goes: its request id once answered, its usage at the end. */
export interface CallInfo {
  requestId?: string;
  usage?: ChatUsage;
}

/** A refusal of the relay (or of the upstream, mid-stream): the HTTP status (0: no answer) and OpenAI's error fields. */
export class RelayError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    /** The Retry-After header's seconds, when the relay sent one. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'RelayError';
  }
}

/** Base address from the build (VITE_SERVER), as httpClient's; empty means same origin. */
const serverBase = (import.meta.env?.VITE_SERVER as string | undefined) ?? '';

/** The OpenAI base URL of this gateway (its origin and /v1), as a client outside the console uses it. */
export function gatewayBaseUrl(): string {
  return `${(serverBase || window.location.origin).replace(/\/+$/, '')}/v1`;
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The usage of a chunk that carries one, in the console's terms. */
function usageOf(usage: unknown): ChatUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const fields = usage as { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } };
  return {
    promptTokens: count(fields.prompt_tokens),
    completionTokens: count(fields.completion_tokens),
    cachedTokens: count(fields.prompt_tokens_details?.cached_tokens),
  };
}

interface ErrorBody {
  error?: { message?: unknown; code?: unknown };
}

const errorOf = (body: ErrorBody | undefined, status: number, fallback: string, retryAfter?: string | null) =>
  new RelayError(
    typeof body?.error?.message === 'string' && body.error.message ? body.error.message : fallback,
    status,
    typeof body?.error?.code === 'string' ? body.error.code : undefined,
    retryAfter && Number.isFinite(Number(retryAfter)) ? Number(retryAfter) : undefined,
  );

/** Each `data:` payload of an SSE stream, as it completes; ends at `[DONE]` or when the stream does. */
async function* ssePayloads(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  // a stop ends a read that waits on the network at once, whatever fetch does with the abort
  const stop = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', stop, { once: true });
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).replace(/\r$/, '');
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
        if (!line.startsWith('data:')) continue; // comments (keep-alives), event names and blank separators
        const payload = line.slice(5).trim();
        if (payload === '[DONE]') return;
        if (payload) yield payload;
      }
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    reader.releaseLock();
  }
}

/**
 * Sends the conversation and yields the answer's text as it streams in.
 * Throws a RelayError for a refusal (before or during the stream); an abort
 * through `signal` ends it with the AbortError of fetch. `info` receives the
 * exchange's request id as soon as the relay answers (a refusal's too) and
 * the usage when the stream reports it.
 */
export async function* streamChat(key: string, request: ChatRequest, signal?: AbortSignal, info: CallInfo = {}): AsyncGenerator<string> {
  let response: Response;
  try {
    response = await fetch(`${serverBase}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } }),
      credentials: 'omit',
      signal,
    });
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') throw error;
    throw new RelayError((error as Error)?.message || String(error), 0);
  }
  info.requestId = response.headers.get('x-request-id') || undefined;
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => undefined)) as ErrorBody | undefined;
    throw errorOf(body, response.status, response.statusText || `HTTP ${response.status}`, response.headers.get('retry-after'));
  }
  for await (const payload of ssePayloads(response.body, signal)) {
    let chunk: ErrorBody & { choices?: Array<{ delta?: { content?: unknown } }>; usage?: unknown };
    try {
      chunk = JSON.parse(payload) as typeof chunk;
    } catch {
      continue; // a line this reader cannot use is skipped, as OpenAI's own clients do
    }
    // an upstream that fails after the first byte says so in the stream (the status is already 200)
    if (chunk.error) throw errorOf(chunk, response.status, 'the upstream failed during the answer');
    info.usage = usageOf(chunk.usage) ?? info.usage;
    const text = chunk.choices?.[0]?.delta?.content;
    if (typeof text === 'string' && text) yield text;
  }
}
