// Helpers every adaptor needs: SSE framing that survives bytes split
// anywhere, OpenAI usage and chunk builders, folding a stream's chunks into
// one answer, and failure construction; and the gateway's own API paths (the
// operation each asks for). Pure: no I/O.
import { StringDecoder } from 'node:string_decoder';
import type {
  AdaptorCall,
  ChatChunk,
  ChatChunkChoice,
  ChatChunkToolCall,
  ChatResponse,
  ChatStreamDecoder,
  ChatToolCall,
  FinishReason,
  OpenAIUsage,
  Operation,
  UpstreamFailure,
  Usage,
} from './types';

/** One server-sent event: its `event:` name (empty when none) and its `data:` lines joined by newlines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits decoded text into lines at CR, LF or CRLF, whatever the byte
 * boundaries (a UTF-8 character or a CRLF split across pushes included).
 * Every SSE dialect needs exactly this; the dialects differ only in what a
 * line means.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  push(bytes: Buffer | string): string[] {
    this.pending += typeof bytes === 'string' ? bytes : this.decoder.write(bytes);
    return this.drain(false);
  }

  /** The lines left, the unterminated last one included. */
  end(): string[] {
    this.pending += this.decoder.end();
    const lines = this.drain(true);
    if (this.pending) lines.push(this.pending);
    this.pending = '';
    return lines;
  }

  private drain(final: boolean): string[] {
    const lines: string[] = [];
    for (;;) {
      const newline = this.pending.search(/\r\n|\r|\n/);
      // a lone \r at the end may be the first half of \r\n: wait for more
      if (newline === -1 || (!final && newline === this.pending.length - 1 && this.pending[newline] === '\r')) break;
      const width = this.pending.startsWith('\r\n', newline) ? 2 : 1;
      lines.push(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + width);
    }
    return lines;
  }
}

/**
 * Splits a text/event-stream into events. Lines other than `event:` and
 * `data:` (ids, comments, retry) are ignored.
 */
export class SseParser {
  private readonly lines = new LineSplitter();
  private event = '';
  private data: string[] = [];

  push(bytes: Buffer | string): SseEvent[] {
    const events: SseEvent[] = [];
    for (const line of this.lines.push(bytes)) this.line(line, events);
    return events;
  }

  /** The events left; the stream's end closes an event still open. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    for (const line of this.lines.end()) this.line(line, events);
    this.line('', events);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event, data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/**
 * An SSE parser that keeps the raw bytes until the first event, for vendors
 * (Baidu, DashScope) that refuse a streamed call with a bare JSON body and no
 * `data:` lines: at the end, `bareBody` is that body ('' once any event came).
 */
export class SseOrBareBody {
  private readonly parser = new SseParser();
  private raw: Buffer[] | undefined = [];

  push(bytes: Buffer | string): SseEvent[] {
    const events = this.parser.push(bytes);
    if (this.raw) {
      if (events.length > 0) this.raw = undefined;
      else this.raw.push(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes);
    }
    return events;
  }

