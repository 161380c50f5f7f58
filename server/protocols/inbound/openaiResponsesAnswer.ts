// Chat answers written back as Responses (the translated path): a whole
// Response (`encodeResponse`), the event stream (`ResponsesStreamEncoder`,
// every event numbered by `sequence_number`), and the relay's usage as
// Responses reports it. Pure: no I/O. The codec is ./openaiResponses.ts.
import { clientToolName, type Item } from './openaiResponsesRequest';
import type { InboundError } from './types';
import type { ChatChunk, ChatChunkToolCall, ChatResponse, FinishReason, Usage } from '../types';

/** Responses' usage object (lenient: only what is read). */
export interface ResponsesUsage {
  input_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null } | null;
  output_tokens?: number | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
  total_tokens?: number | null;
}

/** The relay's usage as Responses reports it. */
export function responsesUsageOf(
  usage: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens' | 'reasoningTokens'>,
): Required<ResponsesUsage> {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens || 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens || 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

// ---- answers written back (the translated path) ----

/** An id in Responses' form (`resp_...`, `msg_...`) from whatever the vendor gave. */
const idOf = (prefix: string, id: string) => (id.startsWith(prefix) ? id : `${prefix}${id.replace(/[^A-Za-z0-9_]/g, '')}`);
/** The common part of a response's and its items' ids (`chatcmpl-abc` → `abc`). */
const idCore = (id: string) => id.replace(/^(resp_|chatcmpl-|chatcmpl_)/, '').replace(/[^A-Za-z0-9_]/g, '');

/** Where a response stands once its answer ended: `length` means the output limit cut it. */
function outcome(finish: FinishReason | null | undefined): {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
} {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const numberOr = (value: unknown, fallback: number | null) => (typeof value === 'number' ? value : fallback);

/** A response as OpenAI writes one, its settings repeated from the request; output and usage still empty. */
function responseShell(id: string, createdAt: number, model: string, request: Record<string, unknown>): Record<string, unknown> {
  const reasoning = (request.reasoning ?? {}) as { effort?: unknown; summary?: unknown };
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: numberOr(request.max_output_tokens, null),
    max_tool_calls: null,
    model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    service_tier: 'default',
    // the gateway stores nothing, whatever the client asked
    store: false,
    temperature: numberOr(request.temperature, 1),
    text: { format: (request.text as { format?: unknown } | undefined)?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_p: numberOr(request.top_p, 1),
    truncation: 'disabled',
    usage: null,
    user: typeof request.user === 'string' ? request.user : null,
    metadata: request.metadata && typeof request.metadata === 'object' ? request.metadata : {},
  };
}

const outputText = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
const reasoningText = (text: string) => ({ type: 'reasoning_text', text });
const messageItem = (id: string, status: string, text: string | undefined) => ({
  id,
  type: 'message',
  status,
  content: text === undefined ? [] : [outputText(text)],
  role: 'assistant',
});
const reasoningItem = (id: string, text: string | undefined) => ({
  id,
  type: 'reasoning',
  summary: [],
  content: text === undefined ? [] : [reasoningText(text)],
});
/** A function call item; a call of a namespace's function names its namespace, as the client declared it. */
const functionCallItem = (id: string, status: string, callId: string, called: { name: string; namespace?: string }, args: string) => ({
  id,
  type: 'function_call',
  status,
  arguments: args,
  call_id: callId,
  name: called.name,
  ...(called.namespace === undefined ? {} : { namespace: called.namespace }),
});

/** A whole chat answer as a Response (its first choice: a Response has one answer). */
export function encodeResponse(chat: ChatResponse, usage: Usage, model: string, request: Record<string, unknown>): string {
  const choice = chat.choices[0];
  const core = idCore(chat.id);
  const { status, incomplete_details } = outcome(choice?.finish_reason);
  const output: Item[] = [];
  if (choice?.message.reasoning_content) output.push(reasoningItem(`rs_${core}`, choice.message.reasoning_content));
  if (choice?.message.content) output.push(messageItem(`msg_${core}`, status, choice.message.content));
  for (const [index, call] of (choice?.message.tool_calls ?? []).entries()) {
    output.push(
      functionCallItem(`fc_${core}_${index}`, 'completed', call.id, clientToolName(request, call.function.name), call.function.arguments),
    );
  }
  return JSON.stringify({
    ...responseShell(idOf('resp_', core), chat.created, model || chat.model, request),
    status,
    incomplete_details,
    output,
    usage: responsesUsageOf(usage),
  });
}

/** The output item being streamed: a text (message or reasoning) or a function call (by its chat index). */
type OpenItem =
  | { kind: 'message' | 'reasoning'; index: number; id: string; text: string }
  | { kind: 'function_call'; index: number; id: string; tool: number; callId: string; name: string; arguments: string };

/** Names of the events of each text kind (what differs between a message's text and reasoning's). */
const TEXT_EVENTS = {
  message: { delta: 'response.output_text.delta', done: 'response.output_text.done', part: outputText },
  reasoning: { delta: 'response.reasoning_text.delta', done: 'response.reasoning_text.done', part: reasoningText },
} as const;

/** Writes chat chunks as Responses' event stream. */
export class ResponsesStreamEncoder {
  private sequence = 0;
  /** The response as response.created announced it, once it has. */
  private shell: Record<string, unknown> | undefined;
  private core = '';
  /** The items closed so far, as output_item.done gave them. */
  private readonly output: Item[] = [];
  private open: OpenItem | undefined;
  private finish: FinishReason | null = null;

  constructor(
    private readonly model: string,
    private readonly request: Record<string, unknown>,
  ) {}

  private event(type: string, fields: Record<string, unknown>): string {
    const data = { type, sequence_number: this.sequence, ...fields };
    this.sequence += 1;
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  /** response.created and response.in_progress, once: the id and time from the first chunk. */
  private start(id: string, createdAt: number): string {
    if (this.shell) return '';
    this.core = idCore(id);
    this.shell = responseShell(idOf('resp_', this.core), createdAt, this.model, this.request);
    return this.event('response.created', { response: this.shell }) + this.event('response.in_progress', { response: this.shell });
  }

  /** Closes the open item: its text's or arguments' done event, its content part's, output_item.done. */
  private close(status: 'completed' | 'incomplete' = 'completed'): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    const at = { item_id: open.id, output_index: open.index };
    let item: Item;
    let out = '';
    if (open.kind === 'function_call') {
      out += this.event('response.function_call_arguments.done', { ...at, arguments: open.arguments });
      item = functionCallItem(open.id, 'completed', open.callId, clientToolName(this.request, open.name), open.arguments);
    } else {
      const names = TEXT_EVENTS[open.kind];
      out += this.event(names.done, { ...at, content_index: 0, text: open.text, ...(open.kind === 'message' ? { logprobs: [] } : {}) });
      out += this.event('response.content_part.done', { ...at, content_index: 0, part: names.part(open.text) });
      item = open.kind === 'message' ? messageItem(open.id, status, open.text) : reasoningItem(open.id, open.text);
    }
    this.output.push(item);
    return out + this.event('response.output_item.done', { output_index: open.index, item });
  }

  /** A message or reasoning item, opened with its empty content part. */
  private openText(kind: 'message' | 'reasoning'): string {
    const closed = this.close();
    const index = this.output.length;
    const id = `${kind === 'message' ? 'msg' : 'rs'}_${this.core}_${index}`;
    this.open = { kind, index, id, text: '' };
    const item = kind === 'message' ? messageItem(id, 'in_progress', undefined) : reasoningItem(id, undefined);
    return (
      closed +
      this.event('response.output_item.added', { output_index: index, item }) +
      this.event('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: TEXT_EVENTS[kind].part('') })
    );
  }

  private text(kind: 'message' | 'reasoning', delta: string): string {
    let out = this.open?.kind === kind ? '' : this.openText(kind);
    const open = this.open as OpenItem & { text: string };
    open.text += delta;
    out += this.event(TEXT_EVENTS[kind].delta, {
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      delta,
      ...(kind === 'message' ? { logprobs: [] } : {}),
    });
    return out;
  }

  /** A function call's piece: its item opened when the call is new, its arguments' fragment as a delta. */
  private toolCall(call: ChatChunkToolCall): string {
    let out = '';
    const open = this.open;
    if (open?.kind !== 'function_call' || open.tool !== call.index) {
      out += this.close();
      const index = this.output.length;
      const item = {
        kind: 'function_call' as const,
        index,
        id: `fc_${this.core}_${index}`,
        tool: call.index,
        callId: call.id ?? `call_${this.core}_${call.index}`,
        name: call.function?.name ?? '',
        arguments: '',
      };
      this.open = item;
      out += this.event('response.output_item.added', {
        output_index: index,
        item: functionCallItem(item.id, 'in_progress', item.callId, clientToolName(this.request, item.name), ''),
      });
    }
    const fragment = call.function?.arguments;
    if (typeof fragment === 'string' && fragment !== '') {
      const current = this.open as Extract<OpenItem, { kind: 'function_call' }>;
      current.arguments += fragment;
      out += this.event('response.function_call_arguments.delta', {
        item_id: current.id,
        output_index: current.index,
        delta: fragment,
      });
    }
    return out;
  }

  /** The events for these chunks ('' when they carry nothing to send). */
  chunks(chunks: readonly ChatChunk[], _usage: Usage | undefined, fallbackId: string): string {
    let out = '';
    for (const chunk of chunks) {
      out += this.start(chunk.id || fallbackId, chunk.created);
      for (const choice of chunk.choices) {
        // a Response has one answer
        if (choice.index !== 0) continue;
        const { delta } = choice;
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '')
          out += this.text('reasoning', delta.reasoning_content);
        if (typeof delta.content === 'string' && delta.content !== '') out += this.text('message', delta.content);
        for (const call of delta.tool_calls ?? []) out += this.toolCall(call);
        if (choice.finish_reason) this.finish = choice.finish_reason;
      }
    }
    return out;
  }

  /** The end of a complete answer: the last item closed, then response.completed (or response.incomplete) with the whole response and usage. */
  end(usage: Usage, fallbackId: string): string {
    const { status, incomplete_details } = outcome(this.finish);
    const out = this.start(fallbackId, 0) + this.close(status);
    const response = { ...this.shell, status, incomplete_details, output: this.output, usage: responsesUsageOf(usage) };
    return out + this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  /** An error mid-stream, as OpenAI sends one: the error event, then response.failed. */
  error(error: InboundError & { status?: number }): string {
    let out = this.event('error', {
      code: error.code === null ? null : String(error.code),
      message: error.message,
      param: error.param ?? null,
    });
    if (this.shell) {
      const code = error.code === 'rate_limit_exceeded' ? error.code : 'server_error';
      out += this.event('response.failed', {
        response: { ...this.shell, status: 'failed', error: { code, message: error.message }, output: this.output },
      });
    }
    return out;
  }
}
