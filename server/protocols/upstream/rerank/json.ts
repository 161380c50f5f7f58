// The answers of the three rerank shapes, read leniently into the relay's
// RerankResponse: the ranking, and the usage as the vendor counts it
// (tokens, or Cohere's search units). An error inside a 200 is the caller's
// to see first (the OpenAI-wire adaptor reads OpenAI's error object).
import type { RerankWire } from '../../../../common/channelTypes';
import { count, isObject, parseJson, upstreamFailure } from '../../shared';
import type { AdaptorCall, RerankResponse, UpstreamFailure } from '../../types';

/** A number the vendor reported, or undefined when it reported none (0 is a report). */
function reported(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

/** The items of the ranking that carry an index and a score; anything else in the list is passed over. */
function ranking(list: unknown[]): RerankResponse['results'] {
  const results: RerankResponse['results'] = [];
  for (const item of list) {
    if (!isObject(item)) continue;
    const { index, relevance_score: score } = item;
    if (typeof index === 'number' && Number.isInteger(index) && index >= 0 && typeof score === 'number' && Number.isFinite(score))
      results.push({ index, relevance_score: score });
  }
  return results;
}

/**
 * The tokens a vendor of Jina's shape counted: Jina's `usage.total_tokens`;
 * SiliconFlow's `meta.tokens` (input and output) or `meta.billed_units`.
 */
function jinaTokens(answer: Record<string, unknown>): number | undefined {
  const usage = isObject(answer.usage) ? answer.usage : undefined;
  const fromUsage = reported(usage?.total_tokens) ?? reported(usage?.prompt_tokens);
  if (fromUsage !== undefined) return fromUsage;
  const meta = isObject(answer.meta) ? answer.meta : undefined;
  const tokens = isObject(meta?.tokens) ? meta.tokens : undefined;
  if (tokens && (reported(tokens.input_tokens) !== undefined || reported(tokens.output_tokens) !== undefined))
    return count(tokens.input_tokens) + count(tokens.output_tokens);
  const billed = isObject(meta?.billed_units) ? meta.billed_units : undefined;
  if (billed && (reported(billed.input_tokens) !== undefined || reported(billed.output_tokens) !== undefined))
    return count(billed.input_tokens) + count(billed.output_tokens);
  return undefined;
}

/** A vendor's rerank answer (a 2xx body, its error object already ruled out), or a failure when it holds no ranking. */
export function decodeRerankAnswer(wire: RerankWire, body: string, call: Pick<AdaptorCall, 'model'>): RerankResponse | UpstreamFailure {
  const answer = parseJson(body);
  if (!isObject(answer)) return upstreamFailure(502, 'the upstream answered the rerank with a body that is not a JSON object');
  const list = wire === 'voyage' ? answer.data : answer.results;
  if (!Array.isArray(list))
    return upstreamFailure(502, `the upstream's rerank answer has no ${wire === 'voyage' ? 'data' : 'results'} list`);
  const decoded: RerankResponse = {
    model: typeof answer.model === 'string' && answer.model ? answer.model : call.model,
    results: ranking(list),
    billedBy: wire === 'cohere' ? 'search_units' : 'tokens',
  };
  if (typeof answer.id === 'string' && answer.id) decoded.id = answer.id;
  if (wire === 'cohere') {
    const meta = isObject(answer.meta) ? answer.meta : undefined;
    const billed = isObject(meta?.billed_units) ? meta.billed_units : undefined;
    const units = reported(billed?.search_units);
    if (units !== undefined) decoded.searchUnits = units;
  } else {
    const tokens = wire === 'voyage' ? reported(isObject(answer.usage) ? answer.usage.total_tokens : undefined) : jinaTokens(answer);
    if (tokens !== undefined) decoded.tokens = tokens;
  }
  return decoded;
}
