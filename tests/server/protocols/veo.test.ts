// Veo's video adaptors as pure codecs: the predictLongRunning body from an
// OpenAI create, the operation answers of both Google APIs read into the
// relay's states (running, a video, a failure, a filtered result, a Cloud
// Storage object, nonsense), the URLs each call goes to, and the key kept
// away from any URL that is neither Google's nor the channel's.
import { describe, expect, it } from 'vitest';
import { geminiVideos, veoShape } from '../../../server/protocols/upstream/gemini/videos';
import { videoAdaptorFor } from '../../../server/protocols/upstream/videoAdaptors';
import { vertexVideos } from '../../../server/protocols/upstream/vertex/videos';
import { isUpstreamFailure, type ChannelConfig } from '../../../server/protocols/types';

const gemini: ChannelConfig = { type: 24, key: 'AIza-key', baseUrl: '', other: '' };
const vertex: ChannelConfig = { type: 42, key: '', baseUrl: '', other: 'europe-west4|a-project' };
const NAME = 'models/veo-3.0-generate-001/operations/abc123';
const VERTEX_NAME = 'projects/a-project/locations/europe-west4/publishers/google/models/veo-3.0-fast-generate-001/operations/0f1e';

describe('Veo video adaptors', () => {
  it('are chosen for the Gemini and Vertex AI protocols only', () => {
    expect(videoAdaptorFor('gemini')).toBe(geminiVideos);
    expect(videoAdaptorFor('vertex')).toBe(vertexVideos);
    expect(videoAdaptorFor('openai')).toBeUndefined();
  });

  it("turns OpenAI's sizes into Veo's aspect ratio and resolution, refusing a square", () => {
    expect(veoShape('720x1280')).toEqual({ aspectRatio: '9:16', resolution: '720p' });
    expect(veoShape('1792x1024')).toEqual({ aspectRatio: '16:9', resolution: '720p' });
    expect(veoShape('1080x1920')).toEqual({ aspectRatio: '9:16', resolution: '1080p' });
    const square = veoShape('1024x1024');
    expect(isUpstreamFailure(square) && square).toMatchObject({ status: 400, code: 'invalid_size', retryable: true });
  });

  it('asks the Gemini API with the key in its header, and Veo 2 without a resolution', () => {
    const create = { prompt: 'waves', seconds: 5, size: '1280x720', image: { bytes: Buffer.from('png'), mimeType: 'image/png' } };
    const submit = geminiVideos.submit(gemini, 'veo-2.0-generate-001', create);
    expect(submit).toEqual({
      url: 'https://generativelanguage.googleapis.com/v1beta/models/veo-2.0-generate-001:predictLongRunning',
      method: 'POST',
      headers: { 'x-goog-api-key': 'AIza-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        instances: [{ prompt: 'waves', image: { bytesBase64Encoded: 'cG5n', mimeType: 'image/png' } }],
        parameters: { durationSeconds: 5, aspectRatio: '16:9' },
      }),
    });
    expect(geminiVideos.poll(gemini, NAME)).toMatchObject({
      url: `https://generativelanguage.googleapis.com/v1beta/${NAME}`,
      method: 'GET',
    });
    expect(geminiVideos.readSubmit(JSON.stringify({ name: NAME }))).toBe(NAME);
    expect(geminiVideos.readSubmit('{}')).toMatchObject({ status: 502 });
  });

  it("reads the Gemini API's operation", () => {
    const done = (response: unknown) => JSON.stringify({ name: NAME, done: true, response });
    expect(geminiVideos.readPoll(JSON.stringify({ name: NAME }))).toEqual({ state: 'running' });
    const uri = 'https://generativelanguage.googleapis.com/v1beta/files/x1:download?alt=media';
    expect(geminiVideos.readPoll(done({ generateVideoResponse: { generatedSamples: [{ video: { uri } }] } }))).toEqual({
      state: 'completed',
      output: { kind: 'uri', uri },
    });
    expect(
      geminiVideos.readPoll(done({ generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['a child'] } })),
    ).toEqual({
      state: 'failed',
      code: 'moderation_blocked',
      message: "Google's safety filters held the video back: a child",
    });
    expect(geminiVideos.readPoll(JSON.stringify({ name: NAME, done: true, error: { code: 3, message: 'bad image' } }))).toEqual({
      state: 'failed',
      code: 'video_failed',
      message: 'bad image',
    });
    expect(geminiVideos.readPoll('<html>')).toEqual({ state: 'unreadable' });
  });

  it("downloads only from Google's file host or the channel's own origin", () => {
    const google = 'https://generativelanguage.googleapis.com/v1beta/files/x1:download?alt=media';
    expect(geminiVideos.download!(gemini, google)).toEqual({ url: google, method: 'GET', headers: { 'x-goog-api-key': 'AIza-key' } });
    const proxied = { ...gemini, baseUrl: 'http://127.0.0.1:9000' };
    expect(geminiVideos.download!(proxied, 'http://127.0.0.1:9000/v1beta/files/x1:download')).toMatchObject({ method: 'GET' });
    expect(geminiVideos.download!(gemini, 'https://evil.example/steal')).toMatchObject({ status: 502, retryable: false });
  });

  it('asks Vertex AI in the channel’s region and project, and polls with fetchPredictOperation', () => {
    const submit = vertexVideos.submit(vertex, 'veo-3.0-fast-generate-001', { prompt: 'rain', seconds: 8, size: '720x1280' }, 'ya29.token');
    const model =
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/a-project/locations/europe-west4/publishers/google/models/veo-3.0-fast-generate-001';
    expect(submit).toMatchObject({ url: `${model}:predictLongRunning`, method: 'POST', headers: { authorization: 'Bearer ya29.token' } });
    expect(vertexVideos.poll(vertex, VERTEX_NAME, 'ya29.token')).toMatchObject({
      url: `${model}:fetchPredictOperation`,
      body: JSON.stringify({ operationName: VERTEX_NAME }),
    });
    const proxied = vertexVideos.poll({ ...vertex, baseUrl: 'http://127.0.0.1:9000' }, VERTEX_NAME, 'ya29.token');
    expect(proxied).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:9000\/v1\/projects\/a-project\//) });
    expect(vertexVideos.submit(vertex, 'veo-3.0-fast-generate-001', { prompt: 'rain', seconds: 8, size: '720x1280' })).toMatchObject({
      status: 500,
    });
  });

  it("reads Vertex AI's operation: the bytes, a Cloud Storage object, or a filtered result", () => {
    const done = (response: unknown) => JSON.stringify({ name: VERTEX_NAME, done: true, response });
    const bytes = Buffer.from('an mp4');
    expect(vertexVideos.readPoll(done({ videos: [{ bytesBase64Encoded: bytes.toString('base64'), mimeType: 'video/mp4' }] }))).toEqual({
      state: 'completed',
      output: { kind: 'bytes', bytes, mimeType: 'video/mp4' },
    });
    expect(vertexVideos.readPoll(done({ videos: [{ gcsUri: 'gs://b/o.mp4', mimeType: 'video/mp4' }] }))).toEqual({
      state: 'completed',
      output: { kind: 'gcs', uri: 'gs://b/o.mp4' },
    });
    expect(vertexVideos.readPoll(done({ raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['58061214'], videos: [] }))).toMatchObject({
      state: 'failed',
      code: 'moderation_blocked',
    });
    expect(vertexVideos.readPoll(JSON.stringify({ name: VERTEX_NAME, done: false }))).toEqual({ state: 'running' });
  });
});
