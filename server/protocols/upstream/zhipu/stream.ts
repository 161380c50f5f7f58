// Both of Zhipu's streams (v4's OpenAI-shaped SSE, v3's raw-text `add`
// events and `finish` with its `meta:` line), decoded into chat chunks.
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatChunkToolCall, ChatStreamDecoder, UpstreamFailure, Usage } from '../../types';
import { count, isObject, LineSplitter, openAiUsage, parseJson, upstreamFailure } from '../../shared';
import { failureIn } from './errors';
import { finishReason, text, usageOf } from './json';

// ---- streams ----

interface StreamEvent {
  event: string;
  id: string;
  /** The data lines, verbatim after `data:` (v3 sends raw text there, no space after the colon). */
  data: string[];
  meta: string;
}

/**
 * Line framing for both of Zhipu's streams. shared.SseParser drops v3's
 * `meta:` line (the usage) and strips the space after `data:`, which in v3
 * belongs to the text, so the fields are read here.
 */
class ZhipuEventReader {
  private readonly lines = new LineSplitter();
  private current: StreamEvent = { event: '', id: '', data: [], meta: '' };
  /** Lines that were no SSE field (a JSON error body sent instead of a stream). */
  stray = '';

  push(bytes: Buffer | string): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (const line of this.lines.push(bytes)) this.line(line, events);
    return events;
  }

  end(): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (const line of this.lines.end()) this.line(line, events);
    this.line('', events);
    return events;
  }

  private line(line: string, events: StreamEvent[]): void {
    if (line === '') {
      const event = this.current;
      if (event.data.length > 0 || event.meta || event.event) events.push(event);
      this.current = { event: '', id: '', data: [], meta: '' };
      return;
    }
    const match = /^(event|id|data|meta|retry):/.exec(line);
    if (!match) {
      if (!line.startsWith(':')) this.stray += line;
      return;
    }
    const value = line.slice(match[0].length);
    if (match[1] === 'data') this.current.data.push(value);
    else if (match[1] === 'event') this.current.event = value.trim();
    else if (match[1] === 'id') this.current.id = value.trim();
    else if (match[1] === 'meta') this.current.meta = value;
  }
}

