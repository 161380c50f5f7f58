// Embeddings from a model that takes one text a call (Bedrock's Titan): each
// input a translated call of its own. One entry point, embeddingsPerInput.
import { upstreamFailure } from '../../protocols/shared';
import type { EmbeddingResponse, UpstreamAdaptor } from '../../protocols/types';
import type { RoutedChannel } from '../channelSelect';
import type { Attempt, AttemptDeps, UpstreamRequest } from '../attempt';
import { translated } from './translated';

/** Whether a request goes one input a call: a list of several inputs (a list of token ids is one) to a model that takes one. */
export function embedsPerInput(
  adaptor: UpstreamAdaptor,
  upstreamModel: string,
  json: Record<string, unknown> | undefined,
): json is Record<string, unknown> & { input: unknown[] } {
  const input = json?.input;
  return (
    Array.isArray(input) &&
    input.length > 1 &&
    adaptor.embeddingsPerInput?.(upstreamModel) === true &&
    !input.every((item) => typeof item === 'number')
  );
}

/**
 * Embeddings from a model that takes one text a call (Bedrock's Titan): one
 * translated call per input, in order, joined into one answer (indexes in the
 * client's order, usage summed); the first failure is the attempt's.
 */
export async function embeddingsPerInput(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  upstreamModel: string,
  request: UpstreamRequest,
  inputs: unknown[],
): Promise<Attempt> {
  const joined: EmbeddingResponse = { object: 'list', data: [], model: upstreamModel, usage: { prompt_tokens: 0, total_tokens: 0 } };
  let last: Attempt | undefined;
  for (const [index, input] of inputs.entries()) {
    last = await translated(deps, adaptor, channel, 'embeddings', upstreamModel, { ...request, json: { ...request.json, input } });
    if (last.outcome !== 'answered') return last;
    const part = last.answer.translated?.embeddings;
    if (!part)
      return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered an embedding with no vector', { retryable: true }) };
    for (const item of part.data) joined.data.push({ ...item, index: index + item.index });
    joined.usage.prompt_tokens += part.usage.prompt_tokens;
    joined.usage.total_tokens += part.usage.total_tokens;
    joined.model = part.model;
  }
  if (!last || last.outcome !== 'answered')
    return {
      outcome: 'failed',
      failure: upstreamFailure(400, 'no input to embed', {
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        retryable: false,
      }),
    };
  return { outcome: 'answered', answer: { ...last.answer, translated: { ...last.answer.translated!, embeddings: joined } } };
}
