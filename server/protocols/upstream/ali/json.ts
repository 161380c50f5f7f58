// DashScope's shapes, and its whole answers (chat in either result_format,
// embeddings) decoded into OpenAI's.
import type { AdaptorCall, ChatResponse, ChatToolCall, EmbeddingResponse, FinishReason, UpstreamFailure, Usage } from '../../types';
import { contentText, count, embeddingsInOrder, openAiUsage, parseJson, upstreamFailure } from '../../shared';
import { errorOf } from './errors';

// ---- answers ----

export interface AliToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface AliChoice {
  index?: number;
  finish_reason?: string | null;
  message?: { role?: string; content?: unknown; reasoning_content?: string; tool_calls?: AliToolCall[] };
}

export interface AliAnswer {
  request_id?: string;
  output?: { choices?: AliChoice[]; text?: string; finish_reason?: string | null };
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    output_tokens_details?: { reasoning_tokens?: number };
  };
}

/** DashScope says "null" (a string) for a choice still going. */
export function finishOf(reason: string | null | undefined): FinishReason | null {
  if (!reason || reason === 'null') return null;
  if (reason === 'length' || reason === 'tool_calls' || reason === 'content_filter' || reason === 'stop') return reason;
  return 'stop';
}

export function usageOf(answer: AliAnswer): Usage | undefined {
  const usage = answer.usage;
  if (!usage || (usage.input_tokens === undefined && usage.output_tokens === undefined)) return undefined;
  const result: Usage = {
    promptTokens: count(usage.input_tokens),
    completionTokens: count(usage.output_tokens),
    cachedPromptTokens: count(usage.prompt_tokens_details?.cached_tokens),
  };
  const reasoning = count(usage.output_tokens_details?.reasoning_tokens);
  if (reasoning) result.reasoningTokens = reasoning;
  return result;
}

/** The choices of an answer, whichever result_format it came in. */
export function choicesOf(answer: AliAnswer): AliChoice[] {
  if (Array.isArray(answer.output?.choices)) return answer.output.choices;
  if (typeof answer.output?.text === 'string')
    return [{ finish_reason: answer.output.finish_reason, message: { role: 'assistant', content: answer.output.text } }];
  return [];
}

export const toolCallId = (call: AdaptorCall, position: number): string => `call_${call.responseId}_${position}`;

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const parsed = parseJson(body);
  if (!parsed || typeof parsed !== 'object')
    return upstreamFailure(502, `DashScope answered something other than JSON: ${body.slice(0, 200)}`, {
      type: 'dashscope_error',
      retryable: true,
    });
  const error = errorOf(parsed, 200);
  if (error && !(parsed as AliAnswer).output) return error;
  const answer = parsed as AliAnswer;
  const choices = choicesOf(answer);
  if (choices.length === 0) return upstreamFailure(502, 'DashScope answered without output', { type: 'dashscope_error', retryable: true });
  let toolPosition = 0;
  return {
    id: answer.request_id || call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: call.model,
    choices: choices.map((choice, position) => {
      const tools: ChatToolCall[] = (choice.message?.tool_calls ?? []).map((tool) => ({
        id: tool.id || toolCallId(call, toolPosition++),
        type: 'function',
        function: { name: tool.function?.name ?? '', arguments: tool.function?.arguments || '{}' },
      }));
      const text = contentText(choice.message?.content);
      const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: tools.length > 0 && !text ? null : text };
      if (tools.length > 0) message.tool_calls = tools;
      if (choice.message?.reasoning_content) message.reasoning_content = choice.message.reasoning_content;
      return {
        index: typeof choice.index === 'number' ? choice.index : position,
        message,
        finish_reason: finishOf(choice.finish_reason) ?? (tools.length > 0 ? 'tool_calls' : 'stop'),
      };
    }),
    usage: openAiUsage(usageOf(answer) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 }),
  };
}

export function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const parsed = parseJson(body);
  if (!parsed || typeof parsed !== 'object')
    return upstreamFailure(502, `DashScope answered something other than JSON: ${body.slice(0, 200)}`, {
      type: 'dashscope_error',
      retryable: true,
    });
  const answer = parsed as {
    output?: { embeddings?: Array<{ text_index?: number; embedding?: number[] }> };
    usage?: { total_tokens?: number; input_tokens?: number };
  };
  const error = errorOf(parsed, 200);
  if (error && !answer.output) return error;
  const data = embeddingsInOrder(
    (answer.output?.embeddings ?? []).map((item, position) => ({
      index: typeof item.text_index === 'number' ? item.text_index : position,
      embedding: item.embedding ?? [],
    })),
  );
  const tokens = count(answer.usage?.total_tokens) || count(answer.usage?.input_tokens);
  return { object: 'list', data, model: call.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
