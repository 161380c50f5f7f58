// Chat answers written back as Anthropic Messages answers (the translated
// path): a whole answer (`encodeResponse`), the exact event stream
// (`MessagesStreamEncoder`), errors in Anthropic's shape, and the relay's
// usage in Anthropic's terms. Pure: no I/O. The codec is ./anthropicMessages.ts.
import type { Block } from './anthropicMessagesRequest';
import type { InboundError } from './types';
import { parseJson } from '../shared';
import type { ChatChunk, ChatChunkToolCall, ChatResponse, FinishReason, Usage } from '../types';

/** Anthropic's usage object (lenient: only what is read). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** The relay's usage as Anthropic reports it. */
export function anthropicUsageOf(
  usage: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens' | 'cacheCreationTokens'>,
): Required<AnthropicUsage> {
  const read = usage.cachedPromptTokens || 0;
  const created = usage.cacheCreationTokens || 0;
  return {
    input_tokens: Math.max(0, usage.promptTokens - read - created),
    cache_creation_input_tokens: created,
    cache_read_input_tokens: read,
    output_tokens: usage.completionTokens,
  };
}

// ---- errors ----

/** Anthropic's error type for a status (https://docs.anthropic.com/en/api/errors). */
export function anthropicErrorType(status: number | undefined): string {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status !== undefined && status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

export const anthropicErrorBody = (error: InboundError & { status?: number }) =>
  JSON.stringify({ type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } });

// ---- answers written back (the translated path) ----

function stopReason(finish: FinishReason | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** An id in Anthropic's form (`msg_...`) from whatever the vendor gave. */
const messageId = (id: string) => (id.startsWith('msg_') ? id : `msg_${id.replace(/[^A-Za-z0-9_]/g, '')}`);
const toolId = (id: string) => (id.startsWith('toolu_') ? id : `toolu_${id.replace(/[^A-Za-z0-9_]/g, '')}`);

function toolInput(text: string): unknown {
  const parsed = parseJson(text || '{}');
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
}

/** A whole chat answer as a Messages answer (its first choice: Messages has one). */
export function encodeResponse(chat: ChatResponse, usage: Usage, model: string): string {
  const choice = chat.choices[0];
  const content: Block[] = [];
  if (choice?.message.reasoning_content) content.push({ type: 'thinking', thinking: choice.message.reasoning_content, signature: '' });
  if (choice?.message.content) content.push({ type: 'text', text: choice.message.content });
  for (const call of choice?.message.tool_calls ?? [])
    content.push({ type: 'tool_use', id: toolId(call.id), name: call.function.name, input: toolInput(call.function.arguments) });
  return JSON.stringify({
    id: messageId(chat.id),
    type: 'message',
    role: 'assistant',
    model: model || chat.model,
    content,
    stop_reason: stopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: anthropicUsageOf(usage),
  });
}

const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** Writes chat chunks as Anthropic's event stream. */
export class MessagesStreamEncoder {
  private started = false;
  /** The open content block: its Anthropic index, and what it is (a tool call by its OpenAI index). */
  private open: { kind: 'text' | 'thinking' } | { kind: 'tool'; tool: number } | undefined;
  private next = 0;
  private finish: FinishReason | null = null;

  constructor(private readonly model: string) {}

  /** message_start, once: id and model from the first chunk, input usage as known so far. */
  private start(id: string, usage: Usage | undefined): string {
    if (this.started) return '';
    this.started = true;
    const input = usage ? anthropicUsageOf(usage) : { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    return event('message_start', {
      type: 'message_start',
      message: {
        id: messageId(id),
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...input, output_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (!this.open) return '';
    this.open = undefined;
    return event('content_block_stop', { type: 'content_block_stop', index: this.next - 1 });
  }

  private openBlock(kind: 'text' | 'thinking', block: Block): string;
  private openBlock(kind: 'tool', block: Block, tool: number): string;
  private openBlock(kind: 'text' | 'thinking' | 'tool', block: Block, tool = 0): string {
    const closed = this.close();
    this.open = kind === 'tool' ? { kind, tool } : { kind };
    const index = this.next;
    this.next += 1;
    return closed + event('content_block_start', { type: 'content_block_start', index, content_block: block });
  }

  private delta(delta: Block): string {
    return event('content_block_delta', { type: 'content_block_delta', index: this.next - 1, delta });
  }

  /** A tool call's piece: a tool_use block opened when the call is new, its arguments' fragment as input_json_delta. */
  private toolCall(call: ChatChunkToolCall, fallbackId: string): string {
    let out = '';
    const open = this.open;
    if (open?.kind !== 'tool' || open.tool !== call.index) {
      out += this.openBlock(
        'tool',
        { type: 'tool_use', id: toolId(call.id ?? `${fallbackId}_${call.index}`), name: call.function?.name ?? '', input: {} },
        call.index,
      );
    }
    const fragment = call.function?.arguments;
    if (typeof fragment === 'string' && fragment !== '') out += this.delta({ type: 'input_json_delta', partial_json: fragment });
    return out;
  }

  /** The events for these chunks ('' when they carry nothing to send). */
  chunks(chunks: readonly ChatChunk[], usage: Usage | undefined, fallbackId: string): string {
    let out = '';
    for (const chunk of chunks) {
      out += this.start(chunk.id || fallbackId, usage);
      for (const choice of chunk.choices) {
        // Messages has one answer
        if (choice.index !== 0) continue;
        const { delta } = choice;
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
          if (this.open?.kind !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
          out += this.delta({ type: 'thinking_delta', thinking: delta.reasoning_content });
        }
        if (typeof delta.content === 'string' && delta.content !== '') {
          if (this.open?.kind !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
          out += this.delta({ type: 'text_delta', text: delta.content });
        }
        for (const call of delta.tool_calls ?? []) out += this.toolCall(call, fallbackId);
        if (choice.finish_reason) this.finish = choice.finish_reason;
      }
    }
    return out;
  }

  /** The end of a complete answer: the last block closed, message_delta with the stop reason and usage, message_stop. */
  end(usage: Usage, fallbackId: string): string {
    return (
      this.start(fallbackId, undefined) +
      this.close() +
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason(this.finish), stop_sequence: null },
        usage: anthropicUsageOf(usage),
      }) +
      event('message_stop', { type: 'message_stop' })
    );
  }

  /** An error mid-stream, as Anthropic sends one. */
  error(error: InboundError & { status?: number }): string {
    return `event: error\ndata: ${anthropicErrorBody(error)}\n\n`;
  }
}
