// iFlytek Spark (讯飞星火) over its WebSocket chat API: one signed GET upgrade,
// one JSON frame out, answer frames back until `header.status` is 2.
// https://www.xfyun.cn/doc/spark/Web.html (request, frames, error codes)
// Signing ("通用URL鉴权"): HMAC-SHA256 with the APISecret over
// `host: <host>\ndate: <RFC 1123 date>\nGET <path> HTTP/1.1`, carried in the
// query as base64 `authorization`, with `date` and `host`.
//
// Versions (channel `other`, or the client's `api-version` query), their URL
// paths and `parameter.chat.domain`, per the Web document:
//   v1.1      /v1.1/chat       lite          Spark Lite (the domain was `general` before 2024)
//   v2.1      /v2.1/chat       generalv2     Spark V2.0, retired upstream, kept for old channels
//   v3.1      /v3.1/chat       generalv3     Spark Pro
//   v3.5      /v3.5/chat       generalv3.5   Spark Max
//   v4.0      /v4.0/chat       4.0Ultra      Spark 4.0 Ultra
//   pro-128k  /chat/pro-128k   pro-128k      Spark Pro-128K
//   max-32k   /chat/max-32k    max-32k       Spark Max-32K
// Product names and domains are accepted for the version too (`max`,
// `generalv3.5`, `spark-max`...); with neither set, the model name decides.
//
// The frame needs the APPID and the domain: encodeChat reads them from
// `call.channel`, which the relay sets.
import type { ChatChunk, UpstreamAdaptor } from '../../types';
import { assembleChatResponse, upstreamFailure } from '../../shared';
import { classify } from './errors';
import { encodeFrame, parseKey, baseUrl, signSparkUrl, sparkVersion } from './request';
import { SparkStreamDecoder } from './stream';

export { SPARK_VERSIONS, signSparkUrl, sparkVersion, type SparkVersion } from './request';

export const xunfeiAdaptor: UpstreamAdaptor = {
  protocol: 'xunfei',
  docs: 'https://www.xfyun.cn/doc/spark/Web.html',
  operations: new Set(['chat']),
  transport: 'websocket',

  target(channel, call) {
    const key = parseKey(channel.key);
    if (!key)
      return upstreamFailure(401, 'invalid Spark key: expected APPID|APISecret|APIKey', {
        code: 'invalid_auth',
        type: 'authentication_error',
        deadKey: true,
      });
    const url = signSparkUrl(`${baseUrl(channel)}${sparkVersion(channel, call).path}`, key.apiKey, key.apiSecret, call.now);
    return { url, method: 'GET', headers: {} };
  },

  encodeChat: encodeFrame,

  /** A whole answer is the frames of one call joined by newlines (the relay collects the stream). */
  decodeChat(body, call) {
    const decoder = new SparkStreamDecoder(call);
    const chunks: ChatChunk[] = [];
    for (const frame of body.split('\n')) {
      if (!frame.trim()) continue;
      chunks.push(...decoder.push(frame));
      const failure = decoder.failure();
      if (failure) return failure;
    }
    if (!decoder.done()) return upstreamFailure(502, 'Spark closed the answer before its last frame', { type: 'spark_error' });
    return assembleChatResponse(chunks, call, decoder.usage() ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 });
  },

  decodeChatStream(call) {
    return new SparkStreamDecoder(call);
  },

  failure: classify,
};