  end(): { events: SseEvent[]; bareBody: string } {
    const events = this.parser.end();
    const bareBody = this.raw && events.length === 0 ? Buffer.concat(this.raw).toString('utf8').trim() : '';
    this.raw = undefined;
    return { events, bareBody };
  }
}

/**
 * The first base URL given, without trailing slashes, so that endpoint paths
 * can be appended with their own leading slash.
 */
export function trimmedBaseUrl(...candidates: Array<string | undefined>): string {
  return (candidates.find(Boolean) ?? '').replace(/\/+$/, '');
}

/**
 * Embeddings in input order. Vendors may answer them out of order; callers
 * match them to their inputs by position, so the order is restored here.
 */
export function embeddingsInOrder(
  items: Array<{ index: number; embedding: number[] }>,
): Array<{ object: 'embedding'; index: number; embedding: number[] }> {
  return [...items]
    .sort((a, b) => a.index - b.index)
    .map((item) => ({ object: 'embedding' as const, index: item.index, embedding: item.embedding }));
}

/** Parses JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-negative integer from whatever a vendor sent (0 for anything else). */
export function count(value: unknown): number {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number > 0 ? Math.floor(number) : 0;
}

/** OpenAI's usage object for a bill. */
export function openAiUsage(usage: Usage): OpenAIUsage {
  const result: OpenAIUsage = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
  if (usage.cachedPromptTokens > 0 || usage.cacheCreationTokens) {
    result.prompt_tokens_details = { cached_tokens: usage.cachedPromptTokens };
    if (usage.cacheCreationTokens) result.prompt_tokens_details.cache_creation_tokens = usage.cacheCreationTokens;
  }
  if (usage.reasoningTokens) result.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return result;
}

/** A chunk of this call's stream. */
export function chunkOf(call: AdaptorCall, model: string, choices: ChatChunkChoice[], usage?: OpenAIUsage): ChatChunk {
  const chunk: ChatChunk = { id: call.responseId, object: 'chat.completion.chunk', created: call.now, model: model || call.model, choices };
  if (usage) chunk.usage = usage;
  return chunk;
}

/** Adds a streamed piece of a tool call to the calls built so far (by its index): a new call, or more of its name and arguments. */
function joinToolCall(tools: ChatToolCall[], call: ChatChunkToolCall): void {
  const existing = tools[call.index];
  if (!existing) {
    tools[call.index] = {
      id: call.id ?? '',
      type: 'function',
      function: { name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' },
    };
    return;
  }
  if (call.id) existing.id = call.id;
  if (call.function?.name) existing.function.name += call.function.name;
  if (call.function?.arguments) existing.function.arguments += call.function.arguments;
}

/**
 * Folds a stream's chunks into the one answer a non-streamed call gets:
 * content and reasoning concatenated, tool calls joined by index, the last
 * finish reason of each choice.
 */
export function assembleChatResponse(chunks: readonly ChatChunk[], call: AdaptorCall, usage: Usage): ChatResponse {
  interface Building {
    content: string;
    reasoning: string;
    hasContent: boolean;
    tools: ChatToolCall[];
    finish: FinishReason | null;
  }
  const choices = new Map<number, Building>();
  let id = call.responseId;
  let model = call.model;
  for (const chunk of chunks) {
    if (chunk.id) id = chunk.id;
    if (chunk.model) model = chunk.model;
    for (const choice of chunk.choices) {
      let building = choices.get(choice.index);
      if (!building) {
        building = { content: '', reasoning: '', hasContent: false, tools: [], finish: null };
        choices.set(choice.index, building);
      }
      if (typeof choice.delta.content === 'string') {
        building.content += choice.delta.content;
        building.hasContent = true;
      }
      if (typeof choice.delta.reasoning_content === 'string') building.reasoning += choice.delta.reasoning_content;
      for (const call of choice.delta.tool_calls ?? []) joinToolCall(building.tools, call);
      if (choice.finish_reason) building.finish = choice.finish_reason;
    }
  }
  if (choices.size === 0) choices.set(0, { content: '', reasoning: '', hasContent: true, tools: [], finish: 'stop' });
  return {
    id,
    object: 'chat.completion',
    created: call.now,
    model,
    choices: [...choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, building]) => {
        const tools = building.tools.filter(Boolean);
        const message: ChatResponse['choices'][number]['message'] = {
          role: 'assistant',
          content: building.hasContent || tools.length === 0 ? building.content : null,
        };
        if (tools.length > 0) message.tool_calls = tools;
        if (building.reasoning) message.reasoning_content = building.reasoning;
        return { index, message, finish_reason: building.finish ?? 'stop' };
      }),
    usage: openAiUsage(usage),
  };
}

/**
 * A classified failure. Retryable by default when another channel may do
 * better: a 5xx, a 429, or a dead key.
 */
export function upstreamFailure(
  status: number,
  message: string,
  details: { type?: string | null; code?: string | number | null; deadKey?: boolean; retryable?: boolean } = {},
): UpstreamFailure {
  const deadKey = details.deadKey ?? false;
  return {
    status,
    message: message || `upstream answered HTTP ${status}`,
    type: details.type ?? null,
    code: details.code ?? null,
    deadKey,
    retryable: details.retryable ?? (deadKey || status === 429 || status >= 500),
  };
}

/** A chat request's `stop` as the list of its non-empty strings (a single string is a list of one). */
export function stopList(stop: unknown): string[] {
  const given = Array.isArray(stop) ? (stop as unknown[]) : [];
  return (typeof stop === 'string' ? [stop] : given).filter((item): item is string => typeof item === 'string' && item !== '');
}

/** An embeddings input's texts: a string is one, a list gives its strings (token ids are no text). */
export function embeddingTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  return Array.isArray(input) ? input.filter((item): item is string => typeof item === 'string') : [];
}

/** The text of an OpenAI message's content: a string, or its text parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '',
    )
    .join('');
}

/** A data: URL's media type and base64 payload, or undefined for any other URL. */
export function dataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1], data: match[2] } : undefined;
}

/**
 * The largest output limit a request may ask for (max_tokens and its kin, in
 * every client protocol): far above any model's output limit, far below what
 * could overflow a reservation. The relay's field checks use it too.
 */
export const MAX_TOKENS_LIMIT = 10_000_000;

/** "a" or "an" before a word, by how it is spoken: "an anthropic channel", "an openai channel", "a gemini channel". */
export const withArticle = (word: string): string => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;

