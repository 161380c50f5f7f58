// Google's Gemini API (generativelanguage.googleapis.com), native protocol:
// https://ai.google.dev/api/generate-content and https://ai.google.dev/api/embeddings
// Serves channel type 24 (Gemini) and type 11 (Google PaLM2: PaLM is retired
// upstream, so a PaLM key relays through Gemini's API).
//
// Choices worth knowing:
// - The key travels in `x-goog-api-key`, never in the query string (URLs end up in logs).
// - System and developer messages become `systemInstruction`, never a fake user turn + "Okay".
// - A prompt Google blocks (promptFeedback.blockReason, no candidates) becomes an answer with
//   `finish_reason: "content_filter"` and empty content, billed with the usage Google reports:
//   the same thing OpenAI clients see when an answer is filtered, and no retry on another
//   channel (the prompt would be blocked there too).
// - Gemini reports no token usage for embeddings: decodeEmbeddings reports `prompt_tokens: 0`
//   unless the answer carries `usageMetadata`, and the relay counts the input itself then.
// - Gemini 3 rejects a replayed function call without its `thoughtSignature`; the signature
//   rides on the tool call as `extra_content.google.thought_signature` (the field Google's own
//   OpenAI-compatible endpoint uses), and comes back from it.
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat, decodeEmbeddings, decodeParts, usageOf } from './json';
import { encodeChat, encodeEmbeddings, target } from './request';
import { decodeChatStream } from './stream';

export type { GeminiCandidate, GeminiContent, GeminiPart, GeminiResponse, GeminiUsageMetadata } from './json';

export const geminiAdaptor: UpstreamAdaptor = {
  protocol: 'gemini',
  docs: 'https://ai.google.dev/api/generate-content',
  // Google's own wire: a Gemini client's request passes as bytes (the model is in the path `target` writes)
  speaks: 'gemini',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  encodeEmbeddings,
  decodeEmbeddings,
  failure,
  // chat's web_search_options become Google Search grounding (request.ts)
  webSearch: () => true,
};

// what the Gemini client side (../../inbound/geminiNative.ts) reads from the same wire
export { decodeParts as decodeGeminiParts, usageOf as usageOfGemini };
