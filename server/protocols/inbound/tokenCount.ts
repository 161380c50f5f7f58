// Local token counting, used only when an upstream reports no usage (and for
// the reservation before a call). cl100k_base for the GPT-3.5/4 family and
// everything unknown, o200k_base for the GPT-4o/o-series family.
import { createRequire } from 'node:module';
import { measurePrompt } from './promptBound';
import { isObject } from '../shared';

type CountTokens = (text: string) => number;

// Each encoding's tables take about 40 MiB once loaded, and most requests
// never need one (upstreams report usage; reservations use a byte bound), so
// an encoding is loaded on first use, synchronously, from the package's CommonJS build.
const requireEncoding = createRequire(import.meta.url);
const encodings = new Map<string, CountTokens>();

function encoding(name: 'cl100k_base' | 'o200k_base'): CountTokens {
  let count = encodings.get(name);
  if (!count) {
    count = (requireEncoding(`gpt-tokenizer/encoding/${name}`) as { countTokens: CountTokens }).countTokens;
    encodings.set(name, count);
  }
  return count;
}

export interface CountOptions {
  /** ApproximateTokenEnabled: UTF-8 bytes x 0.38 instead of the tokenizer (cheap for huge prompts). */
  approximate?: boolean;
  /**
   * An upper bound instead of a count: the UTF-8 length, since every token of
   * these encodings stands for at least one byte. Free to compute, it lets a
   * reservation hold enough without loading or running a tokenizer.
   */
  bound?: boolean;
  /** With `bound`: the model's context window as the catalog knows it (the relay asks billing), which caps the bound. */
  contextWindow?: number;
  /**
   * Set by countPaced: each text is put here uncounted (countTextTokens
   * answers 0 for it), to be counted afterwards a few milliseconds at a time.
   */
  collect?: string[];
}

function usesO200k(model: string): boolean {
  return /^(gpt-4o|gpt-4\.1|gpt-5|o1|o3|o4|chatgpt-4o)/.test(model);
}

/** Whether the tokenizers here are the vendor's own for this model (OpenAI's families), so a count by them is what the vendor bills. */
export function hasVendorTokenizer(model: string): boolean {
  return /^(gpt-|chatgpt-|o1|o3|o4|text-|davinci|curie|babbage|ada)/.test(model.slice(model.lastIndexOf('/') + 1));
}

export function countTextTokens(text: string, model: string, options: CountOptions = {}): number {
  if (!text) return 0;
  if (options.collect && !options.bound && !options.approximate) {
    options.collect.push(text);
    return 0;
  }
  if (options.bound) return Buffer.byteLength(text, 'utf8');
  if (options.approximate) return Math.floor(Buffer.byteLength(text, 'utf8') * 0.38);
  const count = encoderFor(model);
  let total = 0;
  for (const piece of pieces(text)) total += count(piece.text) + piece.extra;
  return total;
}

const encoderFor = (model: string) => encoding(usesO200k(model) ? 'o200k_base' : 'cl100k_base');

/**
 * Runs longer than this without a break between spaces and non-spaces are
 * counted a piece of this size at a time. The encodings split text into
 * words before merging bytes, and the merging costs the square of a word's
 * length: one word of 100,000 characters (a prompt without spaces, Chinese
 * text, base64) held the event loop for 14 s. In pieces it costs a few
 * milliseconds; each cut adds a token for what a merge across it could
 * have saved, so the count stays at or above the whole word's.
 */
export const RUN_PIECE = 256;
/** Ordinary text is counted this many characters at a time, cut where a space begins (the encodings split words there anyway). */
const TEXT_PIECE = 8192;
const LONG_RUN = new RegExp(`\\S{${RUN_PIECE + 1},}|\\s{${RUN_PIECE + 1},}`, 'g');

/** The text in the pieces it is counted in, each with the tokens its cut may add. Linear in the text's length. */
function* pieces(text: string): Generator<{ text: string; extra: number }> {
  if (text.length <= RUN_PIECE) {
    yield { text, extra: 0 };
    return;
  }
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const start = run.index;
    if (start > from) yield* textPieces(text, from, start);
    const end = start + run[0].length;
    let piece = start;
    while (piece < end) {
      let cut = Math.min(end, piece + RUN_PIECE);
      // never between the two halves of a surrogate pair
      if (cut < end && (text.charCodeAt(cut) & 0xfc00) === 0xdc00) cut += 1;
      yield { text: text.slice(piece, cut), extra: 1 };
      piece = cut;
    }
    from = end;
  }
  if (from < text.length) yield* textPieces(text, from, text.length);
}

