// The OpenAI client side of the relay (Chat Completions and its siblings:
// completions, edits, embeddings, moderations): what the relay reads from a
// client's request before it is sent on (the model, the prompt's token bound,
// the output limit) and from the answer on its way back (the usage of a JSON
// answer read from its bytes, and of an SSE stream as it passes). Pure: no
// I/O, no Fastify, no database.
//
// The stream watcher hands complete events on unchanged (optionally minus the
// usage-only event the gateway asked for on the client's behalf) and
// remembers enough to bill: the upstream's usage when it sends one, otherwise
// the streamed text, which is only parsed at the end and only if no usage
// arrived (JSON parsing every chunk would cost the hot path for nothing).
import { StringDecoder } from 'node:string_decoder';
import { answerField } from './jsonField';
import { textOfPayload } from './deltaText';
import { batchSize, promptBound } from './promptBound';
import { countChatExtrasTokens, countChatPromptTokens, countInputTokens, type CountOptions } from './tokenCount';
import type { InboundCodec, InboundError, JsonAnswer, Usage, TextMode, UsageWatcher } from './types';

export type { Usage } from './types';

/** OpenAI's moderations endpoint picks a model when none is given; so do we, to route and price it. */
export const DEFAULT_MODERATION_MODEL = 'text-moderation-latest';

/** The trimmed `model` of a body, or ''. */
const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

function requestedModel(mode: TextMode, body: Record<string, unknown>, pathModel: string | undefined): string {
  const model = modelOf(body);
  if (model) return model;
  if (pathModel) return pathModel;
  return mode === 'moderations' ? DEFAULT_MODERATION_MODEL : '';
}

/** How many prompts a request's body holds: a chat one; a completions or embeddings batch, as many as its list. */
function promptBatch(mode: TextMode, body: Record<string, unknown>): number {
  if (mode === 'chat') return 1;
  return batchSize(mode === 'completions' ? body.prompt : body.input);
}

function promptTokens(mode: TextMode, body: Record<string, unknown>, model: string, options: CountOptions): number {
  if (options.bound) return promptBound(body, model, undefined, promptBatch(mode, body), options.contextWindow);
  switch (mode) {
    case 'chat':
      return countChatPromptTokens(body.messages, model, options) + countChatExtrasTokens(body, model, options);
    case 'completions':
      return countInputTokens(body.prompt, model, options);
    case 'edits':
      return countInputTokens(body.input, model, options) + countInputTokens(body.instruction, model, options);
    default:
      return countInputTokens(body.input, model, options);
  }
}

interface ReportedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
}

/**
 * The usage a JSON answer reports, read from its bytes alone when they tell
 * (the value is parsed only when they do not); undefined when it reports none.
 */
function reportedJsonUsage(json: JsonAnswer): Usage | undefined {
  const usage = answerField(json, 'usage') as ReportedUsage | null | undefined;
  if (usage && typeof usage === 'object' && Number(usage.prompt_tokens ?? 0) + Number(usage.completion_tokens ?? 0) > 0) {
    return {
      promptTokens: Number(usage.prompt_tokens) || 0,
      completionTokens: Number(usage.completion_tokens) || 0,
      cachedPromptTokens: Number(usage.prompt_tokens_details?.cached_tokens) || 0,
    };
  }
  return undefined;
}

/** The generated text of a parsed answer (what is counted when it reports no usage). */
function answerText(value: unknown): string {
  const parsed = (value ?? {}) as { choices?: Array<{ message?: { content?: unknown }; text?: unknown }> };
  const choices = Array.isArray(parsed.choices) ? parsed.choices : [];
  return choices
    .map((choice) => {
      if (typeof choice?.message?.content === 'string') return choice.message.content;
      return typeof choice?.text === 'string' ? choice.text : '';
    })
    .join('');
}

/** OpenAI's reasoning models take max_completion_tokens and refuse max_tokens. */
const limitField = (model: string) => (/^(o1|o3|o4|gpt-5)/.test(model) ? 'max_completion_tokens' : 'max_tokens');

