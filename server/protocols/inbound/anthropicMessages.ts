// The Anthropic Messages client side of the relay (`POST /v1/messages`, what
// Claude Code and the Anthropic SDKs call). Pure: no I/O.
//
// Read from a request: the key (`x-api-key`, else `Authorization: Bearer`),
// the model, `max_tokens` (required by Anthropic; its absence is a 400 in
// Anthropic's shape), the prompt's bound and count. For a channel that speaks
// Messages (Anthropic's own) the client's bytes go on with only the model
// changed, and the answer's usage is read as it passes (the JSON `usage`, the
// stream's message_start and message_delta). For any other channel the request
// is decoded into the relay's chat form (`chatRequest`) and the decoded answer
// written back as a Messages answer (`encodeResponse`, `encodeStream`: the
// exact event sequence message_start, content_block_start/delta/stop per
// block, message_delta with the stop reason and usage, message_stop).
//
// Usage: Anthropic's `input_tokens` excludes the prompt-cache reads and writes,
// so the prompt billed is the sum of the three (as the upstream adaptor reads it).
//
// The request's chat form is in ./anthropicMessagesRequest.ts, the answers
// written back in ./anthropicMessagesAnswer.ts; here are the codec, the
// prompt's count and the passthrough stream watcher.
import type { IncomingHttpHeaders } from 'node:http';
import { anthropicErrorBody, encodeResponse, MessagesStreamEncoder, type AnthropicUsage } from './anthropicMessagesAnswer';
import { blockText, chatRequestOf, systemText, uncarriedTools, type Block } from './anthropicMessagesRequest';
import { reportedAnswerUsage } from './jsonField';
import { PassingUsageWatcher, positiveWhole, selfReportingBodyRules } from './passingWatcher';
import { promptBound } from './promptBound';
import { countPartTokens, countTextTokens, type CountOptions } from './tokenCount';
import type { InboundCodec, TextMode } from './types';
import { parseJson, textOf } from '../shared';
import type { Usage } from '../types';

/** Anthropic's counts in the relay's terms (cache reads and writes are part of the prompt). */
export function usageOfAnthropic(usage: AnthropicUsage): Usage {
  const read = positiveWhole(usage.cache_read_input_tokens);
  const created = positiveWhole(usage.cache_creation_input_tokens);
  const billed: Usage = {
    promptTokens: positiveWhole(usage.input_tokens) + read + created,
    completionTokens: positiveWhole(usage.output_tokens),
    cachedPromptTokens: read,
  };
  if (created > 0) billed.cacheCreationTokens = created;
  return billed;
}

// ---- counting ----

/** A content block's share of the count: its text goes to `texts` (counted with the rest), a media block's tokens are returned. */
function countBlock(block: Block, texts: string[], model: string, options: CountOptions): number {
  if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
  else if (block?.type === 'image' || block?.type === 'document') return countPartTokens(block, model, options);
  else if (block?.type === 'tool_use') texts.push(textOf(block.name), JSON.stringify(block.input ?? {}));
  else if (block?.type === 'tool_result') texts.push(typeof block.content === 'string' ? block.content : blockText(block.content));
  else if (block?.type === 'thinking' && typeof block.thinking === 'string') texts.push(block.thinking);
  return 0;
}

/** The prompt's tokens: system, every block's text, tool inputs and results, tool definitions; 3 per message and 3 to prime the reply. */
export function countMessagesPromptTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  const texts: string[] = [systemText(body.system)];
  let total = 3;
  for (const message of Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : []) {
    total += 3;
    const content = message?.content;
    if (typeof content === 'string') {
      texts.push(content);
      continue;
    }
    for (const block of Array.isArray(content) ? (content as Block[]) : []) total += countBlock(block, texts, model, options);
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return total + countTextTokens(texts.join('\n'), model, options);
}

// ---- the passthrough stream watcher ----

/** Passes an Anthropic event stream on as it came; reads its usage (message_start, message_delta) and text. */
export class MessagesUsageWatcher extends PassingUsageWatcher {
  private usage: AnthropicUsage = {};
  private final = false;

  protected readEvent(data: string): void {
    // only the events that bill: message_start, message_delta and text deltas
    if (!data.includes('"message_start"') && !data.includes('"message_delta"') && !data.includes('"text_delta"')) return;
    const parsed = parseJson(data) as
      | { type?: string; message?: { usage?: AnthropicUsage }; usage?: AnthropicUsage; delta?: { type?: string; text?: unknown } }
      | undefined;
    if (!parsed || typeof parsed !== 'object') return;
    if (parsed.type === 'message_start') this.merge(parsed.message?.usage);
    else if (parsed.type === 'message_delta') {
      this.merge(parsed.usage);
      if (parsed.usage) this.final = true;
    } else if (parsed.type === 'content_block_delta' && parsed.delta?.type === 'text_delta' && typeof parsed.delta.text === 'string')
      this.text += parsed.delta.text;
  }

  private merge(usage: AnthropicUsage | undefined): void {
    if (!usage || typeof usage !== 'object') return;
    for (const field of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      if (typeof usage[field] === 'number') this.usage[field] = usage[field];
    }
  }

  reportedUsage(): Usage | undefined {
    return this.final ? usageOfAnthropic(this.usage) : undefined;
  }
}

// ---- the codec ----

const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

function answerText(value: unknown): string {
  const content = (value as { content?: unknown } | undefined)?.content;
  return blockText(content);
}

/** `x-api-key` (Anthropic's own header), else the Authorization header as it is. */
function authorization(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return `Bearer ${key}`;
  const header = headers.authorization;
  return typeof header === 'string' ? header : undefined;
}

/** The client's beta flags, for a channel that speaks Messages (prompt caching, interleaved thinking and the like). */
function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> | undefined {
  const beta = headers['anthropic-beta'];
  if (beta === undefined || beta === '') return undefined;
  return { 'anthropic-beta': Array.isArray(beta) ? beta.join(',') : beta };
}

export const anthropicMessages = {
  protocol: 'anthropic',
  contentType: 'application/json',
  authorization,
  forwardedHeaders,
  model: (_mode: TextMode, body: Record<string, unknown>) => modelOf(body),
  check(_mode, body) {
    if (!Array.isArray(body.messages)) return { message: 'messages: Field required', code: 'invalid_request_error' };
    if (body.max_tokens === undefined || body.max_tokens === null)
      return { message: 'max_tokens: Field required', code: 'invalid_request_error' };
    if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
      return { message: 'max_tokens: Input should be a valid positive integer', code: 'invalid_request_error' };
    return undefined;
  },
  promptTokens: (_mode, body, model, options) =>
    options.bound ? promptBound(body, model, undefined, 1, options.contextWindow) : countMessagesPromptTokens(body, model, options),
  // Anthropic's stream always reports its usage
  ...selfReportingBodyRules('max_tokens'),
  jsonUsage: (json) => reportedAnswerUsage(json, usageOfAnthropic),
  answerText,
  // nothing to strip: the gateway never asks a Messages stream for anything on the client's behalf
  watchStream: (_stripUsageEvent: boolean) => new MessagesUsageWatcher(),
  errorBody: anthropicErrorBody,
  chatRequest: chatRequestOf,
  untranslatable: uncarriedTools,
  encodeResponse,
  encodeStream: (model: string) => new MessagesStreamEncoder(model),
} satisfies InboundCodec;
