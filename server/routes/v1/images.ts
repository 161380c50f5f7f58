// POST /v1/images/generations, v0.5.3's image relay with its money defects
// fixed: a missing `n` is one image (not free), the full price is reserved
// before the call (user and token quota both checked), a provider error or a
// network failure costs nothing, and a mapped model is what the upstream
// receives, every other field unchanged.
// Price: floor(ratio x sizeRatio x 1000) per image delivered (at most n), at
// the ratio of the requested model (`dall-e` when the body names none).
import type { FastifyInstance } from 'fastify';
import { abortOnDisconnect, admitModel, answerUnanswered, modelOf, openJsonRequest, reserve, settleLater } from '../../relay/accounting';
import { IMAGE_SIZE_RATIO, imageQuota } from '../../relay/billing';
import type { Bookkeeping } from '../../relay/bookkeeping';
import { holdPlaceUntilClosed } from '../../relay/concurrency';
import { answerBytes, dispatch } from '../../relay/dispatch';
import { isRelayError, relayError, sendRelayError } from '../../relay/errors';

const DEFAULT_IMAGE_MODEL = 'dall-e';
const MAX_IMAGES = 10;

export function imageRoutes(bookkeeping: Bookkeeping) {
  return async (app: FastifyInstance): Promise<void> => {

    app.post('/v1/images/generations', async (request, reply) => {
      const opened = await openJsonRequest(app, request);
      if (isRelayError(opened)) return sendRelayError(reply, opened);
      const { caller, body } = opened;
      const refused = holdPlaceUntilClosed(app, caller, reply.raw);
      if (refused) return sendRelayError(reply, refused);
      const named = modelOf(body);
      const model = named || DEFAULT_IMAGE_MODEL;
      if (typeof body.prompt !== 'string' || body.prompt === '') return sendRelayError(reply, relayError(400, 'prompt is required', 'required_field_missing'));
      const size = body.size === undefined || body.size === null || body.size === '' ? undefined : body.size;
      if (size !== undefined && (typeof size !== 'string' || !(size in IMAGE_SIZE_RATIO))) {
        return sendRelayError(reply, relayError(400, `size must be one of ${Object.keys(IMAGE_SIZE_RATIO).join(', ')}`, 'invalid_field_value'));
      }
      const count = body.n === undefined || body.n === null ? 1 : body.n;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_IMAGES) {
        return sendRelayError(reply, relayError(400, `n must be an integer from 1 to ${MAX_IMAGES}`, 'invalid_field_value'));
      }
      const admission = admitModel(app, caller, model);
      if (isRelayError(admission)) return sendRelayError(reply, admission);
      const reservation = await reserve(app, admission, imageQuota(admission.ratio, size, count));
      if (isRelayError(reservation)) return sendRelayError(reply, reservation);

      const dispatched = await dispatch(app, caller, {
        requestId: admission.requestId,
        model,
        path: '/v1/images/generations',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        // a body without a model stays without one unless the channel maps the default
        body: (upstreamModel) => JSON.stringify(named || upstreamModel !== model ? { ...body, model: upstreamModel } : body),
        signal: abortOnDisconnect(app, reply.raw),
      });
      if (dispatched.outcome !== 'answered') return answerUnanswered(app, reply, reservation, dispatched);
      const { answer } = dispatched;
      const images = (answer.json?.value as { data?: unknown } | undefined)?.data;
      const delivered = Array.isArray(images) ? Math.min(count, images.length) : count;
      const bytes = await answerBytes(answer);
      if (isRelayError(bytes)) return answerUnanswered(app, reply, reservation, { outcome: 'failed', error: bytes });
      reply.code(answer.response.status).header('content-type', answer.response.contentType || 'application/json').send(bytes);
      settleLater(app, bookkeeping, admission, reservation, {
        channelId: answer.channel.id,
        charge: imageQuota(admission.ratio, size, delivered),
        promptTokens: 0,
        completionTokens: 0,
        isStream: false,
        estimated: false,
        detail: `size ${size ?? 'default'} (ratio ${IMAGE_SIZE_RATIO[size ?? '256x256'] ?? 1}), ${delivered} image${delivered === 1 ? '' : 's'}`,
      });
      return reply;
    });
  };
}