/** OpenAI's error object, as every OpenAI client protocol (chat, Responses) writes it. */
export const openAiErrorBody = (error: InboundError) =>
  JSON.stringify({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } });

export const openaiChat = {
  protocol: 'openai',
  assumedInLogs: true,
  contentType: 'application/json; charset=utf-8',
  model: requestedModel,
  check: (mode, body) =>
    mode === 'edits' && (typeof body.instruction !== 'string' || body.instruction === '')
      ? { message: 'field instruction is required', code: 'required_field_missing' }
      : undefined,
  promptTokens,
  outputLimit: (body) => Number(body.max_tokens ?? body.max_completion_tokens ?? 0) || 0,
  // completions' best_of candidates are generated and billed though only n come back
  answers: (mode, body) => {
    if (mode === 'chat') return Number(body.n ?? 1) || 1;
    return mode === 'completions' ? Math.max(Number(body.n ?? 1) || 1, Number(body.best_of ?? 1) || 1) : 1;
  },
  streamed: (body) => body.stream === true,
  streamUsageAskable: (mode) => mode === 'chat',
  clientAskedUsage: (body) => (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
  encodeChanged(body, change) {
    const limit = change.outputLimit === undefined ? {} : { [limitField(change.model)]: change.outputLimit };
    return JSON.stringify(
      change.askUsage
        ? {
            ...body,
            ...limit,
            model: change.model,
            stream_options: { ...(body.stream_options as object | undefined), include_usage: true },
          }
        : { ...body, ...limit, model: change.model },
    );
  },
  modelUnchanged: (body, upstreamModel) => upstreamModel === body.model,
  jsonUsage: reportedJsonUsage,
  answerText,
  watchStream: (stripUsageEvent) => new SseUsageWatcher(stripUsageEvent),
  errorBody: openAiErrorBody,
} satisfies InboundCodec;

// ---- the stream watcher ----

interface UsageShape {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
}

const EVENT_END = '\n\n';
const CARRIAGE_RETURN = 0x0d;
const EMPTY = Buffer.alloc(0);
const EVENT_END_BYTES = Buffer.from(EVENT_END);
const USAGE_KEY = Buffer.from('"usage"');
const DONE_MARK = Buffer.from('[DONE]');

const SPACE = 0x20;
const COLON = 0x3a;
const NULL_LITERAL = Buffer.from('null');

/** Where the next usage key with a value is, from `from` on; -1 when none comes. */
function nextUsage(bytes: Buffer, from: number): number {
  for (let at = bytes.indexOf(USAGE_KEY, from); at !== -1; at = bytes.indexOf(USAGE_KEY, at + USAGE_KEY.length)) {
    // OpenAI sends "usage":null in every chunk but the last when usage is asked for: nothing to read there
    let value = at + USAGE_KEY.length;
    while (bytes[value] === SPACE || bytes[value] === COLON) value += 1;
    const isNull =
      value + NULL_LITERAL.length <= bytes.length &&
      bytes.compare(NULL_LITERAL, 0, NULL_LITERAL.length, value, value + NULL_LITERAL.length) === 0;
    if (!isNull) return at;
  }
  return -1;
}

/** Where the next usage (not null) or end marker is, from `from` on; -1 when neither comes. */
function nextSpecial(bytes: Buffer, from: number): number {
  const usage = nextUsage(bytes, from);
  const done = bytes.indexOf(DONE_MARK, from);
  if (usage === -1) return done;
  return done === -1 ? usage : Math.min(usage, done);
}

export class SseUsageWatcher implements UsageWatcher {
  private pending = '';
  /** The start of an event still arriving, when chunks come as bytes. */
  private pendingBytes: Buffer | undefined;
  private decoder: StringDecoder | undefined;
  /** In stream order: data payloads of events read one by one, and chunks passed on whole (read only if needed). */
  private payloads: Array<string | Buffer> = [];
  /** How many bytes `payloads` holds; past FOLD_AT they are read into `folded` and let go. */
  private held = 0;
  /** The text of payloads already read, in stream order before those still held. */
  private folded = '';
  private usage: Usage | undefined;
  /** True once the upstream sent `data: [DONE]`. */
  done = false;

  /** @param stripUsageEvent drop events that carry only usage (choices empty). */
  constructor(private readonly stripUsageEvent: boolean) {}

  /**
   * Takes a chunk of bytes from upstream; returns what to write to the client
   * now. Whole events go on as the very same bytes, unparsed; only an event
   * that carries usage or the end marker is read (and a usage-only one maybe
   * dropped). Bytes of an incomplete event wait for the rest.
   */
  pushBytes(chunk: Buffer): Buffer | string {
    if (this.pending !== '' || chunk.indexOf(CARRIAGE_RETURN) !== -1) {
      // CRLF framing: the text path, through a decoder so no character split between chunks is lost
      const bytes = this.pendingBytes ? Buffer.concat([this.pendingBytes, chunk]) : chunk;
      this.pendingBytes = undefined;
      this.decoder ??= new StringDecoder('utf8');
      return this.push(this.decoder.write(bytes));
    }
    const data = this.pendingBytes ? Buffer.concat([this.pendingBytes, chunk]) : chunk;
    const end = data.lastIndexOf(EVENT_END_BYTES);
    if (end < 0) {
      this.pendingBytes = data;
      return EMPTY;
    }
    const complete = end + EVENT_END.length === data.length ? data : data.subarray(0, end + EVENT_END.length);
    this.pendingBytes = complete === data ? undefined : data.subarray(end + EVENT_END.length);
    let special = nextSpecial(complete, 0);
    if (special === -1) {
      this.hold(complete);
      return complete;
    }
    // only the events with usage or [DONE] are read; the runs between go on as slices of the same bytes
    const kept: Buffer[] = [];
    let runStart = 0;
    while (special !== -1) {
      const before = special === 0 ? -1 : complete.lastIndexOf(EVENT_END_BYTES, special);
      const eventStart = before === -1 ? 0 : before + EVENT_END.length;
      const eventEnd = complete.indexOf(EVENT_END_BYTES, special) + EVENT_END.length;
      if (eventStart > runStart) this.keep(kept, complete.subarray(runStart, eventStart));
      const event = complete.subarray(eventStart, eventEnd);
      if (this.handleEvents(event.toString('utf8')) !== '') kept.push(event);
      runStart = eventEnd;
      special = nextSpecial(complete, eventEnd);
    }
    if (runStart < complete.length) this.keep(kept, complete.subarray(runStart));
    return kept.length === 1 ? kept[0] : Buffer.concat(kept);
  }

  /** Plain events passed on whole: kept for the client, and for counting should no usage come. */
  private keep(kept: Buffer[], events: Buffer): void {
    kept.push(events);
    this.hold(events);
  }

  /**
   * Keeps a payload or run of events for a count should no usage come. A long
   * stream would keep every chunk (and the socket buffers they point into) to
   * its end, so past FOLD_AT bytes what is held is read into text and let go:
   * each chunk is still read at most once, and memory stays flat.
   */
  private hold(part: string | Buffer): void {
    this.payloads.push(part);
    this.held += part.length;
    if (this.held < FOLD_AT) return;
    this.folded += ownCopy(textOfPayloads(this.payloads));
    this.payloads = [];
    this.held = 0;
  }

  /** Takes a chunk from upstream; returns what to write to the client now (may be ''). */
  push(chunk: string): string {
    this.pending += chunk.includes('\r') ? chunk.replace(/\r\n/g, '\n') : chunk;
    const end = this.pending.lastIndexOf(EVENT_END);
    if (end < 0) return '';
    const complete = this.pending.slice(0, end + EVENT_END.length);
    this.pending = this.pending.slice(end + EVENT_END.length);
    return this.handleEvents(complete);
  }

  /** Whatever is left when the upstream ends, framed as a complete event. */
  flush(): string {
    if (this.pendingBytes) {
      this.pending += this.pendingBytes.toString('utf8');
      this.pendingBytes = undefined;
    }
    if (this.decoder) this.pending += this.decoder.end();
    if (!this.pending.trim()) return '';
    const rest = this.pending + EVENT_END;
    this.pending = '';
    return this.handleEvents(rest);
  }

  private handleEvents(text: string): string {
    let output = '';
    for (const event of text.split(EVENT_END)) {
      if (!event) continue;
      let keep = true;
      for (const line of event.split('\n')) {
        const payload = dataPayload(line);
        if (payload === undefined) continue;
        if (payload === '[DONE]') {
          this.done = true;
          continue;
        }
        if (payload.includes('"usage"')) {
          keep = this.readUsage(payload) && keep;
        } else {
          this.hold(payload);
        }
      }
      if (keep) output += event + EVENT_END;
    }
    return output;
  }

  /** Records usage; returns false when the event is usage-only and should be stripped. */
  private readUsage(payload: string): boolean {
    try {
      const parsed = JSON.parse(payload) as { usage?: UsageShape | null; choices?: unknown[] };
      if (parsed.usage && typeof parsed.usage === 'object') {
        this.usage = {
          promptTokens: Number(parsed.usage.prompt_tokens) || 0,
          completionTokens: Number(parsed.usage.completion_tokens) || 0,
          cachedPromptTokens: Number(parsed.usage.prompt_tokens_details?.cached_tokens) || 0,
        };
      }
      const usageOnly = Array.isArray(parsed.choices) && parsed.choices.length === 0;
      if (Array.isArray(parsed.choices) && parsed.choices.length > 0) this.hold(payload);
      return !(this.stripUsageEvent && usageOnly);
    } catch {
      return true;
    }
  }

  /** The upstream's own usage, if it sent one. */
  reportedUsage(): Usage | undefined {
    return this.usage;
  }

  /** Bytes of stream kept unread for a count; never more than FOLD_AT, however long the stream. */
  heldBytes(): number {
    return this.held;
  }

  /** The text streamed so far (chat deltas and completion texts), for counting locally. */
  streamedText(): string {
    return this.folded + textOfPayloads(this.payloads);
  }
}

/**
 * The text in a string of its own. The texts read from a chunk are slices of the chunk's string, and V8 keeps a
 * slice's whole parent alive: folded text kept as slices would hold on to every byte of the stream.
 */
const ownCopy = (text: string): string => Buffer.from(text, 'utf16le').toString('utf16le');

/** Bytes of stream a watcher holds unread before it reads them into text. */
// 8 KiB: a thousand streams held open grew RSS 23 MiB from their second minute to their fifth at 16 KiB, as every
// watcher's held chunks rose and fell together; 0.8 MiB at 8 KiB. Below it, a short answer (20 chunks, 4.6 KB) is never read.
export const FOLD_AT = 8 * 1024;

/** The chat deltas and completion texts of payloads and whole-event runs, in order. */
function textOfPayloads(parts: ReadonlyArray<string | Buffer>): string {
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') text += textOfPayload(part);
    else text += textOfEvents(part.toString('utf8'));
  }
  return text;
}

/** What a `data:` line carries; undefined for any other line. */
function dataPayload(line: string): string | undefined {
  return line.startsWith('data:') ? line.slice(line.charAt(5) === ' ' ? 6 : 5) : undefined;
}

/** The texts of the data payloads of whole events (a chunk passed on unparsed), line by line. */
function textOfEvents(events: string): string {
  let text = '';
  for (let start = 0; start < events.length;) {
    const newline = events.indexOf('\n', start);
    const end = newline === -1 ? events.length : newline;
    const payload = dataPayload(events.slice(start, end));
    if (payload !== undefined) text += textOfPayload(payload);
    start = end + 1;
  }
  return text;
}
