// Baidu's whole answers (chat and embeddings) decoded into OpenAI's.
import type { AdaptorCall, ChatResponse, ChatToolCall, EmbeddingResponse, FinishReason, UpstreamFailure, Usage } from '../../types';
import { count, embeddingsInOrder, openAiUsage, parseJson, upstreamFailure } from '../../shared';
import { bodyError } from './errors';

// ---- answers ----

export interface BaiduAnswer {
  id?: string;
  created?: number;
  result?: string;
  is_end?: boolean;
  is_truncated?: boolean;
  need_clear_history?: boolean;
  finish_reason?: string;
  function_call?: { name?: string; arguments?: string; thoughts?: string };
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

export function finishOf(answer: BaiduAnswer): FinishReason {
  if (answer.function_call?.name) return 'tool_calls';
  switch (answer.finish_reason) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'function_call':
      return 'tool_calls';
    default:
      // need_clear_history: Baidu judged the input unsafe and answered a canned reply
      if (answer.need_clear_history) return 'content_filter';
      return answer.is_truncated ? 'length' : 'stop';
  }
}

export function usageOf(answer: BaiduAnswer): Usage | undefined {
  if (!answer.usage) return undefined;
  return {
    promptTokens: count(answer.usage.prompt_tokens),
    completionTokens: count(answer.usage.completion_tokens),
    cachedPromptTokens: 0,
  };
}

export const toolCallOf = (answer: BaiduAnswer, call: AdaptorCall): ChatToolCall | undefined =>
  answer.function_call?.name
    ? {
        id: `call_${call.responseId}_0`,
        type: 'function',
        function: { name: answer.function_call.name, arguments: answer.function_call.arguments || '{}' },
      }
    : undefined;

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseJson(body);
  if (!answer || typeof answer !== 'object')
    return upstreamFailure(502, `Baidu answered something other than JSON: ${body.slice(0, 200)}`, {
      type: 'baidu_error',
      retryable: true,
    });
  const error = bodyError(answer, 200);
  if (error) return error;
  const baidu = answer as BaiduAnswer;
  const toolCall = toolCallOf(baidu, call);
  const message: ChatResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: toolCall && !baidu.result ? null : (baidu.result ?? ''),
  };
  if (toolCall) message.tool_calls = [toolCall];
  return {
    id: baidu.id || call.responseId,
    object: 'chat.completion',
    created: count(baidu.created) || call.now,
    model: call.model,
    choices: [{ index: 0, message, finish_reason: finishOf(baidu) }],
    usage: openAiUsage(usageOf(baidu) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 }),
  };
}

export function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const answer = parseJson(body) as
    { data?: Array<{ index?: number; embedding?: number[] }>; usage?: { prompt_tokens?: number; total_tokens?: number } } | undefined;
  if (!answer || typeof answer !== 'object')
    return upstreamFailure(502, `Baidu answered something other than JSON: ${body.slice(0, 200)}`, {
      type: 'baidu_error',
      retryable: true,
    });
  const error = bodyError(answer, 200);
  if (error) return error;
  const data = embeddingsInOrder(
    (answer.data ?? []).map((item, position) => ({
      index: typeof item.index === 'number' ? item.index : position,
      embedding: item.embedding ?? [],
    })),
  );
  const promptTokens = count(answer.usage?.prompt_tokens);
  return {
    object: 'list',
    data,
    model: call.model,
    usage: { prompt_tokens: promptTokens, total_tokens: count(answer.usage?.total_tokens) || promptTokens },
  };
}
