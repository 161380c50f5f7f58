// Baidu's stream, decoded into chat chunks as it comes.
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatStreamDecoder, UpstreamFailure, Usage } from '../../types';
import { chunkOf, count, parseJson, SseOrBareBody, upstreamFailure } from '../../shared';
import { bodyError } from './errors';
import { finishOf, toolCallOf, usageOf, type BaiduAnswer } from './json';

/**
 * Baidu streams SSE `data: {...}` events, each with a piece of `result` and
 * the running usage, the last with `is_end: true`. A refusal arrives as a
 * bare JSON body (no `data:`), so the raw text is kept until the first event.
 */
export function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseOrBareBody();
  let started = false;
  let finished = false;
  let id = '';
  let created = 0;
  // Baidu repeats the usage on every event, but only the last event's counts the whole answer: a stream cut
  // short reports none, and the relay estimates, rather than billing the prompt alone
  let running: Usage | undefined;
  let failed: UpstreamFailure | undefined;

  const chunk = (choice: ChatChunkChoice): ChatChunk => ({
    ...chunkOf(call, call.model, [choice]),
    id: id || call.responseId,
    created: created || call.now,
  });

  function handle(data: string): ChatChunk[] {
    const answer = parseJson(data);
    if (!answer || typeof answer !== 'object' || finished || failed) return [];
    const error = bodyError(answer, 200);
    if (error) {
      failed = error;
      return [];
    }
    const baidu = answer as BaiduAnswer;
    if (!id && baidu.id) id = baidu.id;
    if (!created) created = count(baidu.created);
    running = usageOf(baidu) ?? running;
    const chunks: ChatChunk[] = [];
    const delta: ChatChunkChoice['delta'] = {};
    if (!started) delta.role = 'assistant';
    if (baidu.result) delta.content = baidu.result;
    const toolCall = toolCallOf(baidu, call);
    if (toolCall) delta.tool_calls = [{ index: 0, id: toolCall.id, type: 'function', function: toolCall.function }];
    if (delta.role || delta.content || delta.tool_calls) {
      started = true;
      chunks.push(chunk({ index: 0, delta, finish_reason: baidu.is_end ? finishOf(baidu) : null }));
    } else if (baidu.is_end) {
      chunks.push(chunk({ index: 0, delta: {}, finish_reason: finishOf(baidu) }));
    }
    if (baidu.is_end) finished = true;
    return chunks;
  }

  const take = (events: { data: string }[]): ChatChunk[] => events.flatMap((event) => handle(event.data));

  return {
    push: (data) => take(parser.push(data)),
    end() {
      const { events, bareBody } = parser.end();
      const chunks = take(events);
      if (bareBody && !failed) {
        failed =
          bodyError(parseJson(bareBody), 200) ??
          upstreamFailure(502, `Baidu answered a stream with no events: ${bareBody.slice(0, 200)}`, {
            type: 'baidu_error',
            retryable: true,
          });
      }
      return chunks;
    },
    usage: () => (finished ? running : undefined),
    failure: () => failed,
    done: () => finished,
  };
}
