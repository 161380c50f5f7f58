// Audio: transcriptions and translations (multipart upload in, text out) and
// speech (JSON in, audio out). The upload is forwarded byte for byte with
// its own boundary; only the `model` value changes, and only when a channel
// maps the model.
// Billing:
// - transcriptions/translations: AUDIO_REQUEST_TOKENS of prompt plus the
//   tokens of the returned text as completion tokens (the upstream's own
//   token usage when it reports one), at the model's ratio. The model's
//   maximum output (ModelMaxOutputTokens) is reserved first.
// - speech: one token per input character (OpenAI prices speech by
//   character), reserved in full before the call.
// Nothing is charged when the upstream fails.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { abortOnDisconnect, admitModel, answerUnanswered, modelOf, openJsonRequest, reserve, settleLater } from '../../relay/accounting';
import { AUDIO_REQUEST_TOKENS, completionRatioFor, computeQuota, maxOutputTokensFor, reservationQuota } from '../../relay/billing';
import type { Bookkeeping } from '../../relay/bookkeeping';
import { holdPlaceUntilClosed } from '../../relay/concurrency';
import { answerBytes, dispatch } from '../../relay/dispatch';
import { isRelayError, relayError, sendRelayError } from '../../relay/errors';
import { findMultipartField, multipartBoundary, replaceMultipartField } from '../../relay/multipart';
import { modelNameProblem } from '../../relay/requestFields';
import { countTextTokens } from '../../relay/tokenCount';
import { authenticateRelay } from '../../relay/tokenAuth';

/** What a transcription answer says it used, when it says (gpt-4o-transcribe reports tokens; whisper-1 does not). */
function transcriptionUsage(value: unknown): { promptTokens: number; completionTokens: number } | undefined {
  const usage = (value as { usage?: { input_tokens?: unknown; output_tokens?: unknown } } | undefined)?.usage;
  const input = Number(usage?.input_tokens);
  const output = Number(usage?.output_tokens);
  return Number.isFinite(input) && Number.isFinite(output) && input + output > 0 ? { promptTokens: input, completionTokens: output } : undefined;
}

