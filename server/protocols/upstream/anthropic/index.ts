// Anthropic's Messages API (channel type 14).
// Reference: https://docs.anthropic.com/en/api/messages (request and answer),
// https://docs.anthropic.com/en/docs/build-with-claude/streaming (the event
// sequence), https://docs.anthropic.com/en/api/errors (error shapes).
//
// OpenAI chat → Messages: system and developer messages become `system`
// (joined by a blank line; never a fake turn), consecutive messages of one
// role merge (the API wants user and assistant to alternate), tool results
// become user `tool_result` blocks, tool calls `tool_use` blocks. Messages →
// OpenAI: text blocks join into `content`, `tool_use` into `tool_calls`,
// `thinking` into `reasoning_content`. Usage: Anthropic's `input_tokens`
// excludes the prompt-cache reads and writes, so the prompt billed is the sum
// of the three.
//
// Not mapped, because Messages has no such field: `n` (one choice only),
// `seed`, the penalties, `logit_bias`, `response_format`. `temperature` is
// passed as given (Anthropic's range is 0..1; above it the vendor refuses
// with a 400 that reaches the client rather than a silent clamp).
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat } from './json';
import { encodeChat, target } from './request';
import { AnthropicStreamDecoder } from './stream';

export { ANTHROPIC_VERSION, defaultMaxTokens, thinkingFor } from './request';
export { anthropicUsage, finishReason as anthropicFinishReason } from './json';

export const anthropicAdaptor: UpstreamAdaptor = {
  protocol: 'anthropic',
  docs: 'https://docs.anthropic.com/en/api/messages',
  operations: new Set(['chat']),
  // a Messages client's request passes to it as bytes, only the model changed
  speaks: 'anthropic',
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream: (call) => new AnthropicStreamDecoder(call),
  failure,
  // chat's web_search_options become Anthropic's web search tool (request.ts)
  webSearch: () => true,
};
