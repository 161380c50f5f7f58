// Local token counting, used only when an upstream reports no usage (and for
// the reservation before a call). cl100k_base for the GPT-3.5/4 family and
// everything unknown, o200k_base for the GPT-4o/o-series family.
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

export interface CountOptions {
  /** ApproximateTokenEnabled: UTF-8 bytes x 0.38 instead of the tokenizer (cheap for huge prompts). */
  approximate?: boolean;
}

function usesO200k(model: string): boolean {
  return /^(gpt-4o|gpt-4\.1|gpt-5|o1|o3|o4|chatgpt-4o)/.test(model);
}

export function countTextTokens(text: string, model: string, options: CountOptions = {}): number {
  if (!text) return 0;
  if (options.approximate) return Math.floor(Buffer.byteLength(text, 'utf8') * 0.38);
  return usesO200k(model) ? countO200k(text) : countCl100k(text);
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

/** Fixed cost of a non-text part (an image): OpenAI bills low-detail images at 85 tokens. */
const NON_TEXT_PART_TOKENS = 85;

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
      total += NON_TEXT_PART_TOKENS * message.content.filter((part) => typeof part?.text !== 'string').length;
    }
    if (typeof message.role === 'string') total += countTextTokens(message.role, model, options);
    if (typeof message.name === 'string') total += (legacy ? -1 : 1) + countTextTokens(message.name, model, options);
  }
  return total + 3;
}

/** Prompt or input fields of completions, embeddings and moderations: a string or an array of strings. */
export function countInputTokens(input: unknown, model: string, options: CountOptions = {}): number {
  if (typeof input === 'string') return countTextTokens(input, model, options);
  if (Array.isArray(input)) {
    return input.reduce<number>((sum, item) => sum + (typeof item === 'string' ? countTextTokens(item, model, options) : 0), 0);
  }
  return 0;
}
