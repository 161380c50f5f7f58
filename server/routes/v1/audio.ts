// Audio: transcriptions and translations (multipart upload in, text out) and
// speech (JSON in, audio out), as declarations into the relay pipeline
// (server/relay/pipeline.ts). The upload is forwarded byte for byte with
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
import { openaiChat } from '../../protocols/inbound';
import { countTextTokens } from '../../protocols/inbound/tokenCount';
import { modelOf } from '../../relay/intake';
import { tokenCharge, type Admission } from '../../billing/accounting';
import { AUDIO_REQUEST_TOKENS, completionRatioFor, maxOutputTokensFor, reservationQuota } from '../../billing/prices';
import { answerBytes } from '../../relay/dispatch';
import { isRelayError, relayError, type RelayError } from '../../relay/errors';
import { findMultipartField, multipartBoundary, replaceMultipartField } from '../../relay/multipart';
import type { RelayDeclaration, RelayRoute } from '../../relay/pipeline';
import { modelNameProblem } from '../../relay/requestFields';

/** What a transcription answer says it used, when it says (gpt-4o-transcribe reports tokens; whisper-1 does not). */
function transcriptionUsage(value: unknown): { promptTokens: number; completionTokens: number } | undefined {
  const usage = (value as { usage?: { input_tokens?: unknown; output_tokens?: unknown } } | undefined)?.usage;
  const input = Number(usage?.input_tokens);
  const output = Number(usage?.output_tokens);
  return Number.isFinite(input) && Number.isFinite(output) && input + output > 0 ? { promptTokens: input, completionTokens: output } : undefined;
}

interface UploadState {
  upload: Buffer;
  contentType: string;
  modelField: NonNullable<ReturnType<typeof findMultipartField>>;
  completionRatio: number;
}

/** Transcriptions and translations: the same upload, a different operation and path. */
/**
 * What a transcription's upload can be billed as prompt: whisper is billed by
 * the minute, which the relay charges as AUDIO_REQUEST_TOKENS; the models
 * that bill audio tokens (gpt-4o-transcribe and its kin, about ten a second)
 * are bounded by the upload's bytes, one token per 16 (a second of the
 * leanest speech encodings is over 700 bytes).
 */
function transcriptionPromptBound(model: string, uploadBytes: number): number {
  return model.startsWith('whisper') ? AUDIO_REQUEST_TOKENS : Math.max(AUDIO_REQUEST_TOKENS, Math.ceil(uploadBytes / 16));
}

function transcriptionRoute(operation: 'audio_transcription' | 'audio_translation', path: string): RelayRoute<UploadState> {
  return {
    operation,
    inbound: openaiChat,
    body: 'multipart',

    read(call): UploadState | RelayError {
      const contentType = call.input.headers['content-type'] ?? '';
      const boundary = multipartBoundary(contentType);
      const upload = call.input.body;
      if (!Buffer.isBuffer(upload) || !boundary) return relayError(400, 'the request body must be multipart/form-data with a file and a model');
      const modelField = findMultipartField(upload, boundary, 'model');
      const model = modelField?.value.trim() ?? '';
      if (!modelField || !model) return relayError(400, 'you must provide a model parameter', 'model_required');
      const badName = modelNameProblem(model);
      if (badName) return badName;
      call.model = model;
      return { upload, contentType, modelField, completionRatio: completionRatioFor(model, call.ctx.options.json('CompletionRatio')) };
    },

    price: (call) =>
      reservationQuota({
        promptTokens: transcriptionPromptBound(call.model, call.state.upload.length),
        maxOutputTokens: maxOutputTokensFor(call.model, call.ctx.options.json('ModelMaxOutputTokens')),
        ratio: call.admission.ratio,
        completionRatio: call.state.completionRatio,
      }),

    upstream(call) {
      const { state, model, input } = call;
      return {
        operation,
        query: input.query,
        requestId: call.admission.requestId,
        model,
        path,
        headers: { 'content-type': state.contentType, accept: input.headers.accept ?? 'application/json' },
        body: (upstreamModel) => (upstreamModel === model ? state.upload : replaceMultipartField(state.upload, state.modelField, upstreamModel)),
        signal: call.signal,
      };
    },

    async answer(call, answer) {
      const { response, model, state } = call;
      // json and verbose_json carry the text in `text`; text, srt and vtt are the text
      const bytes = await answerBytes(answer);
      if (isRelayError(bytes)) return bytes;
      response.writeHead(answer.response.status, { 'content-type': answer.response.contentType || 'application/json', 'content-length': bytes.length });
      response.end(bytes);
      const reported = transcriptionUsage(answer.json?.value);
      const text = answer.json ? (answer.json.value as { text?: unknown } | undefined)?.text : bytes.toString('utf8');
      const usage = reported ?? {
        promptTokens: AUDIO_REQUEST_TOKENS,
        completionTokens: countTextTokens(typeof text === 'string' ? text : '', model, { approximate: call.ctx.options.bool('ApproximateTokenEnabled') }),
      };
      call.settle({
        channelId: answer.channel.id,
        ...tokenCharge(call.admission, { cachedPromptTokens: 0, ...usage }, state.completionRatio),
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        isStream: false,
        estimated: !reported,
      });
      return undefined;
    },
  };
}

