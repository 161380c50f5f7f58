// Spark answer frames, decoded into chat chunks as they come.
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatStreamDecoder, UpstreamFailure, Usage } from '../../types';
import { count, openAiUsage, parseJson, upstreamFailure } from '../../shared';
import { frameFailure } from './errors';
import { isObject, text } from './json';

export class SparkStreamDecoder implements ChatStreamDecoder {
  private id = '';
  private reported: Usage | undefined;
  private failed: UpstreamFailure | undefined;
  private finished = false;
  private started = false;
  private calls = 0;

  constructor(private readonly call: AdaptorCall) {}

  push(data: Buffer | string): ChatChunk[] {
    if (this.finished || this.failed) return [];
    const frame = parseJson(typeof data === 'string' ? data : data.toString('utf8'));
    if (!isObject(frame) || !isObject(frame.header)) {
      this.failed = upstreamFailure(502, 'Spark sent a frame that is not its JSON', { type: 'spark_error' });
      return [];
    }
    const header = frame.header;
    if (!this.id && text(header.sid)) this.id = `chatcmpl-${text(header.sid)}`;
    const code = Number(header.code ?? 0);
    if (code !== 0) {
      this.failed = frameFailure(200, code, text(header.message));
      return [];
    }
    const payload = isObject(frame.payload) ? frame.payload : {};
    const choices = isObject(payload.choices) ? payload.choices : {};
    const last = header.status === 2 || choices.status === 2;
    this.readUsage(payload);
    const delta = this.frameDelta(Array.isArray(choices.text) ? choices.text.filter(isObject) : []);
    if (last) this.finished = true;
    if (!delta.content && !delta.tool_calls && !last) return [];
    return [this.chunk(delta, last)];
  }

  /** The chunk for a frame's delta (the first says it is the assistant's); the last frame's has the finish reason and usage. */
  private chunk(delta: ChatChunkChoice['delta'], last: boolean): ChatChunk {
    if (!this.started) {
      delta.role = 'assistant';
      this.started = true;
    }
    const chunk: ChatChunk = {
      id: this.id || this.call.responseId,
      object: 'chat.completion.chunk',
      created: this.call.now,
      model: this.call.model,
      choices: [{ index: 0, delta, finish_reason: last ? this.finishReason() : null }],
    };
    if (last && this.reported) chunk.usage = openAiUsage(this.reported);
    return chunk;
  }

  /** Spark reports usage once, in the last frame; take it as it is, never summed. */
  private readUsage(payload: Record<string, unknown>): void {
    const usage = isObject(payload.usage) && isObject(payload.usage.text) ? payload.usage.text : undefined;
    if (usage)
      this.reported = { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens), cachedPromptTokens: 0 };
  }

  /** A frame's text items as a delta: their text joined, their function calls as numbered tool calls. */
  private frameDelta(items: Record<string, unknown>[]): ChatChunkChoice['delta'] {
    const delta: ChatChunkChoice['delta'] = {};
    let content = '';
    for (const item of items) {
      content += text(item.content);
      if (isObject(item.function_call)) {
        const fn = item.function_call;
        const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
        (delta.tool_calls ??= []).push({
          index: this.calls,
          id: `call_${this.call.responseId}_${this.calls}`,
          type: 'function',
          function: { name: text(fn.name), arguments: args },
        });
        this.calls += 1;
      }
    }
    if (content) delta.content = content;
    return delta;
  }

  /** How the answer ended: with tool calls when it made any. */
  private finishReason(): 'tool_calls' | 'stop' {
    return this.calls > 0 ? 'tool_calls' : 'stop';
  }

  end(): ChatChunk[] {
    return [];
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
}
