// A DeepL translation decoded: its text and the characters DeepL billed.
import { isUpstreamFailure, type AdaptorCall, type ChatChunk, type ChatResponse, type UpstreamFailure, type Usage } from '../../types';
import { assembleChatResponse, chunkOf, count, isObject, parseJson, upstreamFailure } from '../../shared';
import { errorOf } from './errors';

/** The translation as the one chunk a stream of it is, with the billed characters as prompt tokens. */
export function translationChunks(body: string, call: AdaptorCall): { chunks: ChatChunk[]; usage: Usage } | UpstreamFailure {
  const parsed = parseJson(body);
  const error = errorOf(parsed, 200);
  if (error) return error;
  const translations = isObject(parsed) && Array.isArray(parsed.translations) ? parsed.translations.filter(isObject) : [];
  if (translations.length === 0)
    return upstreamFailure(502, `DeepL answered without a translation: ${body.slice(0, 200)}`, { type: 'deepl_error', retryable: true });
  const text = translations.map((translation) => (typeof translation.text === 'string' ? translation.text : '')).join('');
  // DeepL counts characters as code points; without its count, the text's own
  const billed = translations.reduce((total, translation) => total + count(translation.billed_characters), 0);
  const usage: Usage = { promptTokens: billed || [...text].length, completionTokens: 0, cachedPromptTokens: 0 };
  return { chunks: [chunkOf(call, call.model, [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: 'stop' }])], usage };
}

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const read = translationChunks(body, call);
  return isUpstreamFailure(read) ? read : assembleChatResponse(read.chunks, call, read.usage);
}
