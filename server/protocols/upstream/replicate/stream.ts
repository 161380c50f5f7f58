// A streamed call to Replicate: the finished prediction (see index.ts), given
// to the client piece by piece as the model produced it.
import type { AdaptorCall, ChatStreamDecoder } from '../../types';
import { wholeAnswerStream } from '../../shared';
import { predictionChunks } from './json';

export const decodeChatStream = (call: AdaptorCall): ChatStreamDecoder => wholeAnswerStream((body) => predictionChunks(body, call));
