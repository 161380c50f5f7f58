// Google Vertex AI (channel type 42): Gemini and Claude on Google Cloud.
// API reference: https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest
// (Gemini: .../model-reference/inference; Claude: .../partner-models/claude)
//
// The key is a service account's JSON key file. The relay trades it for an
// OAuth access token (`credential`: a JWT signed with the key, sent to the
// key's token_uri), caches the token until shortly before it expires, and
// every call carries it as a Bearer token. `other` is `region` (us-central1
// when empty, `global` allowed) or `region|project`; the project is the key's
// project_id otherwise. The channel's base URL replaces Google's regional origin.
//
// Gemini models go to `publishers/google/models/{model}:generateContent`
// (`:streamGenerateContent?alt=sse`), Claude models (`claude-*`) to
// `publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict`);
// the Gemini and Anthropic adaptors' encoders and decoders do the rest, so
// usage (cached and thinking tokens included) is billed as those vendors
// report it. Claude's plain names are mapped to Vertex's ids (request.ts).
//
// Embeddings (text-embedding-005, text-multilingual-embedding-002,
// gemini-embedding-001) go to `publishers/google/models/{model}:predict`,
// billed at the tokens Vertex counted (json.ts).
import type { AdaptorCall, UpstreamAdaptor } from '../../types';
import { decodeChat as decodeAnthropicChat } from '../anthropic/json';
import { AnthropicStreamDecoder } from '../anthropic/stream';
import { decodeChat as decodeGeminiChat } from '../gemini/json';
import { decodeChatStream as decodeGeminiStream } from '../gemini/stream';
import { credential } from './credential';
import { failure } from './errors';
import { decodeEmbeddings } from './json';
import { encodeChat, encodeEmbeddings, publisherOf, target } from './request';

export { vertexClaudeModel, VERTEX_ANTHROPIC_VERSION } from './request';

const claude = (call: AdaptorCall) => publisherOf(call.model) === 'anthropic';

export const vertexAdaptor: UpstreamAdaptor = {
  protocol: 'vertex',
  docs: 'https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',
  credential,
  target,
  encodeChat,
  decodeChat: (body, call) => (claude(call) ? decodeAnthropicChat(body, call) : decodeGeminiChat(body, call)),
  decodeChatStream: (call) => (claude(call) ? new AnthropicStreamDecoder(call) : decodeGeminiStream(call)),
  encodeEmbeddings,
  decodeEmbeddings,
  failure,
  // Gemini's Google Search grounding, or Claude's web search tool, as the model's encoder writes it
  webSearch: () => true,
};
