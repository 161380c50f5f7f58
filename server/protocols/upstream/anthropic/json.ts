// Anthropic's whole answer (and the shapes its stream shares) decoded into
// an OpenAI chat.completion: text blocks into `content`, `tool_use` into
// `tool_calls`, `thinking` into `reasoning_content`, usage with the cache.
import type { AdaptorCall, ChatResponse, ChatToolCall, FinishReason, UpstreamFailure, Usage } from '../../types';
import { count, openAiUsage, parseJson, upstreamFailure } from '../../shared';
import { errorInBody } from './errors';

// ---- the vendor's shapes (lenient: only what is read) ----

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface AnthropicAnswer {
  type?: string;
  id?: string;
  model?: string;
  content?: Array<{ type?: string; text?: string; thinking?: string; id?: string; name?: string; input?: unknown }>;
  stop_reason?: string | null;
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

// ---- answers ----

export function finishReason(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

/** Anthropic's counts in the relay's terms: the cache reads and writes are part of the prompt. */
export function anthropicUsage(usage: AnthropicUsage): Usage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheCreation = count(usage.cache_creation_input_tokens);
  return {
    promptTokens: count(usage.input_tokens) + cacheRead + cacheCreation,
    completionTokens: count(usage.output_tokens),
    cachedPromptTokens: cacheRead,
    cacheCreationTokens: cacheCreation,
  };
}

/** An answer's content blocks as one chat message: text as content, thinking as reasoning_content, tool_use as tool_calls. */
function answerMessage(content: NonNullable<AnthropicAnswer['content']>, call: AdaptorCall): ChatResponse['choices'][number]['message'] {
  let text = '';
  let reasoning = '';
  let hasText = false;
  const toolCalls: ChatToolCall[] = [];
  for (const block of content) {
    if (block?.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (block?.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
    } else if (block?.type === 'tool_use') {
      toolCalls.push({
        id: block.id || `call_${call.responseId}_${toolCalls.length}`,
        type: 'function',
        function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: ChatResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: hasText || toolCalls.length === 0 ? text : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  return message;
}

/** Anthropic's whole answer as a chat.completion, or the failure it reports. */
export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseJson(body) as AnthropicAnswer | undefined;
  if (!answer || typeof answer !== 'object')
    return upstreamFailure(502, 'Anthropic answered with something that is not JSON', { retryable: true });
  if (answer.type === 'error' || answer.error) return errorInBody(answer.error);
  const message = answerMessage(answer.content ?? [], call);
  return {
    id: answer.id || call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: answer.model || call.model,
    choices: [{ index: 0, message, finish_reason: finishReason(answer.stop_reason) }],
    usage: openAiUsage(anthropicUsage(answer.usage ?? {})),
  };
}
