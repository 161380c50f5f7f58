// Chat answers written back as Gemini's (the translated path): a whole
// GenerateContentResponse (`encodeResponse`), the event stream
// (`GenerateContentStreamEncoder`), errors in Google's shape, and the relay's
// usage as Google reports it. Pure: no I/O. The codec is ./geminiNative.ts.
import type { InboundError } from './types';
import { parseJson } from '../shared';
import type { ChatChunk, ChatChunkToolCall, ChatResponse, FinishReason, Usage } from '../types';
import type { GeminiPart, GeminiResponse, GeminiUsageMetadata } from '../upstream/gemini';

// ---- errors ----

/** Google's canonical status name for an HTTP status (https://ai.google.dev/gemini-api/docs/troubleshooting). */
export function googleStatus(status: number | undefined): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status !== undefined && status >= 400 && status < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL';
  }
}

export const googleErrorBody = (error: InboundError & { status?: number }) => {
  const status = error.status ?? 500;
  return JSON.stringify({ error: { code: status, message: error.message, status: googleStatus(status) } });
};

// ---- answers written back (the translated path) ----

function geminiFinishReason(finish: FinishReason | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      // Gemini ends an answer that calls functions with STOP too
      return 'STOP';
  }
}

/** The relay's usage as Google reports it: thoughts apart from the candidates' tokens. */
export function geminiUsageMetadataOf(usage: Usage): GeminiUsageMetadata {
  const thoughts = usage.reasoningTokens ?? 0;
  const metadata: GeminiUsageMetadata = {
    promptTokenCount: usage.promptTokens,
    candidatesTokenCount: Math.max(0, usage.completionTokens - thoughts),
    totalTokenCount: usage.promptTokens + usage.completionTokens,
  };
  if (usage.cachedPromptTokens > 0) metadata.cachedContentTokenCount = usage.cachedPromptTokens;
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  return metadata;
}

function argsOf(text: string): Record<string, unknown> {
  const parsed = parseJson(text || '{}');
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

const functionCallPart = (call: { id?: string; name: string; arguments: string }): GeminiPart => ({
  functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: argsOf(call.arguments) },
});

/** A whole chat answer as a GenerateContentResponse (one candidate per choice). */
export function encodeResponse(chat: ChatResponse, usage: Usage, model: string): string {
  const candidates = chat.choices.map((choice) => {
    const parts: GeminiPart[] = [];
    if (choice.message.reasoning_content) parts.push({ text: choice.message.reasoning_content, thought: true });
    if (choice.message.content) parts.push({ text: choice.message.content });
    for (const call of choice.message.tool_calls ?? [])
      parts.push(functionCallPart({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
    if (parts.length === 0) parts.push({ text: '' });
    return { content: { role: 'model', parts }, finishReason: geminiFinishReason(choice.finish_reason), index: choice.index };
  });
  const answer: GeminiResponse & { usageMetadata: GeminiUsageMetadata } = {
    candidates,
    usageMetadata: geminiUsageMetadataOf(usage),
    modelVersion: model || chat.model,
    responseId: chat.id,
  };
  return JSON.stringify(answer);
}

const sseEvent = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/**
 * Writes chat chunks as Gemini's event stream: an event per chunk with text,
 * function calls whole (chat streams their arguments in pieces; Gemini sends a
 * call in one part) and the finish reasons and usage in the closing event.
 */
export class GenerateContentStreamEncoder {
  private id: string | undefined;
  /** Per candidate, its function calls as they build up, by their chat index. */
  private readonly calls = new Map<number, Map<number, { id?: string; name: string; arguments: string }>>();
  private readonly finishes = new Map<number, FinishReason>();
  private readonly seen = new Set<number>();

  constructor(private readonly model: string) {}

  private event(candidates: unknown[], usage: Usage | undefined, fallbackId: string): string {
    this.id ??= fallbackId;
    return sseEvent({
      candidates,
      ...(usage ? { usageMetadata: geminiUsageMetadataOf(usage) } : {}),
      modelVersion: this.model,
      responseId: this.id,
    });
  }

  /** Adds a piece of a candidate's function call to the call as built so far (sent whole at the end). */
  private gather(candidate: number, call: ChatChunkToolCall): void {
    let calls = this.calls.get(candidate);
    if (!calls) this.calls.set(candidate, (calls = new Map<number, { id?: string; name: string; arguments: string }>()));
    const building = calls.get(call.index);
    if (!building) {
      calls.set(call.index, { id: call.id, name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' });
      return;
    }
    if (call.id) building.id = call.id;
    if (call.function?.name) building.name += call.function.name;
    if (call.function?.arguments) building.arguments += call.function.arguments;
  }

  /** The events for these chunks ('' when they carry nothing to send). */
  chunks(chunks: readonly ChatChunk[], usage: Usage | undefined, fallbackId: string): string {
    let out = '';
    for (const chunk of chunks) {
      this.id ??= chunk.id || fallbackId;
      const candidates: unknown[] = [];
      for (const choice of chunk.choices) {
        const { delta } = choice;
        this.seen.add(choice.index);
        const parts: GeminiPart[] = [];
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '')
          parts.push({ text: delta.reasoning_content, thought: true });
        if (typeof delta.content === 'string' && delta.content !== '') parts.push({ text: delta.content });
        for (const call of delta.tool_calls ?? []) this.gather(choice.index, call);
        if (choice.finish_reason) this.finishes.set(choice.index, choice.finish_reason);
        if (parts.length > 0) candidates.push({ content: { role: 'model', parts }, index: choice.index });
      }
      if (candidates.length > 0) out += this.event(candidates, usage, fallbackId);
    }
    return out;
  }

  /** The closing event of a complete answer: each candidate's function calls and finish reason, and the usage. */
  end(usage: Usage, fallbackId: string): string {
    const indexes = [...new Set([0, ...this.seen])].sort((a, b) => a - b);
    const candidates = indexes.map((index) => {
      const calls = [...(this.calls.get(index)?.entries() ?? [])].sort(([a], [b]) => a - b).map(([, call]) => functionCallPart(call));
      // Google's last event carries a part too: an empty text when nothing is left to say
      return {
        content: { role: 'model', parts: calls.length > 0 ? calls : [{ text: '' }] },
        finishReason: geminiFinishReason(this.finishes.get(index)),
        index,
      };
    });
    return this.event(candidates, usage, fallbackId);
  }

  /** An error mid-stream, as Google sends one. */
  error(error: InboundError & { status?: number }): string {
    return `data: ${googleErrorBody(error)}\r\n\r\n`;
  }
}
