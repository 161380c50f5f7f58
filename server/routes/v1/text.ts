// The token-metered routes clients reach: chat, completions, edits,
// embeddings (also under the legacy /v1/engines/:model path) and moderations,
// and the same in Anthropic's, OpenAI Responses' and Gemini's protocols. Each
// is a declaration: a path, the client-side codec that reads and writes it
// (server/protocols/inbound), and the text route (server/relay/textRoute.ts).
// Those without a path parameter are also taken before Fastify (server/relay/fastPath.ts).
import { anthropicMessages, geminiNative, openaiChat, openaiResponses } from '../../protocols/inbound';
import type { RelayDeclaration } from '../../relay/pipeline';
import { textRoute } from '../../relay/textRoute';

/** The text routes clients reach, by protocol: each path names the codec that reads and writes it. */
export const TEXT_ROUTES: readonly RelayDeclaration[] = [
  { path: '/v1/chat/completions', route: textRoute(openaiChat, 'chat', '/v1/chat/completions') },
  { path: '/v1/completions', route: textRoute(openaiChat, 'completions', '/v1/completions') },
  { path: '/v1/edits', route: textRoute(openaiChat, 'edits', '/v1/edits') },
  { path: '/v1/embeddings', route: textRoute(openaiChat, 'embeddings', '/v1/embeddings') },
  // OpenAI retired /v1/engines: it goes to /v1/embeddings
  { path: '/v1/engines/:model/embeddings', route: textRoute(openaiChat, 'embeddings', '/v1/embeddings') },
  { path: '/v1/moderations', route: textRoute(openaiChat, 'moderations', '/v1/moderations') },
  // Anthropic Messages (Claude Code, the Anthropic SDKs): passes to Anthropic channels, translated to any other
  { path: '/v1/messages', route: textRoute(anthropicMessages, 'chat', '/v1/messages') },
  // OpenAI Responses: passes to the types that serve it (OpenAI's own), translated into chat for any other
  { path: '/v1/responses', route: textRoute(openaiResponses, 'chat', '/v1/responses') },
];

/**
 * Gemini's generateContent and streamGenerateContent (@google/genai and Google's other SDKs): passes to Gemini
 * channels, translated to any other. Its paths (`/v1beta/models/{model}:{method}`) are not Fastify's to
 * route: ./geminiNative.ts reads them and runs this route.
 */
export const GEMINI_TEXT_ROUTE = textRoute(geminiNative, 'chat', '/v1beta/models/{model}:generateContent');
