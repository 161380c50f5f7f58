// DeepL translation as a chat model, as one-api offers it: the model names
// the target language (`deepl-zh`, `deepl-en-us`, `deepl-pt-br`...), the last
// user message is the text, the answer is its translation.
// API reference: https://developers.deepl.com/api-reference/translate
// (errors: https://developers.deepl.com/docs/best-practices/error-handling)
//
// The key is a DeepL auth key, sent as `Authorization: DeepL-Auth-Key <key>`;
// a free account's key ends in `:fx` and is served by api-free.deepl.com,
// any other by api.deepl.com (a channel's base URL overrides both).
//
// Billing: DeepL bills characters, and says how many it billed when asked
// (`show_billed_characters`). Those characters are the prompt tokens, and the
// completion is 0 tokens, so a DeepL model's price is its price per
// character: one-api bills the same way (prompt tokens = the text's length,
// completion 0), though it counted the text's UTF-8 bytes, which bills a
// Chinese or Japanese character three times; DeepL's own count bills it once.
// DeepL answers whole: a streamed call gets the translation as one chunk.
import type { AdaptorCall, ChatStreamDecoder, UpstreamAdaptor } from '../../types';
import { wholeAnswerStream } from '../../shared';
import { failure } from './errors';
import { decodeChat, translationChunks } from './json';
import { encodeChat, target } from './request';

export { targetLanguageOf } from './request';

export const deeplAdaptor: UpstreamAdaptor = {
  protocol: 'deepl',
  docs: 'https://developers.deepl.com/api-reference/translate',
  operations: new Set(['chat']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream: (call: AdaptorCall): ChatStreamDecoder => wholeAnswerStream((body) => translationChunks(body, call)),
  failure,
};