/** Ordinary text (no run longer than RUN_PIECE) from `from` to `to`, cut before a space every TEXT_PIECE characters or so. */
function* textPieces(text: string, from: number, to: number): Generator<{ text: string; extra: number }> {
  let start = from;
  while (to - start > TEXT_PIECE) {
    const space = text.lastIndexOf(' ', start + TEXT_PIECE);
    // a space within the last RUN_PIECE characters exists: the runs longer than that were cut out already
    const cut = space > start ? space : start + TEXT_PIECE;
    yield { text: text.slice(start, cut), extra: space > start ? 0 : 1 };
    start = cut;
  }
  if (to > start) yield { text: text.slice(start, to), extra: 0 };
}

/** Work done between two turns of the event loop while counting, in milliseconds. */
const PACED_SLICE_MS = 4;

/**
 * countTextTokens for the texts of one request, without holding the event
 * loop: the pieces are counted a few milliseconds at a time, with a turn of
 * the event loop between, so other requests go on while a huge prompt is
 * counted. Past `deadlineMs` in all, the count stops and the byte bound
 * (never below the count) is answered instead.
 */
export async function countTextsPaced(
  texts: readonly string[],
  model: string,
  options: CountOptions & { deadlineMs?: number } = {},
): Promise<number> {
  if (options.bound || options.approximate) return texts.reduce((sum, text) => sum + countTextTokens(text, model, options), 0);
  const count = encoderFor(model);
  const started = performance.now();
  const deadline = started + (options.deadlineMs ?? COUNT_DEADLINE_MS);
  let sliceStarted = started;
  let total = 0;
  for (const text of texts) {
    if (!text) continue;
    for (const piece of pieces(text)) {
      total += count(piece.text) + piece.extra;
      const now = performance.now();
      // the deadline is checked after every piece, not only at a slice's end: a count quick enough to finish inside
      // one slice must still give way once its deadline has passed
      if (now >= deadline) return texts.reduce((sum, each) => sum + Buffer.byteLength(each, 'utf8'), 0);
      if (now - sliceStarted < PACED_SLICE_MS) continue;
      await new Promise((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
  return total;
}

/**
 * What `count` (a protocol's counter, given the options to pass on) comes to,
 * with every text it meets counted paced (countTextsPaced) rather than at once.
 */
export async function countPaced(model: string, options: CountOptions, count: (options: CountOptions) => number): Promise<number> {
  const texts: string[] = [];
  const rest = count({ ...options, collect: texts });
  return rest + (await countTextsPaced(texts, model, options));
}

/** How long a paced count may take before the byte bound is answered instead. */
export const COUNT_DEADLINE_MS = 5_000;

/** Text of a message `content`: a string, or the text parts of a multi-part array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      text += (part as { text: string }).text;
    }
  }
  return text;
}

interface ChatMessage {
  role?: unknown;
  content?: unknown;
  name?: unknown;
}

/** OpenAI's chat accounting: 3 per message + content + role (+1 + name), +3 for the reply primer. */
export function countChatPromptTokens(messages: unknown, model: string, options: CountOptions = {}): number {
  if (!Array.isArray(messages)) return 0;
  const legacy = model === 'gpt-3.5-turbo-0301';
  let total = 0;
  for (const message of messages as ChatMessage[]) {
    if (!message || typeof message !== 'object') continue;
    total += legacy ? 4 : 3;
    total += countTextTokens(contentText(message.content), model, options);
    if (Array.isArray(message.content)) {
      for (const part of message.content as unknown[])
        if (isObject(part) && typeof part.text !== 'string') total += countPartTokens(part, model, options);
    }
    if (typeof message.role === 'string') total += countTextTokens(message.role, model, options);
    if (typeof message.name === 'string') total += (legacy ? -1 : 1) + countTextTokens(message.name, model, options);
  }
  return total + 3;
}

/**
 * Prompt or input fields of completions, embeddings and moderations: a string,
 * an array of strings, an array of token ids, or an array of those arrays
 * (each id is one token).
 */
export function countInputTokens(input: unknown, model: string, options: CountOptions = {}): number {
  if (typeof input === 'string') return countTextTokens(input, model, options);
  if (typeof input === 'number') return 1;
  if (Array.isArray(input))
    return input.reduce<number>((sum, item) => sum + (Array.isArray(item) ? item.length : countInputTokens(item, model, options)), 0);
  return 0;
}

/** A non-text part (an image, audio, a file): what its vendor bills for it where the request tells, its text otherwise. */
export function countPartTokens(part: unknown, model: string, options: CountOptions = {}): number {
  return measurePrompt(part, model, (text) => countTextTokens(text, model, options), true).tokens;
}

/** What a request's tool definitions and output format add to a chat prompt (the vendor renders them into it). */
export function countChatExtrasTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  let total = 0;
  for (const field of ['tools', 'functions', 'tool_choice', 'function_call', 'response_format']) {
    const value = body[field];
    if (value !== undefined && value !== null)
      total += countTextTokens(typeof value === 'string' ? value : JSON.stringify(value), model, options);
  }
  return total;
}
