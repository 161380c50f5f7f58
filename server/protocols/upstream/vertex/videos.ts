// Veo on Vertex AI: the same predictLongRunning body as the Gemini API's, at
// {region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}/
// publishers/google/models/{model}:predictLongRunning (the channel's base URL
// in place of Google's origin, as for chat), followed with a POST to the
// model's :fetchPredictOperation {operationName}. Done, the response holds
// videos[] with the MP4's bytes (bytesBase64Encoded, mimeType), or a gcsUri
// when a storage bucket was asked for (the gateway never asks for one).
// Reference: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation
import { trimmedBaseUrl, upstreamFailure } from '../../shared';
import { isUpstreamFailure, type ChannelConfig, type UpstreamFailure } from '../../types';
import { encodeVeoSubmit, filtered, operationState, readOperationName } from '../gemini/videos';
import type { VideoAdaptor, VideoRequest, VideoState } from '../videoAdaptors';
import { failure } from './errors';
import { placeOf, regionalOrigin } from './request';

/** The publisher model's URL for a method, or why the channel cannot say where it is. */
function modelUrl(channel: ChannelConfig, model: string, method: string): string | UpstreamFailure {
  const place = placeOf(channel);
  if (isUpstreamFailure(place)) return place;
  const base = trimmedBaseUrl(channel.baseUrl, regionalOrigin(place.region));
  const versioned = /\/v1(beta1)?$/.test(base) ? base : `${base}/v1`;
  const path = ['projects', place.project, 'locations', place.region, 'publishers', 'google', 'models', model]
    .map(encodeURIComponent)
    .join('/');
  return `${versioned}/${path}:${method}`;
}

const bearer = (credential: string | undefined): Record<string, string> | UpstreamFailure =>
  credential
    ? { authorization: `Bearer ${credential}`, 'content-type': 'application/json' }
    : upstreamFailure(500, 'a Vertex AI call needs an access token from the service-account exchange', {
        type: 'invalid_channel_config',
        retryable: true,
      });

function readPoll(body: string): VideoState {
  const state = operationState(body);
  if (!state) return { state: 'unreadable' };
  if (state.state === 'running') return { state: 'running' };
  if (state.state === 'failed') return { state: 'failed', code: 'video_failed', message: state.message };
  const videos = state.response.videos as Array<{ bytesBase64Encoded?: unknown; mimeType?: unknown; gcsUri?: unknown }> | undefined;
  const video = Array.isArray(videos) ? videos[0] : undefined;
  const mimeType = typeof video?.mimeType === 'string' ? video.mimeType : 'video/mp4';
  if (typeof video?.bytesBase64Encoded === 'string' && video.bytesBase64Encoded)
    return { state: 'completed', output: { kind: 'bytes', bytes: Buffer.from(video.bytesBase64Encoded, 'base64'), mimeType } };
  if (typeof video?.gcsUri === 'string' && video.gcsUri) return { state: 'completed', output: { kind: 'gcs', uri: video.gcsUri } };
  return filtered(state.response);
}

export const vertexVideos: VideoAdaptor = {
  docs: 'https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation',
  submit(channel, model, create, credential): VideoRequest | UpstreamFailure {
    const headers = bearer(credential);
    if (isUpstreamFailure(headers)) return headers;
    const url = modelUrl(channel, model, 'predictLongRunning');
    if (typeof url !== 'string') return url;
    const body = encodeVeoSubmit(model, create);
    return typeof body === 'string' ? { url, method: 'POST', headers, body } : body;
  },
  readSubmit: readOperationName,
  poll(channel, operation, credential) {
    const headers = bearer(credential);
    if (isUpstreamFailure(headers)) return headers;
    // the operation's name carries its model: projects/.../models/{model}/operations/{id}
    const model = /\/models\/([^/]+)\/operations\//.exec(operation)?.[1];
    if (!model) return upstreamFailure(502, `the operation ${operation} names no model`, { retryable: false });
    const url = modelUrl(channel, decodeURIComponent(model), 'fetchPredictOperation');
    if (typeof url !== 'string') return url;
    return { url, method: 'POST', headers, body: JSON.stringify({ operationName: operation }) };
  },
  readPoll,
  failure,
};
