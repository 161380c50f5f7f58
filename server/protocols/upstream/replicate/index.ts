// Replicate predictions for language models (Meta Llama and the like): the
// model is `owner/name` (its latest version) or `owner/name:version`, the key
// an API token (`r8_...`).
// API reference: https://replicate.com/docs/reference/http#models.predictions.create
// (sync mode: https://replicate.com/docs/topics/predictions/create-a-prediction#sync-mode)
//
// Every call asks for sync mode (`Prefer: wait`): Replicate answers once the
// prediction finished, with its output and `metrics.input_token_count` /
// `output_token_count`, so the bill is Replicate's own count. A streamed call
// gets that output piece by piece (each piece a token the model produced)
// once the prediction finished: following `urls.stream` would stream as the
// model runs, but it needs a second request per call and its events carry no
// token counts, so it would bill an estimate. A prediction still running
// when the wait ends is answered as a 504.
import type { UpstreamAdaptor } from '../../types';
import { failure } from './errors';
import { decodeChat } from './json';
import { encodeChat, target } from './request';
import { decodeChatStream } from './stream';

export const replicateAdaptor: UpstreamAdaptor = {
  protocol: 'replicate',
  docs: 'https://replicate.com/docs/reference/http#models.predictions.create',
  operations: new Set(['chat']),
  transport: 'http',
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  failure,
};
