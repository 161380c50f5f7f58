// Zhipu BigModel (智谱, GLM). Two wire protocols behind one channel type:
// - v4 (the default: channel `other` empty or `v4`): OpenAI-shaped at
//   /api/paas/v4/chat/completions and /api/paas/v4/embeddings, the API key as a
//   Bearer token. https://open.bigmodel.cn/dev/api (now at docs.bigmodel.cn)
// - v3 (`other` = `v3`): the older per-model endpoints
//   /api/paas/v3/model-api/<model>/invoke and /sse-invoke, authorised by an
//   HS256 JWT made from the `<id>.<secret>` key, with its own answer envelope
//   `{code, msg, success, data}` and an SSE stream of raw-text `add` events
//   ended by a `finish` event carrying a `meta:` line.
// Error codes: https://docs.bigmodel.cn/cn/api/api-code
//
// The protocol (v4 or v3) is read from `call.channel` (the relay sets it);
// without one, the model name decides, and decoding also recognises either
// protocol by the shape of what came back.
import type { EmbeddingResponse, UpstreamAdaptor, UpstreamFailure } from '../../types';
import { count, embeddingsInOrder, isObject, parseJson, upstreamFailure } from '../../shared';
import { classify, failureIn } from './errors';
import { decodeV3, decodeV4, text } from './json';
import { encodeChat, encodeEmbeddings, target } from './request';
import { ZhipuStreamDecoder } from './stream';

export { channelOf, zhipuJwt } from './request';
export { unquoteV3 } from './json';

export const zhipuAdaptor: UpstreamAdaptor = {
  protocol: 'zhipu',
  docs: 'https://open.bigmodel.cn/dev/api',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',

  target,
  encodeChat,

  decodeChat(body, call) {
    const parsed = parseJson(body);
    if (!isObject(parsed)) return upstreamFailure(502, 'Zhipu answered with something other than JSON', { type: 'zhipu_error' });
    const failure = failureIn(200, parsed);
    if (failure) return failure;
    if ('success' in parsed || isObject(parsed.data)) return decodeV3(parsed, call);
    return decodeV4(parsed, call);
  },

  decodeChatStream(call) {
    return new ZhipuStreamDecoder(call);
  },

  encodeEmbeddings,

  decodeEmbeddings(body, call): EmbeddingResponse | UpstreamFailure {
    const parsed = parseJson(body);
    if (!isObject(parsed)) return upstreamFailure(502, 'Zhipu answered with something other than JSON', { type: 'zhipu_error' });
    const failure = failureIn(200, parsed);
    if (failure) return failure;
    const list = Array.isArray(parsed.data) ? parsed.data.filter(isObject) : [];
    const usage = isObject(parsed.usage) ? parsed.usage : {};
    const prompt = count(usage.prompt_tokens);
    return {
      object: 'list',
      data: embeddingsInOrder(
        list.map((item, position) => ({
          index: Number.isInteger(item.index) ? (item.index as number) : position,
          embedding: Array.isArray(item.embedding) ? (item.embedding as number[]) : [],
        })),
      ),
      model: text(parsed.model) || call.model,
      usage: { prompt_tokens: prompt, total_tokens: count(usage.total_tokens) || prompt },
    };
  },

  failure: classify,
};
