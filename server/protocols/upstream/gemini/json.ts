// Google's shapes, and a whole answer (chat or embeddings) decoded into
// OpenAI's: candidates into choices, function calls into signed tool calls,
// thoughts into reasoning_content, usageMetadata into usage.
import { count, openAiUsage, parseJson, upstreamFailure } from '../../shared';
import type { AdaptorCall, ChatResponse, ChatToolCall, EmbeddingResponse, FinishReason, UpstreamFailure, Usage } from '../../types';
import { failure, parseGoogle } from './errors';

// ---- Gemini's wire shapes (lenient: only what we read or write) ----

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: GoogleError;
}

export interface GoogleError {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; reason?: string }>;
}

/** A tool call as we hand it out: OpenAI's, plus the Gemini 3 thought signature when there is one. */
export type SignedToolCall = ChatToolCall & { extra_content?: { google?: { thought_signature?: string } } };

// ---- answer decoding ----

export function finishReason(reason: string | undefined, calledTools: boolean): FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    default:
      // STOP, and the reasons with no OpenAI word (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL...)
      return calledTools ? 'tool_calls' : 'stop';
  }
}

/** Usage as Google reports it: thoughts are completion tokens; tool-use prompt tokens are billed as input. */
export function usageOf(metadata: GeminiUsageMetadata | undefined): Usage {
  const thoughts = count(metadata?.thoughtsTokenCount);
  const usage: Usage = {
    promptTokens: count(metadata?.promptTokenCount) + count(metadata?.toolUsePromptTokenCount),
    completionTokens: count(metadata?.candidatesTokenCount) + thoughts,
    cachedPromptTokens: count(metadata?.cachedContentTokenCount),
  };
  if (thoughts > 0) usage.reasoningTokens = thoughts;
  return usage;
}

export interface DecodedParts {
  text: string;
  hasText: boolean;
  reasoning: string;
  calls: Array<{ id?: string; name: string; arguments: string; signature?: string }>;
}

export function decodeParts(parts: GeminiPart[] | undefined): DecodedParts {
  const decoded: DecodedParts = { text: '', hasText: false, reasoning: '', calls: [] };
  for (const part of parts ?? []) {
    if (part.functionCall?.name) {
      decoded.calls.push({
        id: part.functionCall.id,
        name: part.functionCall.name,
        arguments: JSON.stringify(part.functionCall.args ?? {}),
        signature: part.thoughtSignature,
      });
    } else if (typeof part.text === 'string') {
      if (part.thought) decoded.reasoning += part.text;
      else {
        decoded.text += part.text;
        decoded.hasText = true;
      }
    }
  }
  return decoded;
}

export function toolCallOf(call: DecodedParts['calls'][number], id: string): SignedToolCall {
  const toolCall: SignedToolCall = { id: call.id || id, type: 'function', function: { name: call.name, arguments: call.arguments } };
  if (call.signature) toolCall.extra_content = { google: { thought_signature: call.signature } };
  return toolCall;
}

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const answer = parseGoogle(body);
  if (!answer) return upstreamFailure(502, `Gemini answered something that is not JSON: ${body.slice(0, 200)}`, { retryable: true });
  if (answer.error) return failure(count(answer.error.code) || 500, body);
  const id = answer.responseId || call.responseId;
  const candidates = [...(answer.candidates ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  let toolNumber = 0;
  const choices: ChatResponse['choices'] = candidates.map((candidate, position) => {
    const parts = decodeParts(candidate.content?.parts);
    const toolCalls = parts.calls.map((toolCall) => toolCallOf(toolCall, `call_${id}_${toolNumber++}`));
    const message: ChatResponse['choices'][number]['message'] = {
      role: 'assistant',
      content: parts.hasText || toolCalls.length === 0 ? parts.text : null,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (parts.reasoning) message.reasoning_content = parts.reasoning;
    return { index: position, message, finish_reason: finishReason(candidate.finishReason, toolCalls.length > 0) };
  });
  if (choices.length === 0) {
    if (!answer.promptFeedback?.blockReason) {
      return upstreamFailure(502, 'Gemini answered without candidates', { retryable: true });
    }
    // a blocked prompt: answered as filtered (see the top of index.ts)
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
  }
  return {
    id,
    object: 'chat.completion',
    created: call.now,
    model: answer.modelVersion || call.model,
    choices,
    usage: openAiUsage(usageOf(answer.usageMetadata)),
  };
}

// ---- embeddings ----

export function decodeEmbeddings(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure {
  const answer = parseJson(body) as
    { embeddings?: Array<{ values?: number[] }>; usageMetadata?: GeminiUsageMetadata; error?: GoogleError } | undefined;
  if (!answer || typeof answer !== 'object')
    return upstreamFailure(502, `Gemini answered something that is not JSON: ${body.slice(0, 200)}`, { retryable: true });
  if (answer.error) return failure(count(answer.error.code) || 500, body);
  if (!Array.isArray(answer.embeddings)) return upstreamFailure(502, 'Gemini answered without embeddings', { retryable: true });
  // Google reports no usage here (0 tells the relay to count the input itself), unless a newer answer carries it
  const prompt = count(answer.usageMetadata?.promptTokenCount);
  return {
    object: 'list',
    data: answer.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: embedding.values ?? [] })),
    model: call.model,
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  };
}
