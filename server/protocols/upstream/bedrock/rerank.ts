// Bedrock's rerank models (Amazon Rerank, Cohere Rerank 3.5) through the
// Agents for Amazon Bedrock runtime's Rerank operation: one text query, the
// documents inline, the model named by its foundation-model ARN. Signed with
// SigV4 as the `bedrock` service, like the runtime's calls.
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_agent-runtime_Rerank.html,
// https://docs.aws.amazon.com/bedrock/latest/userguide/rerank-use.html
//
// The answer is `{results: [{index, relevanceScore}], nextToken?}` and reports
// no usage: Bedrock bills a rerank per query, a query being up to 100
// documents (https://aws.amazon.com/bedrock/pricing/), which the relay bills as
// search units by that same rule, as it bills Cohere's.
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type HttpTarget,
  type RerankRequest,
  type RerankResponse,
  type UpstreamFailure,
} from '../../types';
import { isObject, parseJson, trimmedBaseUrl, upstreamFailure } from '../../shared';
import { bedrockKey, DEFAULT_REGION } from './keys';
import { bedrockModelId } from './models';

/** The most results Rerank returns (its numberOfResults' valid range is 1 to 1,000). */
const MAX_RESULTS = 1000;

/** The model's foundation-model ARN in the key's region; an ARN given as the model goes as it is. */
export function rerankModelArn(model: string, region: string): string {
  const id = bedrockModelId(model);
  return id.startsWith('arn:') ? id : `arn:aws:bedrock:${region}::foundation-model/${id}`;
}

export function rerankTarget(channel: ChannelConfig): HttpTarget | UpstreamFailure {
  const key = bedrockKey(channel);
  if (isUpstreamFailure(key)) return key;
  const base = trimmedBaseUrl(channel.baseUrl, `https://bedrock-agent-runtime.${key.region}.amazonaws.com`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (key.kind === 'api-key') headers.authorization = `Bearer ${key.token}`;
  return { url: `${base}/rerank`, method: 'POST', headers };
}

export function encodeRerank(request: RerankRequest, call: AdaptorCall): string {
  const key = call.channel ? bedrockKey(call.channel) : undefined;
  const region = key && !isUpstreamFailure(key) ? key.region : DEFAULT_REGION;
  const asked = request.top_n ?? request.documents.length;
  return JSON.stringify({
    queries: [{ type: 'TEXT', textQuery: { text: request.query } }],
    sources: request.documents.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: {
        numberOfResults: Math.max(1, Math.min(asked, request.documents.length, MAX_RESULTS)),
        modelConfiguration: { modelArn: rerankModelArn(request.model, region) },
      },
    },
  });
}

export function decodeRerank(body: string, call: AdaptorCall): RerankResponse | UpstreamFailure {
  const answer = parseJson(body);
  if (!isObject(answer) || !Array.isArray(answer.results))
    return upstreamFailure(502, "Bedrock's rerank answer has no results list", { retryable: true });
  const results: RerankResponse['results'] = [];
  for (const item of answer.results) {
    if (!isObject(item)) continue;
    const { index, relevanceScore } = item;
    if (
      typeof index === 'number' &&
      Number.isInteger(index) &&
      index >= 0 &&
      typeof relevanceScore === 'number' &&
      Number.isFinite(relevanceScore)
    ) {
      results.push({ index, relevance_score: relevanceScore });
    }
  }
  // no count in the answer: the relay bills Bedrock's rule (a query per 100 documents) from the request
  return { model: call.model, results, billedBy: 'search_units', searchUnitsByRule: true };
}
