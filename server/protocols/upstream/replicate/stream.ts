// A streamed call to Replicate: the prediction is created with
// `stream: true` (its answer names `urls.stream` and `urls.get`), the relay
// follows `urls.stream` (GET, `Accept: text/event-stream`) and, once that is
// done, fetches the prediction at `urls.get` for its token counts.
// Reference: https://replicate.com/docs/topics/predictions/streaming
//
// The events: `output` (plain text: a piece of the answer, its lines as
// several `data:` lines), `logs` (the model's log lines, not the answer),
// `error` (plain text: the prediction failed) and `done` (JSON: `{}` when it
// succeeded, `{"reason": "canceled"}` or `{"reason": "error"}` otherwise).
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type ChatChunk,
  type ChatStreamDecoder,
  type FollowedTargets,
  type UpstreamFailure,
} from '../../types';
import { chunkOf, isObject, parseJson, SseParser, upstreamFailure } from '../../shared';
import { readPrediction } from './json';

/** Replicate's own hosts (api.replicate.com, stream.replicate.com, streaming.api.replicate.com): where a followed stream may be. */
export const FOLLOW_HOSTS: readonly string[] = ['replicate.com'];

/** The prediction's stream and its own URL, from the prediction just created; or why it cannot be followed. */
export function followStream(body: string, channel: ChannelConfig): FollowedTargets | UpstreamFailure {
  const prediction = readPrediction(body);
  if (isUpstreamFailure(prediction)) return prediction;
  const urls = isObject(prediction.urls) ? prediction.urls : {};
  if (typeof urls.stream !== 'string' || !urls.stream) {
    // Replicate gives no stream URL for a model that cannot stream; another channel may serve one that can
    return upstreamFailure(502, 'Replicate gave no stream URL for this prediction (the model does not stream its output)', {
      type: 'replicate_error',
      code: 'stream_unsupported',
      retryable: true,
    });
  }
  const authorization = `Bearer ${channel.key}`;
  return {
    stream: {
      url: urls.stream,
      method: 'GET',
      headers: { Authorization: authorization, Accept: 'text/event-stream', 'Cache-Control': 'no-store' },
    },
    ...(typeof urls.get === 'string' && urls.get
      ? { usage: { url: urls.get, method: 'GET' as const, headers: { Authorization: authorization, Accept: 'application/json' } } }
      : {}),
  };
}

export function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseParser();
  let started = false;
  let finished = false;
  let failed: UpstreamFailure | undefined;

  const chunk = (content: string | undefined, finish: 'stop' | null): ChatChunk => {
    let delta: ChatChunk['choices'][number]['delta'] = { role: 'assistant', content: content ?? '' };
    if (started) delta = content === undefined ? {} : { content };
    started = true;
    return chunkOf(call, call.model, [{ index: 0, delta, finish_reason: finish }]);
  };

  function handle(event: { event: string; data: string }): ChatChunk[] {
    if (finished || failed) return [];
    switch (event.event) {
      case 'output':
        return event.data ? [chunk(event.data, null)] : [];
      case 'error':
        failed = upstreamFailure(502, `Replicate: ${event.data.trim() || 'the prediction failed'}`, {
          type: 'replicate_error',
          code: 'prediction_failed',
          retryable: true,
        });
        return [];
      case 'done': {
        const data = parseJson(event.data);
        const reason = isObject(data) && typeof data.reason === 'string' ? data.reason : '';
        finished = true;
        if (reason === 'canceled' || reason === 'error') {
          failed = upstreamFailure(502, `Replicate: the prediction ${reason === 'error' ? 'failed' : 'was canceled'}`, {
            type: 'replicate_error',
            code: `prediction_${reason}`,
            retryable: true,
          });
          return [];
        }
        return [chunk(undefined, 'stop')];
      }
      default:
        // `logs`, and anything newer
        return [];
    }
  }

  return {
    push: (data) => parser.push(data).flatMap(handle),
    end() {
      const chunks = parser.end().flatMap(handle);
      if (!finished && !failed)
        failed = upstreamFailure(502, 'the Replicate stream ended before its done event', {
          type: 'replicate_error',
          code: 'stream_cut',
          retryable: true,
        });
      return chunks;
    },
    // the events carry no token counts: the relay asks the prediction for them (usageAfterStream)
    usage: () => undefined,
    failure: () => failed,
    done: () => finished,
  };
}
