// A whole Coze answer. The relay always asks Coze to stream (a non-streamed
// v3 chat is only created, and must then be polled for its messages), so a
// whole answer is that stream read to its end and folded into one; a bare
// `{code, msg}` body is Coze's refusal.
import type { AdaptorCall, ChatResponse, UpstreamFailure } from '../../types';
import { assembleChatResponse, parseJson, upstreamFailure } from '../../shared';
import { errorOf } from './errors';
import { decodeChatStream } from './stream';

export function decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure {
  const refusal = body.trimStart().startsWith('{') ? errorOf(parseJson(body), 200) : undefined;
  if (refusal) return refusal;
  const decoder = decodeChatStream(call);
  const chunks = [...decoder.push(body), ...decoder.end()];
  const failed = decoder.failure();
  if (failed) return failed;
  const usage = decoder.usage();
  if (!usage) return upstreamFailure(502, 'the Coze stream ended before the chat completed', { type: 'coze_error', retryable: true });
  return assembleChatResponse(chunks, call, usage);
}
