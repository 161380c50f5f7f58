// Vertex AI's embeddings answer (`:predict` on a Google text embedding
// model): one prediction per instance, each `{embeddings: {values,
// statistics: {token_count, truncated}}}`; the usage is the summed token_count.
import { count, embeddingsInOrder, isObject, parseJson, upstreamFailure } from '../../shared';
import type { AdaptorCall, EmbeddingResponse, UpstreamFailure } from '../../types';
import { failure } from './errors';

export function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const answer = parseJson(body);
  if (!isObject(answer))
    return upstreamFailure(502, `Vertex AI answered something that is not JSON: ${body.slice(0, 200)}`, { retryable: true });
  if (isObject(answer.error)) return failure(count(answer.error.code) || 500, body);
  if (!Array.isArray(answer.predictions)) return upstreamFailure(502, 'Vertex AI answered without predictions', { retryable: true });
  let tokens = 0;
  const items = answer.predictions.map((prediction: unknown, index) => {
    const embeddings = isObject(prediction) && isObject(prediction.embeddings) ? prediction.embeddings : {};
    if (isObject(embeddings.statistics)) tokens += count(embeddings.statistics.token_count);
    const values = Array.isArray(embeddings.values) ? embeddings.values.filter((value): value is number => typeof value === 'number') : [];
    return { index, embedding: values };
  });
  return { object: 'list', data: embeddingsInOrder(items), model: call.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
