// Reading Zhipu's JSON, which arrives untyped, and its whole answers: v4's
// OpenAI shape and v3's `{code, msg, success, data}` envelope.
import type { AdaptorCall, ChatResponse, ChatToolCall, FinishReason, UpstreamFailure, Usage } from '../../types';
import { count, isObject, openAiUsage, parseJson, upstreamFailure } from '../../shared';

export type Json = Record<string, unknown>;
/** A JSON value as text: a string as it is, a number printed, anything else ''. */
export function text(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' ? String(value) : '';
}

// ---- v4 (OpenAI-shaped) answers ----

export function finishReason(value: unknown): FinishReason | null | 'error' {
  switch (value) {
    case null:
    case undefined:
    case '':
      return null;
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
    case 'function_call':
      return value;
    case 'sensitive':
      return 'content_filter';
    case 'model_context_window_exceeded':
      return 'length';
    case 'network_error':
      return 'error';
    default:
      return 'stop';
  }
}

export function usageOf(value: unknown): Usage | undefined {
  if (!isObject(value)) return undefined;
  const details = isObject(value.prompt_tokens_details) ? value.prompt_tokens_details : {};
  const completionDetails = isObject(value.completion_tokens_details) ? value.completion_tokens_details : {};
  const usage: Usage = {
    promptTokens: count(value.prompt_tokens),
    completionTokens: count(value.completion_tokens),
    cachedPromptTokens: count(details.cached_tokens),
  };
  const reasoning = count(completionDetails.reasoning_tokens);
  if (reasoning) usage.reasoningTokens = reasoning;
  return usage;
}

function toolCalls(value: unknown, call: AdaptorCall, counter: { next: number }): ChatToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((item) => {
    const fn = isObject(item.function) ? item.function : {};
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    return {
      id: text(item.id) || `call_${call.responseId}_${counter.next++}`,
      type: 'function',
      function: { name: text(fn.name), arguments: args },
    };
  });
}

export function decodeV4(body: Json, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const usage = usageOf(body.usage) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
  const counter = { next: 0 };
  const choices: ChatResponse['choices'] = [];
  const list = Array.isArray(body.choices) ? body.choices.filter(isObject) : [];
  for (const [position, choice] of list.entries()) {
    const reason = finishReason(choice.finish_reason);
    if (reason === 'error')
      return upstreamFailure(502, 'Zhipu reported a network error while generating', { type: 'zhipu_error', code: 'network_error' });
    const message = isObject(choice.message) ? choice.message : {};
    const calls = toolCalls(message.tool_calls, call, counter);
    const out: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: calls.length ? null : '' };
    if (typeof message.content === 'string') out.content = message.content;
    if (calls.length) out.tool_calls = calls;
    if (typeof message.reasoning_content === 'string' && message.reasoning_content) out.reasoning_content = message.reasoning_content;
    choices.push({ index: position, message: out, finish_reason: reason ?? (calls.length ? 'tool_calls' : 'stop') });
  }
  if (choices.length === 0) return upstreamFailure(502, 'Zhipu answered without choices', { type: 'zhipu_error' });
  return {
    id: text(body.id) || text(body.request_id) || call.responseId,
    object: 'chat.completion',
    created: count(body.created) || call.now,
    model: text(body.model) || call.model,
    choices,
    usage: openAiUsage(usage),
  };
}

// ---- v3 answers ----

/**
 * v3 returns the answer JSON-quoted (`"\"Hello\\nworld\""`): undo that when,
 * and only when, the whole content is one quoted JSON string.
 */
export function unquoteV3(content: string): string {
  if (content.length >= 2 && content.startsWith('"') && content.endsWith('"')) {
    const parsed = parseJson(content);
    if (typeof parsed === 'string') return parsed;
  }
  return content;
}

export function decodeV3(body: Json, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const data = isObject(body.data) ? body.data : {};
  const list = Array.isArray(data.choices) ? data.choices.filter(isObject) : [];
  if (list.length === 0)
    return upstreamFailure(502, text(body.msg) || 'Zhipu answered without choices', { type: 'zhipu_error', code: text(body.code) || null });
  const usage = usageOf(data.usage) ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
  return {
    id: text(data.task_id) || text(data.request_id) || call.responseId,
    object: 'chat.completion',
    created: call.now,
    model: call.model,
    choices: list.map((choice, index) => ({
      index,
      message: { role: 'assistant', content: unquoteV3(text(choice.content)) },
      finish_reason: 'stop',
    })),
    usage: openAiUsage(usage),
  };
}