export function audioRoutes(bookkeeping: Bookkeeping) {
  return async (app: FastifyInstance): Promise<void> => {
    const { db, options } = app.ctx;

    const transcribe = async (path: string, request: FastifyRequest, reply: FastifyReply) => {
      const caller = await authenticateRelay(db, request);
      if (isRelayError(caller)) return sendRelayError(reply, caller);
      const refused = holdPlaceUntilClosed(app, caller, reply.raw);
      if (refused) return sendRelayError(reply, refused);
      const contentType = request.headers['content-type'] ?? '';
      const boundary = multipartBoundary(contentType);
      const upload = request.body;
      if (!Buffer.isBuffer(upload) || !boundary) return sendRelayError(reply, relayError(400, 'the request body must be multipart/form-data with a file and a model'));
      const modelField = findMultipartField(upload, boundary, 'model');
      const model = modelField?.value.trim() ?? '';
      if (!modelField || !model) return sendRelayError(reply, relayError(400, 'you must provide a model parameter', 'model_required'));
      const badName = modelNameProblem(model);
      if (badName) return sendRelayError(reply, badName);
      const admission = admitModel(app, caller, model);
      if (isRelayError(admission)) return sendRelayError(reply, admission);
      const completionRatio = completionRatioFor(model);
      const reservation = await reserve(
        app,
        admission,
        reservationQuota({ promptTokens: AUDIO_REQUEST_TOKENS, maxOutputTokens: maxOutputTokensFor(model, options.json('ModelMaxOutputTokens')), ratio: admission.ratio, completionRatio }),
      );
      if (isRelayError(reservation)) return sendRelayError(reply, reservation);

      const dispatched = await dispatch(app, caller, {
        requestId: admission.requestId,
        model,
        path,
        headers: { 'content-type': contentType, accept: request.headers.accept ?? 'application/json' },
        body: (upstreamModel) => (upstreamModel === model ? upload : replaceMultipartField(upload, modelField, upstreamModel)),
        signal: abortOnDisconnect(app, reply.raw),
      });
      if (dispatched.outcome !== 'answered') return answerUnanswered(app, reply, reservation, dispatched);
      const { answer } = dispatched;
      // json and verbose_json carry the text in `text`; text, srt and vtt are the text
      const bytes = await answerBytes(answer);
      if (isRelayError(bytes)) return answerUnanswered(app, reply, reservation, { outcome: 'failed', error: bytes });
      reply.code(answer.response.status).header('content-type', answer.response.contentType || 'application/json').send(bytes);
      const reported = transcriptionUsage(answer.json?.value);
      const text = answer.json ? (answer.json.value as { text?: unknown } | undefined)?.text : bytes.toString('utf8');
      const usage = reported ?? {
        promptTokens: AUDIO_REQUEST_TOKENS,
        completionTokens: countTextTokens(typeof text === 'string' ? text : '', model, { approximate: options.bool('ApproximateTokenEnabled') }),
      };
      settleLater(app, bookkeeping, admission, reservation, {
        channelId: answer.channel.id,
        charge: computeQuota({ ...usage, ratio: admission.ratio, completionRatio }),
        ...usage,
        isStream: false,
        estimated: !reported,
      });
      return reply;
    };

    app.post('/v1/audio/transcriptions', (request, reply) => transcribe('/v1/audio/transcriptions', request, reply));
    app.post('/v1/audio/translations', (request, reply) => transcribe('/v1/audio/translations', request, reply));

    app.post('/v1/audio/speech', async (request, reply) => {
      const opened = await openJsonRequest(app, request);
      if (isRelayError(opened)) return sendRelayError(reply, opened);
      const { caller, body } = opened;
      const refused = holdPlaceUntilClosed(app, caller, reply.raw);
      if (refused) return sendRelayError(reply, refused);
      const model = modelOf(body);
      if (!model) return sendRelayError(reply, relayError(400, 'you must provide a model parameter', 'model_required'));
      if (typeof body.input !== 'string' || body.input === '') return sendRelayError(reply, relayError(400, 'field input is required', 'required_field_missing'));
      const admission = admitModel(app, caller, model);
      if (isRelayError(admission)) return sendRelayError(reply, admission);
      const characters = [...body.input].length;
      const charge = computeQuota({ promptTokens: characters, completionTokens: 0, ratio: admission.ratio, completionRatio: 1 });
      const reservation = await reserve(app, admission, charge);
      if (isRelayError(reservation)) return sendRelayError(reply, reservation);

      const dispatched = await dispatch(app, caller, {
        requestId: admission.requestId,
        model,
        path: '/v1/audio/speech',
        headers: { 'content-type': 'application/json', accept: request.headers.accept ?? '*/*' },
        body: (upstreamModel) => JSON.stringify({ ...body, model: upstreamModel }),
        signal: abortOnDisconnect(app, reply.raw),
      });
      if (dispatched.outcome !== 'answered') return answerUnanswered(app, reply, reservation, dispatched);
      const { answer } = dispatched;
      reply.code(answer.response.status).header('content-type', answer.response.contentType || 'application/octet-stream');
      const length = answer.response.headers['content-length'];
      if (!answer.json && typeof length === 'string') reply.header('content-length', length);
      // the audio is piped as it comes; the upstream has produced (and billed) it whole
      reply.send(answer.json?.bytes ?? answer.response.stream);
      settleLater(app, bookkeeping, admission, reservation, {
        channelId: answer.channel.id,
        charge,
        promptTokens: characters,
        completionTokens: 0,
        isStream: false,
        estimated: false,
        detail: `${characters} input characters`,
      });
      return reply;
    });
  };
}
