// Audio: transcriptions and translations (multipart upload in, text out) and
// speech (JSON in, audio out), as declarations into the relay pipeline
// (server/relay/pipeline.ts). The upload is forwarded byte for byte with
// its own boundary; only the `model` value changes, and only when a channel
// maps the model.
// Billing:
// - transcriptions/translations, as their vendor bills them. whisper-1 (and
//   any whisper-*) by the second: the audio's seconds times
//   WHISPER_TOKENS_PER_SECOND of prompt at the model's ratio, nothing for the
//   text (at the default ratio of 10, OpenAI's US$0.006 a minute). The seconds
//   are the upstream's own (`usage.seconds`, verbose_json's `duration`) when it
//   says, else the upload's own header (audioDuration.ts), which is also what
//   is held before the call. Every other model (gpt-4o-transcribe and its kin)
//   by tokens: the upstream's usage when reported, else the audio at
//   AUDIO_INPUT_TOKENS_PER_SECOND plus the form's other fields as prompt and
//   the returned text's tokens as completion; held at that prompt plus the
//   model's maximum output.
// - speech: one token per input character (OpenAI prices speech by
//   character), and the body's other text fields (gpt-4o-mini-tts's
//   `instructions`, a vendor's own) by their tokens; held at the characters
//   and those fields' bound by the prompt's rule (promptBound.ts).
// Nothing is charged when the upstream fails.
import { openaiChat } from '../../protocols/inbound';
import { countPaced, countTextTokens } from '../../protocols/inbound/tokenCount';
import { promptBound } from '../../protocols/inbound/promptBound';
import { modelOf } from '../../relay/intake';
import { tokenCharge, type Admission } from '../../billing/accounting';
import { AUDIO_REQUEST_TOKENS, completionRatioFor, maxOutputTokensFor, reservationQuota } from '../../billing/prices';
import { answerBytes } from '../../relay/attempt';
import { isRelayError, relayError, type RelayError } from '../../relay/errors';
import { findMultipartField, findMultipartFiles, multipartBoundary, replaceMultipartField } from '../../relay/multipart';
import { audioDuration } from '../../protocols/inbound/audioDuration';
import type { RelayCall, RelayDeclaration, RelayRoute } from '../../relay/pipeline';
import { modelNameProblem } from '../../relay/requestFields';

/** Prompt tokens a second of whisper audio is billed as: at the default ratio of 10, US$0.006 a minute (500,000 quota a dollar). */
export const WHISPER_TOKENS_PER_SECOND = 5;
/** Audio tokens a second a token-billed transcriber (gpt-4o-transcribe) bills, and more: OpenAI's audio input is about ten. */
export const AUDIO_INPUT_TOKENS_PER_SECOND = 10;

/** Whisper models bill by the second; the others by tokens. */
const billsBySecond = (model: string) => model.slice(model.lastIndexOf('/') + 1).startsWith('whisper');

/** What a transcription answer says it used, when it says: gpt-4o-transcribe reports tokens, whisper-1 seconds (`usage.seconds`, or verbose_json's `duration`). */
function transcriptionUsage(value: unknown): { promptTokens: number; completionTokens: number } | { seconds: number } | undefined {
  const answer = value as
    { usage?: { type?: unknown; seconds?: unknown; input_tokens?: unknown; output_tokens?: unknown }; duration?: unknown } | undefined;
  const usage = answer?.usage;
  const seconds = Number(usage?.type === 'duration' ? usage.seconds : answer?.duration);
  if (Number.isFinite(seconds) && seconds > 0) return { seconds };
  const input = Number(usage?.input_tokens);
  const output = Number(usage?.output_tokens);
  return Number.isFinite(input) && Number.isFinite(output) && input + output > 0
    ? { promptTokens: input, completionTokens: output }
    : undefined;
}

interface UploadState {
  upload: Buffer;
  contentType: string;
  modelField: NonNullable<ReturnType<typeof findMultipartField>>;
  completionRatio: number;
  /** The audio's seconds as its header (or its bytes) tell; the longest of the files sent. */
  seconds: number;
  /** The bytes of the form beside its files (the prompt, the language...), which a token-billed model reads as prompt. */
  formBytes: number;
}

/** Billed seconds: whole, at least one (OpenAI rounds to the second). */
export const billedSeconds = (seconds: number) => Math.max(1, Math.ceil(seconds));

/** The prompt a transcription is held and (without a report) billed at. */
export function transcriptionPromptTokens(model: string, state: Pick<UploadState, 'seconds' | 'formBytes'>): number {
  if (billsBySecond(model)) return billedSeconds(state.seconds) * WHISPER_TOKENS_PER_SECOND;
  return Math.max(AUDIO_REQUEST_TOKENS, billedSeconds(state.seconds) * AUDIO_INPUT_TOKENS_PER_SECOND + state.formBytes);
}

/** A transcription's first step: the upload read for its model, its audio's seconds and the bytes of its other fields. */
function readUpload(call: RelayCall<UploadState>): UploadState | RelayError {
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
  const files = findMultipartFiles(upload, boundary, 'file');
  const fileBytes = files.reduce((sum, file) => sum + file.length, 0);
  const seconds = files.reduce((longest, file) => Math.max(longest, audioDuration(file).seconds), 0);
  return {
    upload,
    contentType,
    modelField,
    completionRatio: completionRatioFor(model, call.ctx.options.json('CompletionRatio')),
    seconds,
    formBytes: Math.max(0, upload.length - fileBytes),
  };
}

