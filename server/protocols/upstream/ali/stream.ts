// DashScope's stream (incremental output), decoded into chat chunks as it comes.
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatChunkToolCall, ChatStreamDecoder, UpstreamFailure, Usage } from '../../types';
import { chunkOf, contentText, parseJson, SseOrBareBody, upstreamFailure } from '../../shared';
import { errorOf } from './errors';
import { choicesOf, finishOf, toolCallId, usageOf, type AliAnswer, type AliToolCall } from './json';

/** The tool calls a stream gave out so far: per choice and tool index, whether the name was sent; and how many were numbered. */
interface ToolsSeen {
  byKey: Map<string, { named: boolean }>;
  numbered: number;
}

/** A choice's tool calls as chat tool-call pieces: id and type on a call's first piece, its name once, its arguments as they come. */
function toolDeltas(call: AdaptorCall, tools: ToolsSeen, choiceIndex: number, calls: AliToolCall[]): ChatChunkToolCall[] {
  return calls.map((tool, position) => {
    const index = typeof tool.index === 'number' ? tool.index : position;
    const key = `${choiceIndex}:${index}`;
    let known = tools.byKey.get(key);
    const delta: ChatChunkToolCall = { index };
    if (!known) {
      known = { named: false };
      tools.byKey.set(key, known);
      delta.id = tool.id || toolCallId(call, tools.numbered);
      delta.type = 'function';
      tools.numbered += 1;
    }
    const fn: NonNullable<ChatChunkToolCall['function']> = {};
    if (tool.function?.name && !known.named) {
      fn.name = tool.function.name;
      known.named = true;
    }
    if (tool.function?.arguments) fn.arguments = tool.function.arguments;
    if (fn.name !== undefined || fn.arguments !== undefined) delta.function = fn;
    return delta;
  });
}

/**
 * DashScope's SSE: `event:result` events whose data is a whole answer holding
 * this step's increment (we always ask for incremental_output) and the
 * running usage; `event:error` carries `{code, message}`.
 */
export function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseOrBareBody();
  let finished = false;
  let id = '';
  let usage: Usage | undefined;
  let failed: UpstreamFailure | undefined;
  const started = new Set<number>();
  const closed = new Set<number>();
  const tools: ToolsSeen = { byKey: new Map(), numbered: 0 };

  const chunk = (choices: ChatChunkChoice[]): ChatChunk => ({ ...chunkOf(call, call.model, choices), id: id || call.responseId });

  function handle(event: { event: string; data: string }): ChatChunk[] {
    if (failed) return [];
    const parsed = parseJson(event.data);
    if (!parsed || typeof parsed !== 'object') return [];
    const error = errorOf(parsed, event.event === 'error' ? 400 : 200);
    if (error && (event.event === 'error' || !(parsed as AliAnswer).output)) {
      failed = error;
      return [];
    }
    const answer = parsed as AliAnswer;
    if (!id && answer.request_id) id = answer.request_id;
    usage = usageOf(answer) ?? usage;
    const choices: ChatChunkChoice[] = [];
    choicesOf(answer).forEach((choice, position) => {
      const index = typeof choice.index === 'number' ? choice.index : position;
      if (closed.has(index)) return;
      const delta: ChatChunkChoice['delta'] = {};
      if (!started.has(index)) delta.role = 'assistant';
      const text = contentText(choice.message?.content);
      if (text) delta.content = text;
      if (choice.message?.reasoning_content) delta.reasoning_content = choice.message.reasoning_content;
      const toolCalls = choice.message?.tool_calls ?? [];
      if (toolCalls.length > 0) delta.tool_calls = toolDeltas(call, tools, index, toolCalls);
      const finish = finishOf(choice.finish_reason);
      if (!delta.role && !delta.content && !delta.reasoning_content && !delta.tool_calls && !finish) return;
      started.add(index);
      if (finish) closed.add(index);
      choices.push({ index, delta, finish_reason: finish });
    });
    if (closed.size > 0 && closed.size >= started.size) finished = true;
    return choices.length > 0 ? [chunk(choices)] : [];
  }

  return {
    push: (data) => parser.push(data).flatMap(handle),
    end() {
      const { events, bareBody } = parser.end();
      const chunks = events.flatMap(handle);
      if (bareBody && !failed) {
        failed =
          errorOf(parseJson(bareBody), 400) ??
          upstreamFailure(502, `DashScope answered a stream with no events: ${bareBody.slice(0, 200)}`, {
            type: 'dashscope_error',
            retryable: true,
          });
      }
      return chunks;
    },
    usage: () => usage,
    failure: () => failed,
    done: () => finished,
  };
}