/** A JSON object (not null, not an array): what every reader of a vendor's untyped JSON asks first. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A field a client sent as text (an id, a name), printed as JavaScript prints any value; absent or null: ''. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : `${value as string}`;
}
const isOptionalNumber = (value: unknown) => value === undefined || value === null || (typeof value === 'number' && Number.isFinite(value));

/** What is wrong with one message of a chat request (`param` names it): its role, its content parts, its tool calls. */
function messageProblem(message: unknown, param: string): { message: string; param: string } | undefined {
  if (!isObject(message)) return { message: `${param} must be an object`, param };
  if (typeof message.role !== 'string') return { message: `${param}.role must be a string`, param: `${param}.role` };
  const { content } = message;
  if (content !== undefined && content !== null && typeof content !== 'string') {
    if (!Array.isArray(content) || !content.every(isObject))
      return { message: `${param}.content must be a string or an array of content parts`, param: `${param}.content` };
    for (const [partIndex, part] of content.entries()) {
      if (part.type === 'image_url' && !(isObject(part.image_url) && typeof part.image_url.url === 'string')) {
        return {
          message: `${param}.content[${partIndex}].image_url must be an object with a url`,
          param: `${param}.content[${partIndex}].image_url`,
        };
      }
    }
  }
  if (message.tool_calls !== undefined && message.tool_calls !== null) {
    const calls = message.tool_calls;
    if (
      !Array.isArray(calls) ||
      !calls.every((call) => isObject(call) && isObject(call.function) && typeof call.function.name === 'string')
    ) {
      return { message: `${param}.tool_calls must be an array of function calls`, param: `${param}.tool_calls` };
    }
  }
  return undefined;
}

/**
 * What is wrong with a chat request's shape, as far as an adaptor relies on
 * it (an OpenAI-speaking upstream checks the rest itself); undefined when it
 * can be translated. The message names the field, as OpenAI's errors do.
 */
export function chatRequestProblem(request: Record<string, unknown>): { message: string; param: string } | undefined {
  const { messages } = request;
  if (!Array.isArray(messages) || messages.length === 0) return { message: 'messages must be a non-empty array', param: 'messages' };
  for (const [index, message] of messages.entries()) {
    const problem = messageProblem(message, `messages[${index}]`);
    if (problem) return problem;
  }
  const { tools } = request;
  if (tools !== undefined && tools !== null) {
    if (
      !Array.isArray(tools) ||
      !tools.every((tool) => isObject(tool) && isObject(tool.function) && typeof tool.function.name === 'string')
    ) {
      return { message: 'tools must be an array of function tools, each with function.name', param: 'tools' };
    }
  }
  const { stop } = request;
  if (
    stop !== undefined &&
    stop !== null &&
    typeof stop !== 'string' &&
    !(Array.isArray(stop) && stop.every((item) => typeof item === 'string'))
  ) {
    return { message: 'stop must be a string or an array of strings', param: 'stop' };
  }
  for (const field of ['temperature', 'top_p', 'top_k', 'presence_penalty', 'frequency_penalty', 'seed'] as const) {
    if (!isOptionalNumber(request[field])) return { message: `${field} must be a number`, param: field };
  }
  return undefined;
}

/** Why a request's built-in tools (named as the client named them) stop it from going out as chat; undefined for none. */
export function uncarriedToolsReason(names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const unique = [...new Set(names)];
  return `the tools ${unique.map((name) => `"${name}"`).join(', ')} have no equivalent there (only function tools are carried); remove them or use a channel that serves this API`;
}

/**
 * The "stream" of a vendor that answers whole (DeepL, Replicate in sync
 * mode): the body is held until the upstream ends, then read by `read` into
 * the chunks a stream of it would be, with the usage, or a failure.
 */
export function wholeAnswerStream(read: (body: string) => { chunks: ChatChunk[]; usage: Usage } | UpstreamFailure): ChatStreamDecoder {
  const held: Buffer[] = [];
  let usage: Usage | undefined;
  let failed: UpstreamFailure | undefined;
  let finished = false;
  return {
    push(data) {
      held.push(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      return [];
    },
    end() {
      if (finished) return [];
      finished = true;
      const answer = read(Buffer.concat(held).toString('utf8'));
      if ('deadKey' in answer) {
        failed = answer;
        return [];
      }
      usage = answer.usage;
      return answer.chunks;
    },
    usage: () => usage,
    failure: () => failed,
    done: () => finished,
  };
}

// ---- the gateway's own API paths (OpenAI's) ----

/** Where each operation lives under the API's prefix (`/v1` for OpenAI). */
export const OPENAI_OPERATION_PATHS: Readonly<Record<Operation, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  edits: '/edits',
  embeddings: '/embeddings',
  moderations: '/moderations',
  images: '/images/generations',
  image_edit: '/images/edits',
  image_variation: '/images/variations',
  audio_speech: '/audio/speech',
  audio_transcription: '/audio/transcriptions',
  audio_translation: '/audio/translations',
  responses: '/responses',
  // a type's rerank path is its row's (`rerank.path`), not under the prefix
  rerank: '/rerank',
  realtime: '/realtime',
  videos: '/videos',
};

const OPERATIONS_BY_PATH = new Map(
  Object.entries(OPENAI_OPERATION_PATHS).map(([operation, path]) => [`/v1${path}`, operation as Operation]),
);

/** The operation a client path of OpenAI's asks for (`/v1/chat/completions` → chat); undefined for any other path. */
export function operationOfPath(path: string): Operation | undefined {
  const query = path.indexOf('?');
  return OPERATIONS_BY_PATH.get(query === -1 ? path : path.slice(0, query));
}
