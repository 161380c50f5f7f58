// POST /v1/images/generations, v0.5.3's image relay with its money defects
// fixed: a missing `n` is one image (not free), the full price is reserved
// before the call (user and token quota both checked), a provider error or a
// network failure costs nothing, and a mapped model is what the upstream
// receives, every other field unchanged. A declaration into the relay
// pipeline (server/relay/pipeline.ts).
// Price: floor(ratio x sizeRatio x 1000) per image delivered (at most n), at
// the ratio of the requested model (`dall-e` when the body names none).
import { openaiChat } from '../../protocols/inbound';
import { modelOf } from '../../relay/intake';
import { imageCharge } from '../../billing/accounting';
import { IMAGE_SIZE_RATIO, imageQuota } from '../../billing/prices';
import { answerBytes, type UpstreamAnswer } from '../../relay/attempt';
import { isRelayError, relayError, type RelayError } from '../../relay/errors';
import type { RelayCall, RelayDeclaration, RelayRoute } from '../../relay/pipeline';

const DEFAULT_IMAGE_MODEL = 'dall-e';
const MAX_IMAGES = 10;
const HEADERS: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };

interface ImageState {
  /** The model the body names ('' when none: the default is priced and routed, the body stays without one). */
  named: string;
  size: string | undefined;
  count: number;
}

export const imageGeneration: RelayRoute<ImageState> = {
  operation: 'images',
  inbound: openaiChat,
  body: 'json',

  read(call): ImageState | RelayError {
    const { body } = call;
    const named = modelOf(body);
    if (typeof body.prompt !== 'string' || body.prompt === '') return relayError(400, 'prompt is required', 'required_field_missing');
    const size = body.size === undefined || body.size === null || body.size === '' ? undefined : body.size;
    if (size !== undefined && (typeof size !== 'string' || !(size in IMAGE_SIZE_RATIO))) {
      return relayError(400, `size must be one of ${Object.keys(IMAGE_SIZE_RATIO).join(', ')}`, 'invalid_field_value');
    }
    const count = body.n === undefined || body.n === null ? 1 : body.n;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_IMAGES) {
      return relayError(400, `n must be an integer from 1 to ${MAX_IMAGES}`, 'invalid_field_value');
    }
    call.model = named || DEFAULT_IMAGE_MODEL;
    return { named, size, count };
  },

  price: (call) => imageQuota(call.admission.ratio, call.state.size, call.state.count),

  upstream(call) {
    const { body, model, state } = call;
    return {
      operation: 'images',
      json: body,
      query: call.input.query,
      requestId: call.admission.requestId,
      model,
      path: '/v1/images/generations',
      headers: HEADERS,
      // a body without a model stays without one unless the channel maps the default
      body: (upstreamModel) => JSON.stringify(state.named || upstreamModel !== model ? { ...body, model: upstreamModel } : body),
      signal: call.signal,
    };
  },

  answer: answerImages,
};

/**
 * The vendor's images written back as they came, and the images delivered (never more than asked) billed: the answer
 * of generations, edits and variations alike.
 */
export async function answerImages(
  call: RelayCall<{ size: string | undefined; count: number }>,
  answer: UpstreamAnswer,
): Promise<RelayError | undefined> {
  const { state, response } = call;
  const images = (answer.json?.value as { data?: unknown } | undefined)?.data;
  const delivered = Array.isArray(images) ? Math.min(state.count, images.length) : state.count;
  const bytes = await answerBytes(answer);
  if (isRelayError(bytes)) return bytes;
  response.writeHead(answer.response.status, {
    'content-type': answer.response.contentType || 'application/json',
    'content-length': bytes.length,
  });
  response.end(bytes);
  call.settle({
    channelId: answer.channel.id,
    ...imageCharge(call.admission, state.size, delivered),
    promptTokens: 0,
    completionTokens: 0,
    isStream: false,
    estimated: false,
  });
  return undefined;
}

export const IMAGE_ROUTES: readonly RelayDeclaration[] = [{ path: '/v1/images/generations', route: imageGeneration }];
