// ConverseStream's answer: AWS's binary event stream
// (application/vnd.amazon.eventstream), each frame a length-prefixed message
// with typed headers and a JSON payload, decoded with Smithy's codec (which
// checks both CRCs) and turned into OpenAI chunks as frames complete.
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
// https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html (the frame layout).
import type { Message } from '@smithy/eventstream-codec';
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatStreamDecoder, FinishReason, UpstreamFailure, Usage } from '../../types';
import { chunkOf, isObject, parseJson, upstreamFailure } from '../../shared';
import { streamException } from './errors';
import { bedrockUsage, finishReason, type ConverseUsage } from './json';
import { bedrockLibraries, utf8Text as toUtf8 } from './libraries';

/** A frame's prelude (total length, headers length, prelude CRC) and its closing CRC. */
const PRELUDE_BYTES = 12;
const TRAILER_BYTES = 4;
/** The largest frame AWS sends is 16 MiB (the spec's limit on a message); a length beyond it means the bytes are not a frame. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Splits bytes cut anywhere into whole event-stream messages. */
export class EventStreamFrames {
  private pending: Buffer = Buffer.alloc(0);

  /** The messages these bytes completed; throws on bytes that are not a valid frame (a CRC or a length wrong). */
  push(data: Buffer | string): Message[] {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const messages: Message[] = [];
    while (this.pending.length >= 4) {
      const total = this.pending.readUInt32BE(0);
      if (total < PRELUDE_BYTES + TRAILER_BYTES || total > MAX_FRAME_BYTES)
        throw new Error(`a frame of ${total} bytes is not an event-stream frame`);
      if (this.pending.length < total) break;
      messages.push(bedrockLibraries().codec.decode(this.pending.subarray(0, total)));
      this.pending = this.pending.subarray(total);
    }
    return messages;
  }

  /** Bytes of an unfinished frame still held (a stream cut mid-frame). */
  get held(): number {
    return this.pending.length;
  }
}

const headerText = (message: Message, name: string): string => {
  const header = message.headers[name];
  return header && header.type === 'string' ? header.value : '';
};

interface ConverseStreamEvent {
  role?: string;
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: { text?: string; toolUse?: { input?: string }; reasoningContent?: { text?: string } };
  stopReason?: string;
  usage?: ConverseUsage;
  message?: string;
}

/** What a content block of the stream became on the OpenAI side. */
interface OpenTool {
  tool: number;
  sentArguments: boolean;
}

/**
 * ConverseStream's events → OpenAI chunks: the role on messageStart, one
 * chunk per text, reasoning or tool-input delta, tool calls numbered in the
 * order their blocks start, the finish chunk on messageStop. Usage comes in
 * the metadata event after messageStop, which ends the answer: a stream cut
 * before it has no final figures, and the relay estimates.
 */
export class BedrockStreamDecoder implements ChatStreamDecoder {
  private readonly frames = new EventStreamFrames();
  private readonly tools = new Map<number, OpenTool>();
  private toolCount = 0;
  private finalUsage: Usage | undefined;
  private finished = false;
  private ended = false;
  private error: UpstreamFailure | undefined;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    if (this.error) return [];
    let messages: Message[];
    try {
      messages = this.frames.push(data);
    } catch (error) {
      this.error = upstreamFailure(502, `Bedrock's event stream could not be read: ${(error as Error).message}`, { retryable: true });
      return [];
    }
    const chunks: ChatChunk[] = [];
    for (const message of messages) {
      const chunk = this.handle(message);
      if (chunk) chunks.push(chunk);
      if (this.error) break;
    }
    return chunks;
  }

  end(): ChatChunk[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.finalUsage;
  }

  failure(): UpstreamFailure | undefined {
    return this.error;
  }

  done(): boolean {
    return this.ended;
  }

  private chunk(delta: ChatChunkChoice['delta'], finish: FinishReason | null = null): ChatChunk {
    return chunkOf(this.call, '', [{ index: 0, delta, finish_reason: finish }]);
  }

  private handle(message: Message): ChatChunk | undefined {
    const messageType = headerText(message, ':message-type');
    const payload = parseJson(toUtf8(message.body));
    const event = (isObject(payload) ? payload : {}) as ConverseStreamEvent;
    if (messageType === 'exception') {
      this.error = streamException(headerText(message, ':exception-type'), typeof event.message === 'string' ? event.message : '');
      return undefined;
    }
    if (messageType === 'error') {
      this.error = streamException(headerText(message, ':error-code'), headerText(message, ':error-message'));
      return undefined;
    }
    return this.handlers.get(headerText(message, ':event-type'))?.(event);
  }

  /** Each event type's handler; event types added after this was written have none. */
  private readonly handlers = new Map<string, (event: ConverseStreamEvent) => ChatChunk | undefined>([
    ['messageStart', () => this.chunk({ role: 'assistant', content: '' })],
    ['contentBlockStart', (event) => this.blockStart(event)],
    ['contentBlockDelta', (event) => this.blockDelta(event)],
    ['contentBlockStop', (event) => this.blockStop(event)],
    ['messageStop', (event) => this.messageStop(event)],
    ['metadata', (event) => this.metadata(event)],
  ]);

  /** A toolUse block's start: the next tool call, with its name (its input comes as deltas). */
  private blockStart(event: ConverseStreamEvent): ChatChunk | undefined {
    const toolUse = event.start?.toolUse;
    if (!isObject(toolUse)) return undefined;
    const tool = this.toolCount;
    this.toolCount += 1;
    this.tools.set(event.contentBlockIndex ?? 0, { tool, sentArguments: false });
    return this.chunk({
      tool_calls: [
        {
          index: tool,
          id: toolUse.toolUseId || `call_${this.call.responseId}_${tool}`,
          type: 'function',
          function: { name: toolUse.name ?? '', arguments: '' },
        },
      ],
    });
  }

  private blockDelta(event: ConverseStreamEvent): ChatChunk | undefined {
    const delta = event.delta ?? {};
    if (typeof delta.text === 'string' && delta.text !== '') return this.chunk({ content: delta.text });
    if (typeof delta.reasoningContent?.text === 'string' && delta.reasoningContent.text !== '')
      return this.chunk({ reasoning_content: delta.reasoningContent.text });
    const open = this.tools.get(event.contentBlockIndex ?? 0);
    if (open && typeof delta.toolUse?.input === 'string' && delta.toolUse.input !== '') {
      open.sentArguments = true;
      return this.chunk({ tool_calls: [{ index: open.tool, function: { arguments: delta.toolUse.input } }] });
    }
    // a reasoning signature, a citation: OpenAI has no place for them
    return undefined;
  }

  private blockStop(event: ConverseStreamEvent): ChatChunk | undefined {
    const open = this.tools.get(event.contentBlockIndex ?? 0);
    // a tool called with no input streams no fragment: its arguments are still a JSON object
    if (open && !open.sentArguments) {
      open.sentArguments = true;
      return this.chunk({ tool_calls: [{ index: open.tool, function: { arguments: '{}' } }] });
    }
    return undefined;
  }

  private messageStop(event: ConverseStreamEvent): ChatChunk | undefined {
    if (this.finished) return undefined;
    this.finished = true;
    return this.chunk({}, finishReason(event.stopReason));
  }

  private metadata(event: ConverseStreamEvent): undefined {
    if (isObject(event.usage)) this.finalUsage = bedrockUsage(event.usage);
    this.ended = true;
    return undefined;
  }
}
