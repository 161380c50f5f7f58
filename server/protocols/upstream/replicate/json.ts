// A Replicate prediction, decoded: a finished one's output (a list of text
// pieces, the model's tokens as they came) and its metrics (token counts).
import { isUpstreamFailure, type AdaptorCall, type ChatChunk, type ChatResponse, type UpstreamFailure, type Usage } from '../../types';
import { assembleChatResponse, chunkOf, count, isObject, parseJson, upstreamFailure } from '../../shared';

/** The text pieces a prediction produced: a list of strings, or one string. */
function piecesOf(output: unknown): string[] {
  if (typeof output === 'string') return [output];
  if (Array.isArray(output)) return output.filter((piece): piece is string => typeof piece === 'string');
  return [];
}

/** A prediction object, or why the body is not one (or is one that failed). */
export function readPrediction(body: string): Record<string, unknown> | UpstreamFailure {
  const prediction = parseJson(body);
  if (!isObject(prediction))
    return upstreamFailure(502, `Replicate answered something other than a prediction: ${body.slice(0, 200)}`, {
      type: 'replicate_error',
      retryable: true,
    });
  const status = typeof prediction.status === 'string' ? prediction.status : '';
  if (status === 'failed' || status === 'canceled' || status === 'aborted') {
    const error = typeof prediction.error === 'string' && prediction.error ? prediction.error : `the prediction ${status}`;
    return upstreamFailure(502, `Replicate: ${error}`, { type: 'replicate_error', code: `prediction_${status}`, retryable: true });
  }
  return prediction;
}

/** A prediction's token counts (`metrics.input_token_count`, `output_token_count`), when it has them. */
function metricsUsage(prediction: Record<string, unknown>): Usage | undefined {
  const metrics = prediction.metrics;
  if (!isObject(metrics) || (metrics.input_token_count === undefined && metrics.output_token_count === undefined)) return undefined;
  return { promptTokens: count(metrics.input_token_count), completionTokens: count(metrics.output_token_count), cachedPromptTokens: 0 };
}

/** The answer in a finished prediction, as the chunks a stream of it would be, with the usage; or why there is none. */
export function predictionChunks(body: string, call: AdaptorCall): { chunks: ChatChunk[]; usage: Usage } | UpstreamFailure {
  const prediction = readPrediction(body);
  if (isUpstreamFailure(prediction)) return prediction;
  const status = typeof prediction.status === 'string' ? prediction.status : '';
  if (status !== 'succeeded') {
    return upstreamFailure(504, `the Replicate prediction did not finish in time (status ${status || 'unknown'})`, {
      type: 'replicate_error',
      code: 'prediction_unfinished',
      retryable: false,
    });
  }
  const usage = metricsUsage(prediction) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
  const chunks = piecesOf(prediction.output)
    .filter(Boolean)
    .map((piece, position) =>
      chunkOf(call, call.model, [
        { index: 0, delta: position === 0 ? { role: 'assistant', content: piece } : { content: piece }, finish_reason: null },
      ]),
    );
  chunks.push(
    chunkOf(call, call.model, [{ index: 0, delta: chunks.length === 0 ? { role: 'assistant', content: '' } : {}, finish_reason: 'stop' }]),
  );
  return { chunks, usage };
}

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const decoded = predictionChunks(body, call);
  if (isUpstreamFailure(decoded)) return decoded;
  return assembleChatResponse(decoded.chunks, call, decoded.usage);
}

/**
 * The usage of a streamed prediction, from the prediction fetched once its
 * stream was done (`urls.get`): its metrics, which its events never carry.
 * Undefined when the prediction has none yet (the relay then bills its own count).
 */
export function usageAfterStream(body: string): Usage | undefined {
  const prediction = parseJson(body);
  return isObject(prediction) ? metricsUsage(prediction) : undefined;
}
