// Bedrock's embedding models through InvokeModel, each in its vendor's own
// body: Amazon Titan Text Embeddings (one text a call: the relay makes one call
// per input) and Cohere Embed (a list of texts a call).
// Reference: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html,
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html
//
// Titan reports its tokens (`inputTextTokenCount`), billed as it counts them;
// Cohere on Bedrock reports none, and the relay bills its own count of the input.
import type { AdaptorCall, EmbeddingRequest, EmbeddingResponse, UpstreamFailure } from '../../types';
import { count, isObject, parseJson, upstreamFailure } from '../../shared';
import { bedrockModelId } from './models';

const isTitan = (model: string) => /(^|\.)amazon\.titan-embed-/.test(bedrockModelId(model));
const isCohere = (model: string) => /(^|\.)cohere\.embed-/.test(bedrockModelId(model));

/** Titan takes one text a call: the relay calls it once per input. */
export const embeddingsPerInput = (model: string): boolean => isTitan(model);

/** The client's input as texts; token arrays have no place in either vendor's body. */
function texts(input: EmbeddingRequest['input']): string[] {
  const list = Array.isArray(input) ? input : [input];
  if (!list.every((item): item is string => typeof item === 'string')) throw new Error('Bedrock embeds text only, not token arrays');
  return list;
}

/** Cohere's input types (its v3 models require one); a document unless the client named another. */
const COHERE_INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering']);

export function encodeEmbeddings(request: EmbeddingRequest, call: AdaptorCall): string {
  const inputs = texts(request.input);
  if (isTitan(call.model)) {
    if (inputs.length !== 1) throw new Error('Titan embeds one text a call');
    const body: Record<string, unknown> = { inputText: inputs[0] };
    if (typeof request.dimensions === 'number') body.dimensions = request.dimensions;
    if (typeof request.normalize === 'boolean') body.normalize = request.normalize;
    return JSON.stringify(body);
  }
  if (isCohere(call.model)) {
    const inputType =
      typeof request.input_type === 'string' && COHERE_INPUT_TYPES.has(request.input_type) ? request.input_type : 'search_document';
    const body: Record<string, unknown> = { texts: inputs, input_type: inputType };
    if (request.truncate === 'NONE' || request.truncate === 'START' || request.truncate === 'END') body.truncate = request.truncate;
    return JSON.stringify(body);
  }
  throw new Error(`${call.model} is not an embedding model this relay calls on Bedrock (Titan Text Embeddings or Cohere Embed)`);
}

const isVector = (value: unknown): value is number[] => Array.isArray(value) && value.every((item) => typeof item === 'number');

export function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const answer = parseJson(body);
  if (!isObject(answer)) return upstreamFailure(502, "Bedrock's embeddings answer is not a JSON object", { retryable: true });
  let vectors: number[][];
  let tokens: number;
  if (isVector(answer.embedding)) {
    vectors = [answer.embedding];
    tokens = count(answer.inputTextTokenCount);
  } else {
    // Cohere: a list of vectors, or by type when embedding_types was asked
    const embeddings = isObject(answer.embeddings) ? answer.embeddings.float : answer.embeddings;
    if (!Array.isArray(embeddings) || !embeddings.every(isVector))
      return upstreamFailure(502, "Bedrock's embeddings answer holds no vectors", { retryable: true });
    vectors = embeddings;
    const meta = isObject(answer.meta) && isObject(answer.meta.billed_units) ? answer.meta.billed_units : undefined;
    tokens = count(meta?.input_tokens);
  }
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: call.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
