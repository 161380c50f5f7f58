// Alibaba DashScope (Qwen), the native API: text generation in the messages
// format, streamed with incremental output, and text embeddings.
// API reference: https://help.aliyun.com/zh/model-studio/developer-reference/use-qwen-by-calling-api
// (embeddings: https://help.aliyun.com/zh/model-studio/developer-reference/text-embedding-synchronous-api,
// error codes: https://help.aliyun.com/zh/model-studio/developer-reference/error-code)
//
// Vision models (qwen-vl-*, qvq-*) take the same messages with content as a
// list of {image}/{text} items at the multimodal-generation path; the model
// name decides, since encodeChat sees the model but not the channel. For the
// same reason the OpenAI-compatible mode (/compatible-mode/v1) is not chosen
// from the channel's `other` here: a channel that wants it can be an
// OpenAI-type channel with that base URL.
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat, decodeEmbeddings } from './json';
import { encodeChat, encodeEmbeddings, target } from './request';
import { decodeChatStream } from './stream';

export { isMultimodalModel } from './request';

export const aliAdaptor: UpstreamAdaptor = {
  protocol: 'ali',
  docs: 'https://help.aliyun.com/zh/model-studio/developer-reference/use-qwen-by-calling-api',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  encodeEmbeddings,
  decodeEmbeddings,
  failure,
};
