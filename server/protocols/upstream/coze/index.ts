// Coze bots, through the chat API v3: a bot answers as a chat model named
// `bot-<bot_id>` (one-api's naming), the key is a personal access token.
// API reference: https://www.coze.com/docs/developer_guides/chat_v3
// (streamed events: .../chat_v3#streaming-response, error codes: .../coze_error_codes)
//
// Every call streams: a non-streamed v3 chat is only created and would have
// to be polled (/v3/chat/retrieve, then /v3/chat/message/list), which costs
// two more round trips and a wait; the stream read to its end carries the
// same answer and the usage. Usage is Coze's own count (`input_count`,
// `output_count` of the completed chat), which covers the bot's persona,
// knowledge and plugin calls, so the bill is what Coze counted.
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat } from './json';
import { encodeChat, target } from './request';
import { decodeChatStream } from './stream';

export { botIdOf } from './request';

export const cozeAdaptor: UpstreamAdaptor = {
  protocol: 'coze',
  docs: 'https://www.coze.com/docs/developer_guides/chat_v3',
  operations: new Set(['chat']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  failure,
};
