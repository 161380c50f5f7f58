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
  if (options.bound) return Buffer.byteLength(text, 'utf8');
  if (options.approximate) return Math.floor(Buffer.byteLength(text, 'utf8') * 0.38);
  return encoding(usesO200k(model) ? 'o200k_base' : 'cl100k_base')(text);
}

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
      for (const part of message.content as unknown[]) if (isObject(part) && typeof part.text !== 'string') total += countPartTokens(part, model, options);
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
  if (Array.isArray(input)) return input.reduce<number>((sum, item) => sum + (Array.isArray(item) ? item.length : countInputTokens(item, model, options)), 0);
  return 0;
}

/** A non-text part (an image, audio, a file): what its vendor bills for it where the request tells, its text otherwise. */
export function countPartTokens(part: unknown, model: string, options: CountOptions = {}): number {
  return measurePrompt(part, model, (text) => countTextTokens(text, model, options)).tokens;
}

/** What a request's tool definitions and output format add to a chat prompt (the vendor renders them into it). */
export function countChatExtrasTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  let total = 0;
  for (const field of ['tools', 'functions', 'tool_choice', 'function_call', 'response_format']) {
    const value = body[field];
    if (value !== undefined && value !== null) total += countTextTokens(typeof value === 'string' ? value : JSON.stringify(value), model, options);
  }
  return total;
}
