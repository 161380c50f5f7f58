// Coze's chat v3 stream, decoded into chat chunks as it comes.
import type { AdaptorCall, ChatChunk, ChatChunkChoice, ChatStreamDecoder, UpstreamFailure, Usage } from '../../types';
import { chunkOf, count, isObject, parseJson, SseOrBareBody, upstreamFailure } from '../../shared';
import { classify, errorOf } from './errors';

/** Coze's usage (`conversation.chat.completed`): input_count + output_count = token_count. */
export function usageOf(value: unknown): Usage | undefined {
  if (!isObject(value) || !isObject(value.usage)) return undefined;
  const usage = value.usage;
  if (usage.input_count === undefined && usage.output_count === undefined) return undefined;
  return { promptTokens: count(usage.input_count), completionTokens: count(usage.output_count), cachedPromptTokens: 0 };
}

/** A message delta's answer text and reasoning; undefined for other messages (a tool's output, a follow-up suggestion) or nothing new. */
function answerDelta(data: unknown): ChatChunkChoice['delta'] | undefined {
  if (!isObject(data) || data.type !== 'answer') return undefined;
  const delta: ChatChunkChoice['delta'] = {};
  if (typeof data.content === 'string' && data.content) delta.content = data.content;
  if (typeof data.reasoning_content === 'string' && data.reasoning_content) delta.reasoning_content = data.reasoning_content;
  return delta.content || delta.reasoning_content ? delta : undefined;
}

/** The failure a conversation.chat.failed event states (its last_error), or one that says it gave no reason. */
function chatFailure(data: unknown): UpstreamFailure {
  const last = isObject(data) ? data.last_error : undefined;
  return errorOf(last, 200) ?? upstreamFailure(502, 'the Coze chat failed without saying why', { type: 'coze_error', retryable: true });
}

/**
 * The events: `conversation.chat.created` / `in_progress` (the chat's
 * status), `conversation.message.delta` (a piece of a message; only the
 * `answer` type is the bot's reply, others are plugin calls, their results,
 * follow-up suggestions), `conversation.message.completed` (a message whole,
 * which repeats the deltas), `conversation.chat.completed` (usage),
 * `conversation.chat.failed` (`last_error`), `conversation.chat.requires_action`
 * (the bot waits for a client-side plugin result this gateway cannot give),
 * `error` (`{code, msg}`) and `done`.
 */
export function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseOrBareBody();
  let usage: Usage | undefined;
  let failed: UpstreamFailure | undefined;
  let started = false;
  let closed = false;
  let finished = false;

  const chunk = (delta: ChatChunkChoice['delta'], finish: ChatChunkChoice['finish_reason']): ChatChunk => {
    if (!started) delta = { role: 'assistant', ...delta };
    started = true;
    return chunkOf(call, call.model, [{ index: 0, delta, finish_reason: finish }]);
  };

  function handle(event: { event: string; data: string }): ChatChunk[] {
    if (failed || finished) return [];
    const data = parseJson(event.data);
    switch (event.event) {
      case 'conversation.message.delta': {
        const delta = closed ? undefined : answerDelta(data);
        return delta ? [chunk(delta, null)] : [];
      }
      case 'conversation.chat.completed': {
        usage = usageOf(data) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
        finished = true;
        if (closed) return [];
        closed = true;
        return [chunk({}, 'stop')];
      }
      case 'conversation.chat.failed':
        failed = chatFailure(data);
        return [];
      case 'conversation.chat.requires_action':
        failed = upstreamFailure(400, 'the Coze bot asked for a client-side plugin result, which this gateway cannot give', {
          type: 'coze_error',
          code: 'requires_action',
          retryable: false,
        });
        return [];
      case 'error':
        failed = errorOf(data, 400) ?? classify(502, 5000, `Coze reported an error in the stream: ${event.data.slice(0, 200)}`);
        return [];
      case 'done':
        finished = true;
        if (!usage)
          failed = upstreamFailure(502, 'the Coze stream ended before the chat completed', { type: 'coze_error', retryable: true });
        return [];
      default:
        return [];
    }
  }

  return {
    push: (data) => parser.push(data).flatMap(handle),
    end() {
      const { events, bareBody } = parser.end();
      const chunks = events.flatMap(handle);
      if (bareBody && !failed && !usage) {
        failed =
          errorOf(parseJson(bareBody), 200) ??
          upstreamFailure(502, `Coze answered a stream with no events: ${bareBody.slice(0, 200)}`, { type: 'coze_error', retryable: true });
      }
      return chunks;
    },
    usage: () => usage,
    failure: () => failed,
    done: () => finished,
  };
}