export class ZhipuStreamDecoder implements ChatStreamDecoder {
  private readonly reader = new ZhipuEventReader();
  private id = '';
  private model = '';
  private created = 0;
  private reported: Usage | undefined;
  private failed: UpstreamFailure | undefined;
  private finished = false;
  private sawEvent = false;
  private readonly started = new Set<number>();
  private readonly closedChoices = new Set<number>();
  private readonly toolIds = new Map<string, string>();
  private toolCounter = 0;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    return this.handle(this.reader.push(data));
  }

  end(): ChatChunk[] {
    const chunks = this.handle(this.reader.end());
    if (!this.sawEvent && !this.failed && this.reader.stray.trim()) {
      // not a stream at all: Zhipu answered the stream request with a JSON error
      this.failed =
        failureIn(200, parseJson(this.reader.stray.trim())) ??
        upstreamFailure(502, this.reader.stray.trim().slice(0, 500), { type: 'zhipu_error' });
    }
    return chunks;
  }

  usage(): Usage | undefined {
    return this.reported;
  }

  failure(): UpstreamFailure | undefined {
    return this.failed;
  }

  done(): boolean {
    return this.finished;
  }

  private chunk(choices: ChatChunkChoice[]): ChatChunk {
    return {
      id: this.id || this.call.responseId,
      object: 'chat.completion.chunk',
      created: this.created || this.call.now,
      model: this.model || this.call.model,
      choices,
    };
  }

  private handle(events: StreamEvent[]): ChatChunk[] {
    const chunks: ChatChunk[] = [];
    for (const event of events) {
      if (this.failed || this.finished) break;
      this.sawEvent = true;
      switch (event.event) {
        case 'add':
        case 'finish':
        case 'error':
        case 'interrupted':
          this.v3(event, chunks);
          break;
        default:
          this.v4(event, chunks);
      }
    }
    return chunks;
  }

  private v3(event: StreamEvent, chunks: ChatChunk[]): void {
    if (!this.id && event.id) this.id = event.id;
    const content = event.data.join('\n');
    if (event.event === 'error' || event.event === 'interrupted') {
      const filtered = event.event === 'interrupted';
      this.failed = upstreamFailure(filtered ? 400 : 500, content || `Zhipu stream ${event.event}`, {
        type: filtered ? 'content_filter' : 'zhipu_error',
        code: event.event,
        retryable: !filtered,
      });
      return;
    }
    if (content) chunks.push(this.chunk([{ index: 0, delta: this.opening(0, { content }), finish_reason: null }]));
    if (event.event === 'finish') {
      const meta = parseJson(event.meta);
      if (isObject(meta)) {
        this.reported = usageOf(meta.usage);
        if (!this.id) this.id = text(meta.task_id) || text(meta.request_id);
      }
      const last = this.chunk([{ index: 0, delta: this.opening(0, {}), finish_reason: 'stop' }]);
      if (this.reported) last.usage = openAiUsage(this.reported);
      chunks.push(last);
      this.finished = true;
    }
  }

  private v4(event: StreamEvent, chunks: ChatChunk[]): void {
    const data = event.data.join('\n').trim();
    if (!data) return;
    if (data === '[DONE]') {
      this.finished = true;
      return;
    }
    const body = parseJson(data);
    if (!isObject(body)) return;
    const failure = failureIn(200, body);
    if (failure) {
      this.failed = failure;
      return;
    }
    this.rememberAnswer(body);
    const usage = usageOf(body.usage);
    if (usage) this.reported = usage;
    const choices = this.v4Choices(Array.isArray(body.choices) ? body.choices.filter(isObject) : []);
    if (!choices) return;
    if (choices.length || usage) {
      const chunk = this.chunk(choices);
      if (usage) chunk.usage = openAiUsage(usage);
      chunks.push(chunk);
    }
  }

  /** The stream's id, model and time: the first the vendor gives. */
  private rememberAnswer(body: Record<string, unknown>): void {
    if (!this.id) this.id = text(body.id) || text(body.request_id);
    if (!this.model) this.model = text(body.model);
    if (!this.created) this.created = count(body.created);
  }

  /** A v4 event's choices as chunk choices (those already finished skipped); undefined when one reports an error (then the stream failed). */
  private v4Choices(list: Record<string, unknown>[]): ChatChunkChoice[] | undefined {
    const choices: ChatChunkChoice[] = [];
    for (const [position, choice] of list.entries()) {
      const index = Number.isInteger(choice.index) ? (choice.index as number) : position;
      if (this.closedChoices.has(index)) continue;
      const reason = finishReason(choice.finish_reason);
      if (reason === 'error') {
        this.failed = upstreamFailure(502, 'Zhipu reported a network error while generating', {
          type: 'zhipu_error',
          code: 'network_error',
        });
        return undefined;
      }
      const delta = isObject(choice.delta) ? choice.delta : {};
      const out: ChatChunkChoice['delta'] = {};
      if (typeof delta.content === 'string' && delta.content !== '') out.content = delta.content;
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') out.reasoning_content = delta.reasoning_content;
      const calls = this.chunkToolCalls(index, delta.tool_calls);
      if (calls.length) out.tool_calls = calls;
      const hasDelta = Object.keys(out).length > 0;
      if (!hasDelta && !reason) continue;
      if (reason) this.closedChoices.add(index);
      choices.push({ index, delta: this.opening(index, out), finish_reason: reason });
    }
    return choices;
  }

  /** The first delta of a choice says it is the assistant's. */
  private opening(index: number, delta: ChatChunkChoice['delta']): ChatChunkChoice['delta'] {
    if (this.started.has(index)) return delta;
    this.started.add(index);
    return { role: 'assistant', ...delta };
  }

  private chunkToolCalls(choice: number, value: unknown): ChatChunkToolCall[] {
    if (!Array.isArray(value)) return [];
    return value.filter(isObject).map((item, position) => {
      const index = Number.isInteger(item.index) ? (item.index as number) : position;
      const key = `${choice}:${index}`;
      const fn = isObject(item.function) ? item.function : {};
      const out: ChatChunkToolCall = { index };
      let id = this.toolIds.get(key);
      if (!id) {
        id = text(item.id) || `call_${this.call.responseId}_${this.toolCounter++}`;
        this.toolIds.set(key, id);
        out.id = id;
        out.type = 'function';
      }
      const fnOut: NonNullable<ChatChunkToolCall['function']> = {};
      if (typeof fn.name === 'string' && fn.name) fnOut.name = fn.name;
      if (fn.arguments !== undefined && fn.arguments !== null)
        fnOut.arguments = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments);
      if (Object.keys(fnOut).length) out.function = fnOut;
      return out;
    });
  }
}
