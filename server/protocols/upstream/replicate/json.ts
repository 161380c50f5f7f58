// A finished Replicate prediction, decoded: its output (a list of text
// pieces, the model's tokens as they came) and its metrics (token counts).
import { isUpstreamFailure, type AdaptorCall, type ChatChunk, type ChatResponse, type UpstreamFailure, type Usage } from '../../types';
import { assembleChatResponse, chunkOf, count, isObject, parseJson, upstreamFailure } from '../../shared';

/** The text pieces a prediction produced: a list of strings, or one string. */
function piecesOf(output: unknown): string[] {
  if (typeof output === 'string') return [output];
  if (Array.isArray(output)) return output.filter((piece): piece is string => typeof piece === 'string');
  return [];
}

/** The answer in a prediction, as the chunks a stream of it would be, with the usage; or why there is none. */
export function predictionChunks(body: string, call: AdaptorCall): { chunks: ChatChunk[]; usage: Usage } | UpstreamFailure {
  const prediction = parseJson(body);
  if (!isObject(prediction)) return upstreamFailure(502, `Replicate answered something other than a prediction: ${body.slice(0, 200)}`, { type: 'replicate_error', retryable: true });
  const status = typeof prediction.status === 'string' ? prediction.status : '';
  if (status === 'failed' || status === 'canceled' || status === 'aborted') {
    const error = typeof prediction.error === 'string' && prediction.error ? prediction.error : `the prediction ${status}`;
    return upstreamFailure(502, `Replicate: ${error}`, { type: 'replicate_error', code: `prediction_${status}`, retryable: true });
  }
  if (status !== 'succeeded') {
    return upstreamFailure(504, `the Replicate prediction did not finish in time (status ${status || 'unknown'})`, { type: 'replicate_error', code: 'prediction_unfinished', retryable: false });
  }
  const metrics = isObject(prediction.metrics) ? prediction.metrics : {};
  const usage: Usage = { promptTokens: count(metrics.input_token_count), completionTokens: count(metrics.output_token_count), cachedPromptTokens: 0 };
  const chunks = piecesOf(prediction.output)
    .filter(Boolean)
    .map((piece, position) => chunkOf(call, call.model, [{ index: 0, delta: position === 0 ? { role: 'assistant', content: piece } : { content: piece }, finish_reason: null }]));
  chunks.push(chunkOf(call, call.model, [{ index: 0, delta: chunks.length === 0 ? { role: 'assistant', content: '' } : {}, finish_reason: 'stop' }]));
  return { chunks, usage };
}

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const decoded = predictionChunks(body, call);
  if (isUpstreamFailure(decoded)) return decoded;
  return assembleChatResponse(decoded.chunks, call, decoded.usage);
}