/** Transcriptions and translations: the same upload, a different operation and path. */
function transcriptionRoute(operation: 'audio_transcription' | 'audio_translation', path: string): RelayRoute<UploadState> {
  return {
    operation,
    inbound: openaiChat,
    body: 'multipart',

    read: readUpload,

    price: (call) =>
      reservationQuota({
        promptTokens: transcriptionPromptTokens(call.model, call.state),
        // whisper bills no text; the others their transcript, at most the model's output limit
        maxOutputTokens: billsBySecond(call.model) ? 0 : maxOutputTokensFor(call.model, call.ctx.options.json('ModelMaxOutputTokens')),
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
        body: (upstreamModel) =>
          upstreamModel === model ? state.upload : replaceMultipartField(state.upload, state.modelField, upstreamModel),
        signal: call.signal,
      };
    },

    async answer(call, answer) {
      const { response, model, state } = call;
      // json and verbose_json carry the text in `text`; text, srt and vtt are the text
      const bytes = await answerBytes(answer);
      if (isRelayError(bytes)) return bytes;
      response.writeHead(answer.response.status, {
        'content-type': answer.response.contentType || 'application/json',
        'content-length': bytes.length,
      });
      response.end(bytes);
      const reported = transcriptionUsage(answer.json?.value);
      let usage: { promptTokens: number; completionTokens: number };
      let detail: string | undefined;
      if (billsBySecond(model)) {
        const seconds = billedSeconds(reported && 'seconds' in reported ? reported.seconds : state.seconds);
        usage = { promptTokens: seconds * WHISPER_TOKENS_PER_SECOND, completionTokens: 0 };
        detail = `${seconds} s of audio${reported && 'seconds' in reported ? '' : ' (read from the upload)'}`;
      } else if (reported && 'promptTokens' in reported) usage = reported;
      else {
        const text = answer.json ? (answer.json.value as { text?: unknown } | undefined)?.text : bytes.toString('utf8');
        usage = {
          promptTokens: transcriptionPromptTokens(model, state),
          completionTokens: countTextTokens(typeof text === 'string' ? text : '', model, {
            approximate: call.ctx.options.bool('ApproximateTokenEnabled'),
          }),
        };
      }
      call.settle({
        channelId: answer.channel.id,
        ...tokenCharge(call.admission, { cachedPromptTokens: 0, ...usage }, state.completionRatio),
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        isStream: false,
        estimated: !reported,
        ...(detail ? { detail } : {}),
      });
      return undefined;
    },
  };
}

interface SpeechState {
  characters: number;
  /** The body's fields beside the input, voice and format (`instructions`, a vendor's own): the vendor reads them as text. */
  options: Record<string, unknown> | undefined;
  /** Their bound by the prompt's rule (promptBound.ts), held with the characters. */
  optionsBound: number;
}

/** The fields of a speech request that are not read out or billed as text. */
const SPEECH_FIELDS = new Set(['model', 'input', 'voice', 'response_format', 'speed', 'stream_format']);

/** What a speech request is held at: its input's characters, and its other text fields by the prompt's rule. */
export function speechHold(body: Record<string, unknown> & { input: string }, model: string): SpeechState {
  const optionEntries = Object.entries(body).filter(([key]) => !SPEECH_FIELDS.has(key));
  const options = optionEntries.length > 0 ? Object.fromEntries(optionEntries) : undefined;
  return { characters: [...body.input].length, options, optionsBound: options ? promptBound(options, model) : 0 };
}

/** Speech is billed by the characters it reads out, and its other text (gpt-4o-mini-tts's `instructions`) by its tokens, as prompt tokens. */
const speechCharge = (admission: Pick<Admission, 'model' | 'ratio'>, promptTokens: number) =>
  tokenCharge(admission, { promptTokens, completionTokens: 0, cachedPromptTokens: 0 }, 1);

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
    return speechHold(body as Record<string, unknown> & { input: string }, model);
  },

  price: (call) => speechCharge(call.admission, call.state.characters + call.state.optionsBound).charge,

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
    // the options' tokens, counted a slice at a time (a huge `instructions` must not hold the event loop), begun
    // before the audio goes out and tracked, so the bookkeeping is not idle until the bill is made
    const { options } = state;
    const counting = options
      ? call.ctx.bookkeeping.track(
          countPaced(call.model, { approximate: call.ctx.options.bool('ApproximateTokenEnabled') }, (counted) =>
            promptBound(options, call.model, (text) => countTextTokens(text, call.model, counted)),
          ),
        )
      : Promise.resolve(0);
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
    const optionTokens = await counting;
    const promptTokens = state.characters + Math.min(optionTokens, state.optionsBound);
    call.settle({
      channelId: answer.channel.id,
      ...speechCharge(call.admission, promptTokens),
      promptTokens,
      completionTokens: 0,
      isStream: false,
      estimated: false,
      detail: `${state.characters} input characters${optionTokens > 0 ? ` and ${Math.min(optionTokens, state.optionsBound)} tokens of other fields` : ''}`,
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
