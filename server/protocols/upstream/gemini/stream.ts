// Gemini's SSE stream (streamGenerateContent?alt=sse), decoded into chat
// chunks as it comes.
import { SseParser, count, parseJson } from '../../shared';
import type {
  AdaptorCall,
  ChatChunk,
  ChatChunkChoice,
  ChatChunkToolCall,
  ChatStreamDecoder,
  FinishReason,
  UpstreamFailure,
} from '../../types';
import { failure } from './errors';
import {
  decodeParts,
  finishReason,
  toolCallOf,
  usageOf,
  type DecodedParts,
  type GeminiResponse,
  type GeminiUsageMetadata,
  type SignedToolCall,
} from './json';

// ---- stream decoding ----

/** A chat tool-call piece that may carry Google's thought signature. */
type SignedChunkToolCall = ChatChunkToolCall & { extra_content?: SignedToolCall['extra_content'] };

/** A candidate's function calls as whole chat tool-call pieces, numbered on from `first`; `newId` names each call Google gave no id. */
function chunkToolCalls(calls: DecodedParts['calls'], first: number, newId: () => string): SignedChunkToolCall[] {
  return calls.map((toolCall, offset) => {
    const { id: toolId, function: fn, extra_content } = toolCallOf(toolCall, newId());
    const entry: SignedChunkToolCall = { index: first + offset, id: toolId, type: 'function', function: fn };
    if (extra_content) entry.extra_content = extra_content;
    return entry;
  });
}

export function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const parser = new SseParser();
  let id: string | undefined;
  let model = call.model;
  let modelSeen = false;
  let toolNumber = 0;
  let lastUsage: GeminiUsageMetadata | undefined;
  let failed: UpstreamFailure | undefined;
  let finishedAll = false;
  const started = new Set<number>();
  const finished = new Set<number>();
  const calledTools = new Set<number>();
  const toolCounts = new Map<number, number>();

  const chunk = (choice: ChatChunkChoice): ChatChunk => ({
    id: id ?? call.responseId,
    object: 'chat.completion.chunk',
    created: call.now,
    model,
    choices: [choice],
  });

  const onEvent = (data: string): ChatChunk[] => {
    if (failed || data.trim() === '' || data.trim() === '[DONE]') return [];
    const event = parseJson(data) as GeminiResponse | undefined;
    if (!event || typeof event !== 'object') return [];
    if (event.error) {
      failed = failure(count(event.error.code) || 500, data);
      return [];
    }
    // one id and model for the whole stream: the first the vendor gives
    if (id === undefined) id = event.responseId || call.responseId;
    if (!modelSeen && event.modelVersion) {
      model = event.modelVersion;
      modelSeen = true;
    }
    if (event.usageMetadata) lastUsage = event.usageMetadata;
    const chunks: ChatChunk[] = [];
    const candidates = event.candidates ?? [];
    if (candidates.length === 0 && event.promptFeedback?.blockReason && started.size === 0) {
      // a blocked prompt: answered as filtered (see the top of index.ts)
      started.add(0);
      finished.add(0);
      chunks.push(chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }));
    }
    candidates.forEach((candidate, position) => {
      const index = candidate.index ?? position;
      if (finished.has(index)) return;
      const parts = decodeParts(candidate.content?.parts);
      const delta: ChatChunkChoice['delta'] = {};
      if (!started.has(index)) delta.role = 'assistant';
      if (parts.hasText) delta.content = parts.text;
      if (parts.reasoning) delta.reasoning_content = parts.reasoning;
      if (parts.calls.length > 0) {
        calledTools.add(index);
        const first = toolCounts.get(index) ?? 0;
        delta.tool_calls = chunkToolCalls(parts.calls, first, () => `call_${id}_${toolNumber++}`);
        toolCounts.set(index, first + parts.calls.length);
      }
      let reason: FinishReason | null = null;
      if (candidate.finishReason) {
        reason = finishReason(candidate.finishReason, calledTools.has(index));
        finished.add(index);
      }
      const hasDelta = delta.content !== undefined || delta.reasoning_content !== undefined || delta.tool_calls !== undefined;
      if (!hasDelta && reason === null) return;
      started.add(index);
      chunks.push(chunk({ index, delta, finish_reason: reason }));
    });
    finishedAll = started.size > 0 && [...started].every((index) => finished.has(index));
    return chunks;
  };

  return {
    push: (data) => parser.push(data).flatMap((event) => onEvent(event.data)),
    end: () => parser.end().flatMap((event) => onEvent(event.data)),
    // Google sends partial usage on every event and the full figures on the last: only a finished stream has them
    usage: () => (finishedAll && lastUsage ? usageOf(lastUsage) : undefined),
    failure: () => failed,
    done: () => finishedAll || failed !== undefined,
  };
}
