// Replicate predictions for language models (Meta Llama and the like): the
// model is `owner/name` (its latest version) or `owner/name:version`, the key
// an API token (`r8_...`).
// API reference: https://replicate.com/docs/reference/http#models.predictions.create
// (sync mode: https://replicate.com/docs/topics/predictions/create-a-prediction#sync-mode,
// streaming: https://replicate.com/docs/topics/predictions/streaming)
//
// A whole answer asks for sync mode (`Prefer: wait`): Replicate answers once
// the prediction finished, with its output and `metrics.input_token_count` /
// `output_token_count`, so the bill is Replicate's own count; a prediction
// still running when the wait ends is answered as a 504. A streamed call
// creates the prediction with `stream: true` and the relay follows its
// `urls.stream` (stream.ts), so the client gets each piece as the model makes
// it; the events carry no token counts, so once the stream is done the relay
// fetches the prediction (`urls.get`) once for its metrics, and bills its
// own count when that fails.
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat, usageAfterStream } from './json';
import { encodeChat, target } from './request';
import { decodeChatStream, FOLLOW_HOSTS, followStream } from './stream';

export const replicateAdaptor: UpstreamAdaptor = {
  protocol: 'replicate',
  docs: 'https://replicate.com/docs/reference/http#models.predictions.create',
  operations: new Set(['chat']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  followStream,
  followHosts: FOLLOW_HOSTS,
  usageAfterStream,
  failure,
};