interface SpeechState {
  characters: number;
}

/** Speech is billed by the characters it reads out, as prompt tokens. */
const speechCharge = (admission: Pick<Admission, 'model' | 'ratio'>, characters: number) => tokenCharge(admission, { promptTokens: characters, completionTokens: 0, cachedPromptTokens: 0 }, 1);

export const speech: RelayRoute<SpeechState> = {
  operation: 'audio_speech',
  inbound: openaiChat,
  body: 'json',

  read(call): SpeechState | RelayError {
    const { body } = call;
    const model = modelOf(body);
    if (!model) return relayError(400, 'you must provide a model parameter', 'model_required');
    if (typeof body.input !== 'string' || body.input === '') return relayError(400, 'field input is required', 'required_field_missing');
    call.model = model;
    return { characters: [...body.input].length };
  },

  price: (call) => speechCharge(call.admission, call.state.characters).charge,

  upstream(call) {
    const { body, input } = call;
    return {
      operation: 'audio_speech',
      json: body,
      query: input.query,
      requestId: call.admission.requestId,
      model: call.model,
      path: '/v1/audio/speech',
      headers: { 'content-type': 'application/json', accept: input.headers.accept ?? '*/*' },
      body: (upstreamModel) => JSON.stringify({ ...body, model: upstreamModel }),
      signal: call.signal,
    };
  },

  async answer(call, answer) {
    const { response, state } = call;
    const headers: Record<string, string | number> = { 'content-type': answer.response.contentType || 'application/octet-stream' };
    const length = answer.response.headers['content-length'];
    if (answer.json) headers['content-length'] = answer.json.bytes.length;
    else if (typeof length === 'string') headers['content-length'] = length;
    response.writeHead(answer.response.status, headers);
    // the audio is piped as it comes; the upstream has produced (and billed) it whole
    const closed = new Promise<void>((resolve) => response.once('close', resolve));
    if (answer.json) response.end(answer.json.bytes);
    else {
      const stream = answer.response.stream!;
      stream.once('error', () => response.destroy());
      stream.pipe(response);
    }
    call.settle({
      channelId: answer.channel.id,
      ...speechCharge(call.admission, state.characters),
      promptTokens: state.characters,
      completionTokens: 0,
      isStream: false,
      estimated: false,
      detail: `${state.characters} input characters`,
    });
    // the caller's place is held until the audio is delivered (or the client left)
    await closed;
    return undefined;
  },
};

export const AUDIO_ROUTES: readonly RelayDeclaration[] = [
  { path: '/v1/audio/transcriptions', route: transcriptionRoute('audio_transcription', '/v1/audio/transcriptions') },
  { path: '/v1/audio/translations', route: transcriptionRoute('audio_translation', '/v1/audio/translations') },
  { path: '/v1/audio/speech', route: speech },
];
