// Converse's whole answer as an OpenAI chat.completion: text blocks into
// `content`, `toolUse` into `tool_calls`, `reasoningContent` into
// `reasoning_content`, and usage with the prompt cache counted as Anthropic's
// adaptor counts it (Bedrock's `inputTokens`, like Anthropic's, leaves out
// the cache reads and writes).
import type { AdaptorCall, ChatResponse, ChatToolCall, FinishReason, UpstreamFailure, Usage } from '../../types';
import { openAiUsage, parseJson, upstreamFailure } from '../../shared';
import { anthropicFinishReason, anthropicUsage } from '../anthropic';

// ---- the vendor's shapes (lenient: only what is read) ----

export interface ConverseUsage {
  inputTokens?: number | null;
  outputTokens?: number | null;
  cacheReadInputTokens?: number | null;
  cacheWriteInputTokens?: number | null;
}

interface ConverseContentBlock {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  reasoningContent?: { reasoningText?: { text?: string } };
}

interface ConverseAnswer {
  output?: { message?: { role?: string; content?: ConverseContentBlock[] } };
  stopReason?: string;
  usage?: ConverseUsage;
  message?: string;
}

// ---- answers ----

/** Converse's stop reasons are Anthropic's (end_turn, tool_use, max_tokens, stop_sequence...) and its guardrails'. */
export function finishReason(stopReason: unknown): FinishReason {
  if (stopReason === 'guardrail_intervened' || stopReason === 'content_filtered') return 'content_filter';
  return anthropicFinishReason(stopReason);
}

/** Bedrock's counts in the relay's terms. */
export function bedrockUsage(usage: ConverseUsage): Usage {
  return anthropicUsage({
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheWriteInputTokens,
  });
}

/** An answer's content blocks as one chat message: text as content, reasoning as reasoning_content, toolUse as tool_calls. */
function answerMessage(content: ConverseContentBlock[], call: AdaptorCall): ChatResponse['choices'][number]['message'] {
  let text = '';
  let reasoning = '';
  let hasText = false;
  const toolCalls: ChatToolCall[] = [];
  for (const block of content) {
    if (!block || typeof block !== 'object') continue;
    if (typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (block.toolUse && typeof block.toolUse === 'object') {
      toolCalls.push({
        id: block.toolUse.toolUseId || `call_${call.responseId}_${toolCalls.length}`,
        type: 'function',
        function: { name: block.toolUse.name ?? '', arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    } else if (typeof block.reasoningContent?.reasoningText?.text === 'string') {
      reasoning += block.reasoningContent.reasoningText.text;
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

/** A Converse answer as a chat.completion, or a failure when it has no output. */
export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseJson(body) as ConverseAnswer | undefined;
  if (!answer || typeof answer !== 'object')
    return upstreamFailure(502, 'Bedrock answered with something that is not JSON', { retryable: true });
  if (!answer.output || typeof answer.output !== 'object') {
    const said = typeof answer.message === 'string' && answer.message ? `: ${answer.message}` : '';
    return upstreamFailure(502, `Bedrock answered without an output${said}`, { retryable: true });
  }
  const message = answerMessage(answer.output.message?.content ?? [], call);
  return {
    id: call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: call.model,
    choices: [{ index: 0, message, finish_reason: finishReason(answer.stopReason) }],
    usage: openAiUsage(bedrockUsage(answer.usage ?? {})),
  };
}
