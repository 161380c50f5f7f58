// Veo through the Gemini API: a video is a long-running operation.
// POST {base}/v1beta/models/{model}:predictLongRunning with
// {instances:[{prompt, image?}], parameters:{durationSeconds, aspectRatio, resolution}}
// answers {name:"models/{model}/operations/{id}"}; GET {base}/v1beta/{name}
// answers {done} and, once done, `error` or
// response.generateVideoResponse.generatedSamples[].video.uri, a file the key
// downloads. A prompt or a video Google's filters hold back ends done with no
// sample and raiMediaFilteredReasons. The key travels in x-goog-api-key.
// Reference: https://ai.google.dev/gemini-api/docs/video (REST), and
// googleapis/python-genai models.py (_GenerateVideosParameters_to_mldev,
// _GenerateVideosOperation_from_mldev)
import { parseJson, upstreamFailure } from '../../shared';
import { isUpstreamFailure, type ChannelConfig, type HttpTarget, type UpstreamFailure } from '../../types';
import type { VideoAdaptor, VideoCreate, VideoRequest, VideoState } from '../videoAdaptors';
import { failure } from './errors';
import { baseUrl, modelResource } from './request';

const GOOGLE_FILES_HOST = 'generativelanguage.googleapis.com';

/** OpenAI's WIDTHxHEIGHT as Veo's aspect ratio and resolution; a square or unknown shape Veo cannot make is refused. */
export function veoShape(size: string): { aspectRatio: '16:9' | '9:16'; resolution: '720p' | '1080p' } | UpstreamFailure {
  const [width, height] = size.split('x').map(Number);
  if (!(width > 0) || !(height > 0) || width === height)
    return upstreamFailure(400, `Veo makes 16:9 or 9:16 videos, not ${size}: ask 1280x720 or 720x1280 (1920x1080 or 1080x1920 for 1080p)`, {
      type: 'invalid_request_error',
      code: 'invalid_size',
      // an OpenAI channel for the same model name may take it
      retryable: true,
    });
  return { aspectRatio: width > height ? '16:9' : '9:16', resolution: Math.min(width, height) >= 1080 ? '1080p' : '720p' };
}

/** The predictLongRunning body both Google APIs take; Veo 2 has no resolution parameter. */
export function encodeVeoSubmit(model: string, create: VideoCreate): string | UpstreamFailure {
  const shape = veoShape(create.size);
  if (isUpstreamFailure(shape)) return shape;
  const instance: Record<string, unknown> = { prompt: create.prompt };
  if (create.image) instance.image = { bytesBase64Encoded: create.image.bytes.toString('base64'), mimeType: create.image.mimeType };
  const parameters: Record<string, unknown> = { durationSeconds: create.seconds, aspectRatio: shape.aspectRatio };
  if (!/veo-2/.test(model)) parameters.resolution = shape.resolution;
  return JSON.stringify({ instances: [instance], parameters });
}

/** The operation's name in a predictLongRunning answer. */
export function readOperationName(body: string): string | UpstreamFailure {
  const answer = parseJson(body) as { name?: unknown } | undefined;
  return typeof answer?.name === 'string' && answer.name
    ? answer.name
    : upstreamFailure(502, 'Veo answered the video request without an operation name', { retryable: true });
}

interface Operation {
  done?: unknown;
  error?: { code?: unknown; message?: unknown };
  response?: Record<string, unknown>;
}

/** An operation's state: running, failed (`error`), or done with the response each API reads its own way. */
export type OperationState =
  { state: 'running' } | { state: 'failed'; message: string } | { state: 'done'; response: Record<string, unknown> };

/** The operation in a poll's answer; undefined when it is not one. */
export function operationState(body: string): OperationState | undefined {
  const operation = parseJson(body) as Operation | undefined;
  if (!operation || typeof operation !== 'object') return undefined;
  if (operation.done !== true) return { state: 'running' };
  if (operation.error) {
    const message = typeof operation.error.message === 'string' ? operation.error.message : 'Veo could not make the video';
    return { state: 'failed', message };
  }
  return operation.response && typeof operation.response === 'object' ? { state: 'done', response: operation.response } : undefined;
}

/** No video, and the filters' reasons (or none given): the video Google held back. */
export function filtered(response: { raiMediaFilteredReasons?: unknown }): VideoState {
  const reasons = Array.isArray(response.raiMediaFilteredReasons)
    ? response.raiMediaFilteredReasons.filter((r) => typeof r === 'string')
    : [];
  const message = reasons.length ? `Google's safety filters held the video back: ${reasons.join('; ')}` : 'Veo finished without a video';
  return { state: 'failed', code: reasons.length ? 'moderation_blocked' : 'video_failed', message };
}

function readPoll(body: string): VideoState {
  const state = operationState(body);
  if (!state) return { state: 'unreadable' };
  if (state.state === 'running') return { state: 'running' };
  if (state.state === 'failed') return { state: 'failed', code: 'video_failed', message: state.message };
  const generated = (state.response.generateVideoResponse ?? {}) as {
    generatedSamples?: Array<{ video?: { uri?: unknown } }>;
    raiMediaFilteredReasons?: unknown;
  };
  const uri = generated.generatedSamples?.[0]?.video?.uri;
  return typeof uri === 'string' && uri ? { state: 'completed', output: { kind: 'uri', uri } } : filtered(generated);
}

const keyHeader = (channel: ChannelConfig): Record<string, string> | UpstreamFailure => {
  const key = channel.key.trim();
  return key
    ? { 'x-goog-api-key': key }
    : upstreamFailure(401, 'the channel has no Gemini API key', { code: 'API_KEY_INVALID', deadKey: true });
};

export const geminiVideos: VideoAdaptor = {
  docs: 'https://ai.google.dev/gemini-api/docs/video',
  submit(channel, model, create): VideoRequest | UpstreamFailure {
    const key = keyHeader(channel);
    if (isUpstreamFailure(key)) return key;
    const body = encodeVeoSubmit(model, create);
    if (typeof body !== 'string') return body;
    const url = `${baseUrl(channel)}/${modelResource(model)}:predictLongRunning`;
    return { url, method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body };
  },
  readSubmit: readOperationName,
  poll(channel, operation) {
    const key = keyHeader(channel);
    if (isUpstreamFailure(key)) return key;
    const path = operation.split('/').map(encodeURIComponent).join('/');
    return { url: `${baseUrl(channel)}/${path}`, method: 'GET', headers: { ...key, accept: 'application/json' } };
  },
  readPoll,
  download(channel, uri): HttpTarget | UpstreamFailure {
    const key = keyHeader(channel);
    if (isUpstreamFailure(key)) return key;
    // the key goes only to Google's file host or to the channel's own origin (a proxy, the tests' emulator)
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return upstreamFailure(502, 'Veo named its video at a URL that cannot be read', { retryable: true });
    }
    const own = new URL(baseUrl(channel)).origin;
    if (url.origin !== own && !(url.protocol === 'https:' && url.hostname === GOOGLE_FILES_HOST))
      return upstreamFailure(502, `Veo named its video at ${url.origin}, which is neither Google's nor the channel's`, {
        retryable: false,
      });
    return { url: url.toString(), method: 'GET', headers: key };
  },
  failure,
};
