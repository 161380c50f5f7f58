// A streamed call to Replicate: the finished prediction (see index.ts), given
// to the client piece by piece as the model produced it.
import { isUpstreamFailure, type AdaptorCall, type ChatChunk, type ChatStreamDecoder, type UpstreamFailure, type Usage } from '../../types';
import { predictionChunks } from './json';

export function decodeChatStream(call: AdaptorCall): ChatStreamDecoder {
  const held: Buffer[] = [];
  let usage: Usage | undefined;
  let failed: UpstreamFailure | undefined;
  let finished = false;
  return {
    push(data) {
      held.push(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      return [];
    },
    end(): ChatChunk[] {
      if (finished) return [];
      finished = true;
      const decoded = predictionChunks(Buffer.concat(held).toString('utf8'), call);
      if (isUpstreamFailure(decoded)) {
        failed = decoded;
        return [];
      }
      usage = decoded.usage;
      return decoded.chunks;
    },
    usage: () => usage,
    failure: () => failed,
    done: () => finished,
  };
}
