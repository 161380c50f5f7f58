// The client-side protocols the relay speaks, one codec each. Adding one is a
// codec file here, its line below, and route declarations that name it
// (server/relay/textRoute.ts `textRoute(codec, ...)`).
import type { InboundProtocol } from '../types';
import { anthropicMessages } from './anthropicMessages';
import { geminiNative } from './geminiNative';
import { openaiChat } from './openaiChat';
import { openaiResponses } from './openaiResponses';
import type { InboundCodec } from './types';

export const INBOUND_CODECS = {
  openai: openaiChat,
  anthropic: anthropicMessages,
  'openai-responses': openaiResponses,
  gemini: geminiNative,
} satisfies Record<InboundProtocol, InboundCodec>;

export type { InboundCodec, InboundStreamEncoder, JsonAnswer, Usage, TextMode, UsageWatcher, InboundError } from './types';
export { openaiChat } from './openaiChat';
export { anthropicMessages } from './anthropicMessages';
export { openaiResponses } from './openaiResponses';
export { geminiNative } from './geminiNative';
