// Anthropic's event stream, decoded into chat chunks as it comes.
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatStreamDecoder, FinishReason, UpstreamFailure, Usage } from '../../types';
import { chunkOf, parseJson, SseParser } from '../../shared';
import { errorInBody } from './errors';
import { anthropicUsage, finishReason, type AnthropicAnswer, type AnthropicUsage } from './json';

// ---- stream ----

interface StreamEvent {
  type?: string;
  index?: number;
  message?: AnthropicAnswer;
  content_block?: { type?: string; id?: string; name?: string; input?: unknown; text?: string; thinking?: string };
  delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** What a content block of the stream became on the OpenAI side. */
type OpenBlock = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; tool: number; sentArguments: boolean } | { kind: 'other' };

/**
 * Anthropic's event stream → OpenAI chunks: the role on message_start, one
 * chunk per text, thinking or tool-input delta, tool calls numbered in the
 * order their blocks start, and one finish chunk from message_delta. Usage is
 * message_start's (prompt side) with message_delta's output count (which is
 * cumulative; a message_delta carrying prompt-side counts overrides them). It
 * is reported only once message_delta arrived: a stream cut before it has no
 * final figures, and the relay estimates.
 */
export class AnthropicStreamDecoder implements ChatStreamDecoder {
  private readonly parser = new SseParser();
  private id = '';
  private model = '';
  private readonly blocks = new Map<number, OpenBlock>();
  private tools = 0;
  private usageSoFar: AnthropicUsage = {};
  private final = false;
  private finished = false;
  private ended = false;
  private error: UpstreamFailure | undefined;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    return this.read(this.parser.push(data));
  }

  end(): ChatChunk[] {
    return this.read(this.parser.end());
  }

  usage(): Usage | undefined {
    return this.final ? anthropicUsage(this.usageSoFar) : undefined;
  }

  failure(): UpstreamFailure | undefined {
    return this.error;
  }

  done(): boolean {
    return this.ended;
  }

  private read(events: ReturnType<SseParser['push']>): ChatChunk[] {
    const chunks: ChatChunk[] = [];
    for (const { event, data } of events) {
      const parsed = parseJson(data) as StreamEvent | undefined;
      if (!parsed || typeof parsed !== 'object') continue;
      const chunk = this.handle(parsed.type ?? event, parsed);
      if (chunk) chunks.push(chunk);
    }
    return chunks;
  }

  private chunk(delta: ChatChunkChoice['delta'], finish: FinishReason | null = null): ChatChunk {
    const chunk = chunkOf(this.call, this.model, [{ index: 0, delta, finish_reason: finish }]);
    if (this.id) chunk.id = this.id;
    return chunk;
  }

  private mergeUsage(usage: AnthropicUsage | undefined): void {
    if (!usage || typeof usage !== 'object') return;
    for (const field of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      if (typeof usage[field] === 'number') this.usageSoFar[field] = usage[field];
    }
  }

  /** Each event type's handler; ping and event types added after this was written have none. */
  private readonly handlers = new Map<string, (event: StreamEvent) => ChatChunk | undefined>([
    ['message_start', (event) => this.messageStart(event)],
    ['content_block_start', (event) => this.blockStart(event)],
    ['content_block_delta', (event) => this.blockDelta(event)],
    ['content_block_stop', (event) => this.blockStop(event)],
    ['message_delta', (event) => this.messageDelta(event)],
    ['message_stop', () => this.messageStop()],
    ['error', (event) => this.failed(event)],
  ]);

  private handle(type: string, event: StreamEvent): ChatChunk | undefined {
    return this.handlers.get(type)?.(event);
  }

  private messageStart(event: StreamEvent): ChatChunk {
    const message = event.message ?? {};
    this.id = message.id || '';
    this.model = message.model || '';
    this.mergeUsage(message.usage);
    return this.chunk({ role: 'assistant', content: '' });
  }

  private blockStart(event: StreamEvent): ChatChunk | undefined {
    const block = event.content_block ?? {};
    const index = event.index ?? 0;
    if (block.type === 'text') {
      this.blocks.set(index, { kind: 'text' });
      return block.text ? this.chunk({ content: block.text }) : undefined;
    }
    if (block.type === 'thinking') {
      this.blocks.set(index, { kind: 'thinking' });
      return block.thinking ? this.chunk({ reasoning_content: block.thinking }) : undefined;
    }
    if (block.type === 'tool_use') return this.toolUseStart(index, block);
    this.blocks.set(index, { kind: 'other' });
    return undefined;
  }

  /** A tool_use block's start: the next tool call, with its name and (rarely given whole) its input. */
  private toolUseStart(index: number, block: NonNullable<StreamEvent['content_block']>): ChatChunk {
    const tool = this.tools;
    this.tools += 1;
    // a tool_use start carries `input: {}`; its arguments come as input_json_delta
    const input = block.input && typeof block.input === 'object' && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    this.blocks.set(index, { kind: 'tool', tool, sentArguments: input !== '' });
    return this.chunk({
      tool_calls: [
        {
          index: tool,
          id: block.id || `call_${this.call.responseId}_${tool}`,
          type: 'function',
          function: { name: block.name ?? '', arguments: input },
        },
      ],
    });
  }

  private blockDelta(event: StreamEvent): ChatChunk | undefined {
    const block = this.blocks.get(event.index ?? 0);
    const delta = event.delta ?? {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') return this.chunk({ content: delta.text });
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '')
      return this.chunk({ reasoning_content: delta.thinking });
    if (
      delta.type === 'input_json_delta' &&
      block?.kind === 'tool' &&
      typeof delta.partial_json === 'string' &&
      delta.partial_json !== ''
    ) {
      block.sentArguments = true;
      return this.chunk({ tool_calls: [{ index: block.tool, function: { arguments: delta.partial_json } }] });
    }
    // signature_delta, citations and deltas of blocks OpenAI has no place for
    return undefined;
  }

  private blockStop(event: StreamEvent): ChatChunk | undefined {
    const block = this.blocks.get(event.index ?? 0);
    // a tool called with no input streams no fragment: its arguments are still a JSON object
    if (block?.kind === 'tool' && !block.sentArguments) {
      block.sentArguments = true;
      return this.chunk({ tool_calls: [{ index: block.tool, function: { arguments: '{}' } }] });
    }
    return undefined;
  }

  private messageDelta(event: StreamEvent): ChatChunk | undefined {
    this.mergeUsage(event.usage);
    if (event.usage) this.final = true;
    if (this.finished || !event.delta || !('stop_reason' in event.delta) || !event.delta.stop_reason) return undefined;
    this.finished = true;
    return this.chunk({}, finishReason(event.delta.stop_reason));
  }

  private messageStop(): ChatChunk | undefined {
    this.ended = true;
    if (this.finished) return undefined;
    this.finished = true;
    return this.chunk({}, 'stop');
  }

  private failed(event: StreamEvent): undefined {
    this.error = errorInBody(event.error);
    return undefined;
  }
}
