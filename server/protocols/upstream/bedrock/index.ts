// AWS Bedrock (channel type 33, one-api's "AWS Claude"): every model family
// Bedrock serves through its Converse API (Anthropic Claude, Meta Llama,
// Mistral, Amazon Nova, Cohere Command, DeepSeek...), one request shape for
// all of them.
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html (SigV4),
// https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html (API keys).
//
// OpenAI chat → Converse: system and developer messages become `system`
// blocks, consecutive messages of one role merge (Converse wants user and
// assistant to alternate), tool results become user `toolResult` blocks,
// tool calls `toolUse` blocks, inline images `image` blocks of bytes;
// max_tokens, temperature, top_p and stop go in `inferenceConfig`, Claude's
// top_k in `additionalModelRequestFields`; a part marked for Anthropic's
// prompt cache is followed by a `cachePoint` on Claude. Keys: `AK|SK|region`
// (IAM credentials, an optional fourth part the session token), signed with
// SigV4 by `sign`; or a Bedrock API key sent as a bearer token.
//
// Not mapped, because Converse has no such field: `n`, `seed`, the
// penalties, `logit_bias`, `response_format`; tool_choice `none` (the
// tools go, and the model chooses).
//
// A client of Anthropic's Messages API asking for Claude takes the native
// path instead (native.ts): its own request through InvokeModel, Bedrock's
// Anthropic Messages flavour, its stream re-framed as Anthropic's SSE.
// Rerank (Amazon Rerank, Cohere Rerank 3.5) goes to the Agents for Amazon
// Bedrock runtime's Rerank operation (rerank.ts); embeddings (Titan, Cohere
// Embed) to InvokeModel in each vendor's body (embeddings.ts).
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat } from './json';
import { bedrockNative } from './native';
import { decodeRerank, encodeRerank } from './rerank';
import { decodeEmbeddings, embeddingsPerInput, encodeEmbeddings } from './embeddings';
import { encodeChat, sign, target } from './request';
import { BedrockStreamDecoder } from './stream';

export { BEDROCK_MODEL_IDS, bedrockModelId } from './models';
export { EventStreamFrames } from './stream';
export { BEDROCK_ANTHROPIC_VERSION, InvokeStreamReframer } from './native';
export { rerankModelArn } from './rerank';

export const bedrockAdaptor: UpstreamAdaptor = {
  protocol: 'bedrock',
  docs: 'https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html',
  operations: new Set(['chat', 'embeddings', 'rerank']),
  native: bedrockNative,
  transport: 'http',
  target,
  sign,
  encodeChat,
  decodeChat,
  decodeChatStream: (call) => new BedrockStreamDecoder(call),
  encodeEmbeddings,
  decodeEmbeddings,
  embeddingsPerInput,
  encodeRerank,
  decodeRerank,
  failure,
};
