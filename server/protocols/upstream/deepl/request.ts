// Where a DeepL translation goes and what it carries.
import type { AdaptorCall, ChannelConfig, ChatRequest, HttpTarget, UpstreamFailure } from '../../types';
import { contentText, trimmedBaseUrl, upstreamFailure } from '../../shared';

const PRO_BASE_URL = 'https://api.deepl.com';
const FREE_BASE_URL = 'https://api-free.deepl.com';

/** The target language a model names: `deepl-zh` → `ZH`, `deepl-en-us` → `EN-US`; undefined for another name. */
export function targetLanguageOf(model: string): string | undefined {
  const match = /^deepl-([a-z]{2}(?:-[a-z]{2,4})?)$/i.exec(model);
  return match ? match[1].toUpperCase() : undefined;
}

/** api-free.deepl.com for a free account's key (it ends in `:fx`), api.deepl.com for any other. */
export const defaultBaseUrlOf = (key: string): string => (key.trim().endsWith(':fx') ? FREE_BASE_URL : PRO_BASE_URL);

export function target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  if (!targetLanguageOf(call.model)) {
    return upstreamFailure(400, `a DeepL model names the target language, as deepl-zh or deepl-en-us, not "${call.model}"`, {
      type: 'invalid_request_error',
      retryable: false,
    });
  }
  return {
    url: `${trimmedBaseUrl(channel.baseUrl, defaultBaseUrlOf(channel.key))}/v2/translate`,
    method: 'POST',
    headers: { Authorization: `DeepL-Auth-Key ${channel.key.trim()}`, 'Content-Type': 'application/json' },
  };
}

/** The last user message is the text; the rest of the conversation has no place in a translation. */
export function encodeChat(request: ChatRequest, call: AdaptorCall): string {
  if (request.tools && request.tools.length > 0) throw new Error('DeepL translates text: function tools cannot be offered');
  if (request.messages.some((message) => message.role === 'tool' || message.role === 'function'))
    throw new Error('DeepL translates text: tool results cannot be sent');
  const last = [...request.messages].reverse().find((message) => message.role === 'user');
  const text = last ? contentText(last.content) : '';
  if (!text.trim()) throw new Error('DeepL translates the last user message, and there is no text in it');
  return JSON.stringify({ text: [text], target_lang: targetLanguageOf(call.model), show_billed_characters: true });
}
