// Which client APIs a model is reached through, for the price list: what the
// model's name says it is (a chat model, an embedding model, a reranker...),
// narrowed to the operations the adaptors of the channel types serving it
// offer (UpstreamAdaptor.operations and servesOperation, as routing checks
// them). A chat model is also reached through the APIs the gateway translates
// into chat: OpenAI Responses, Anthropic Messages and Gemini. Pure: no I/O.
import type { ModelEndpoint } from '../../common/pricing';
import { adaptorForChannelType } from './upstream';
import { servesRealtime } from './upstream/realtime';
import type { Operation } from './types';

type ModelKind = 'chat' | 'completions' | 'embeddings' | 'rerank' | 'images' | 'speech' | 'transcription' | 'moderations' | 'realtime';

/** The kinds a model's name can tell, tried in order (a reranker's name may say "embed" too); chat when none matches. */
const KIND_PATTERNS: ReadonlyArray<readonly [ModelKind, RegExp]> = [
  ['rerank', /rerank/],
  ['embeddings', /embed|^bge-|^text-search-/],
  ['moderations', /moderation/],
  ['realtime', /realtime/],
  ['transcription', /whisper|transcribe/],
  ['speech', /(^|-)tts/],
  ['images', /^(dall-e|gpt-image|imagen|flux|stable-diffusion|sdxl|cogview|wanx)/],
  // OpenAI's legacy completion models; an open model's "-instruct" (llama-...-instruct) is a chat model
  ['completions', /^gpt-3\.5-turbo-instruct|^(text-|code-)?(davinci|babbage|curie|ada)(-|$)/],
];

/** What a model is by its name (its vendor prefix, `vendor/model`, left out). */
export function modelKind(model: string): ModelKind {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  return KIND_PATTERNS.find(([, pattern]) => pattern.test(name))?.[0] ?? 'chat';
}

/** Each kind: the operation a channel must serve, and the endpoints the list names when one does. */
const KIND_ENDPOINTS: Record<ModelKind, { operation: Operation; endpoints: ModelEndpoint[] }> = {
  chat: { operation: 'chat', endpoints: ['chat', 'responses', 'messages', 'gemini'] },
  completions: { operation: 'completions', endpoints: ['completions'] },
  embeddings: { operation: 'embeddings', endpoints: ['embeddings'] },
  rerank: { operation: 'rerank', endpoints: ['rerank'] },
  images: { operation: 'images', endpoints: ['images'] },
  speech: { operation: 'audio_speech', endpoints: ['audio'] },
  transcription: { operation: 'audio_transcription', endpoints: ['audio'] },
  moderations: { operation: 'moderations', endpoints: ['moderations'] },
  realtime: { operation: 'realtime', endpoints: ['realtime'] },
};

/** Whether a channel of this type may be asked for the operation, as routing decides it. */
function typeServes(channelType: number, operation: Operation): boolean {
  if (operation === 'realtime') return servesRealtime(channelType);
  const adaptor = adaptorForChannelType(channelType);
  return adaptor !== undefined && adaptor.operations.has(operation) && adaptor.servesOperation?.(channelType, operation) !== false;
}

/** The endpoints that reach `model` through channels of these types; none when no type serves what the model is. */
export function modelEndpoints(model: string, channelTypes: Iterable<number>): ModelEndpoint[] {
  const { operation, endpoints } = KIND_ENDPOINTS[modelKind(model)];
  for (const type of new Set(channelTypes)) if (typeServes(type, operation)) return [...endpoints];
  return [];
}
