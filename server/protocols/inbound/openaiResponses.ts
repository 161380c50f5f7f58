// The OpenAI Responses client side of the relay (`POST /v1/responses`, what
// the openai SDKs' `responses.create`, the Agents SDK and Codex call). Pure:
// no I/O. Reference: https://platform.openai.com/docs/api-reference/responses
// (the openai SDK's resources/responses/responses.d.ts is the exact shape of
// every object and event).
//
// The gateway stores nothing, so a request that leans on stored state
// (`previous_response_id`, `conversation`) is refused before anything is
// held; `store` itself is taken and ignored. For a channel whose type serves
// Responses itself (OpenAI's own, the `responses` row field) the client's bytes
// go on with only the model changed, and the answer's usage is read as it
// passes (the JSON `usage`; the stream's response.completed). For any other
// channel the request is decoded into the relay's chat form (`chatRequest`:
// items to messages, function tools and calls to chat tools and tool_calls,
// function_call_output to tool messages) and the decoded answer written back
// as a Response (`encodeResponse`) or as Responses' event stream
// (`encodeStream`: response.created, response.in_progress, per output item
// output_item.added, its content part or arguments deltas and dones,
// output_item.done, then response.completed, or response.incomplete when the
// output limit cut the answer), every event numbered by `sequence_number`.
//
// Usage: Responses' `input_tokens` includes the cached ones and
// `output_tokens` the reasoning ones, as chat's prompt and completion do.
//
// The request's chat form is in ./openaiResponsesRequest.ts, the answers
// written back in ./openaiResponsesAnswer.ts; here are the codec, the
// prompt's count and the passthrough stream watcher.
import { encodeResponse, ResponsesStreamEncoder, type ResponsesUsage } from './openaiResponsesAnswer';
import { chatRequestOf, itemText, uncarriedTools, type Item } from './openaiResponsesRequest';
import { reportedAnswerUsage } from './jsonField';
import { openAiErrorBody } from './openaiChat';
import { promptBound } from './promptBound';
import { countPartTokens, countTextTokens, type CountOptions } from './tokenCount';
import { PassingUsageWatcher, positiveWhole, selfReportingBodyRules } from './passingWatcher';
import type { InboundCodec, TextMode } from './types';
import { parseJson, textOf } from '../shared';
import type { Usage } from '../types';

/** Responses' counts in the relay's terms. */
export function usageOfResponses(usage: ResponsesUsage): Usage {
  return {
    promptTokens: positiveWhole(usage.input_tokens),
    completionTokens: positiveWhole(usage.output_tokens),
    cachedPromptTokens: positiveWhole(usage.input_tokens_details?.cached_tokens),
  };
}

// ---- counting ----

/** An input item's share of the count: its text goes to `texts` (counted with the rest), its media parts' tokens are returned. */
function countItem(item: Item, texts: string[], model: string, options: CountOptions): number {
  if (item.type === 'function_call') texts.push(textOf(item.name), typeof item.arguments === 'string' ? item.arguments : '');
  else if (item.type === 'function_call_output') texts.push(itemText(item.output));
  else {
    texts.push(itemText(item.content));
    let media = 0;
    if (Array.isArray(item.content)) {
      for (const part of item.content as Item[])
        if (part?.type === 'input_image' || part?.type === 'input_file' || part?.type === 'input_audio')
          media += countPartTokens(part, model, options);
    }
    return media;
  }
  return 0;
}

/** The prompt's tokens: instructions, every item's text, calls and outputs, tool definitions; 3 per item and 3 to prime the reply. */
export function countResponsesPromptTokens(body: Record<string, unknown>, model: string, options: CountOptions = {}): number {
  const texts: string[] = [typeof body.instructions === 'string' ? body.instructions : ''];
  let total = 3;
  if (typeof body.input === 'string') {
    total += 3;
    texts.push(body.input);
  }
  for (const item of Array.isArray(body.input) ? (body.input as Item[]) : []) {
    if (!item || typeof item !== 'object') continue;
    total += 3;
    total += countItem(item, texts, model, options);
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return total + countTextTokens(texts.join('\n'), model, options);
}

// ---- the passthrough stream watcher ----

/** The events whose response carries the final usage. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** Passes a Responses event stream on as it came; reads its usage (the final response's) and the text streamed. */
export class ResponsesUsageWatcher extends PassingUsageWatcher {
  private usage: Usage | undefined;

  protected readEvent(data: string): void {
    // only the events that bill: the final response and the deltas counted should it never come
    const final = data.includes('"response.completed"') || data.includes('"response.incomplete"') || data.includes('"response.failed"');
    if (!final && !data.includes('_text.delta"') && !data.includes('"response.function_call_arguments.delta"')) return;
    const parsed = parseJson(data) as { type?: string; delta?: unknown; response?: { usage?: ResponsesUsage | null } } | undefined;
    if (!parsed || typeof parsed !== 'object' || typeof parsed.type !== 'string') return;
    if (FINAL_EVENTS.has(parsed.type)) {
      const usage = parsed.response?.usage;
      if (usage && typeof usage === 'object') this.usage = usageOfResponses(usage);
    } else if (typeof parsed.delta === 'string' && parsed.type.endsWith('.delta')) this.text += parsed.delta;
  }

  reportedUsage(): Usage | undefined {
    return this.usage;
  }
}

// ---- the codec ----

const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

/** The generated text of a Response: its messages' text and its calls' arguments. */
function answerText(value: unknown): string {
  const output = (value as { output?: unknown } | undefined)?.output;
  let text = '';
  for (const item of Array.isArray(output) ? (output as Item[]) : []) {
    if (item?.type === 'message') text += itemText(item.content);
    else if (item?.type === 'function_call' && typeof item.arguments === 'string') text += item.arguments;
  }
  return text;
}

/** Fields that ask OpenAI for state it stored: the gateway stores none, so no channel could answer them. */
const STORED_STATE = ['previous_response_id', 'conversation'] as const;

export const openaiResponses = {
  protocol: 'openai-responses',
  passthroughOperation: 'responses',
  contentType: 'application/json; charset=utf-8',
  model: (_mode: TextMode, body: Record<string, unknown>) => modelOf(body),
  check(_mode, body) {
    for (const field of STORED_STATE) {
      if (body[field] !== undefined && body[field] !== null) {
        return {
          message: `${field} is not supported: this gateway does not store responses; send the whole conversation in input`,
          code: 'unsupported_parameter',
          param: field,
        };
      }
    }
    return undefined;
  },
  promptTokens: (_mode, body, model, options) =>
    options.bound ? promptBound(body, model, undefined, 1, options.contextWindow) : countResponsesPromptTokens(body, model, options),
  // a Responses stream always ends with its usage
  ...selfReportingBodyRules('max_output_tokens'),
  jsonUsage: (json) => reportedAnswerUsage(json, usageOfResponses),
  answerText,
  // nothing to strip: the gateway never asks a Responses stream for anything on the client's behalf
  watchStream: (_stripUsageEvent: boolean) => new ResponsesUsageWatcher(),
  errorBody: openAiErrorBody,
  chatRequest: chatRequestOf,
  untranslatable: uncarriedTools,
  encodeResponse,
  encodeStream: (model: string, request: Record<string, unknown>) => new ResponsesStreamEncoder(model, request),
} satisfies InboundCodec;
