// A video asked of a vendor whose Videos API is not OpenAI's (Veo, through the
// Gemini API or Vertex AI): the client's create (JSON, or multipart with an
// input_reference image) read into the relay's VideoCreate, encoded by the
// channel's video adaptor (protocols/upstream/videoAdaptors.ts), sent, and its
// operation's name answered as the video's id in OpenAI's shape, so the route
// records it as the task's upstream_id as it does Sora's. One entry point, videoSubmit.
import { upstreamFailure } from '../../protocols/shared';
import { isUpstreamFailure, type Operation, type UpstreamAdaptor } from '../../protocols/types';
import { videoAdaptorFor, type VideoAdaptor, type VideoCreate } from '../../protocols/upstream/videoAdaptors';
import type { RoutedChannel } from '../channelSelect';
import { credentialFor, forgetCredential } from '../credentials';
import { findMultipartField, findMultipartFiles, multipartBoundary } from '../multipart';
import { UpstreamResponse } from '../upstream';
import { channelConfigOf, LazyJson, type Attempt, type AttemptDeps, type UpstreamRequest } from '../attempt';

/** OpenAI's defaults for a multipart create that leaves them out (routes/v1/videos.ts writes them into a JSON one). */
const DEFAULT_SECONDS = 4;
const DEFAULT_SIZE = '720x1280';
const SUBMIT_TIMEOUT_MS = 60_000;

/** An image's type from its first bytes (a multipart part's own header is not kept by the relay's reader). */
export function imageTypeOf(bytes: Buffer): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return 'image/png';
}

/** The create the client sent, as the video adaptors take it. */
export function videoCreateOf(body: string | Buffer, contentType: string | undefined): VideoCreate {
  if (typeof body === 'string') {
    // the route wrote seconds and size into a JSON body, with OpenAI's defaults for those left out
    const json = JSON.parse(body) as { prompt?: unknown; seconds?: unknown; size?: unknown };
    return {
      prompt: typeof json.prompt === 'string' ? json.prompt : '',
      seconds: Number(json.seconds ?? DEFAULT_SECONDS),
      size: typeof json.size === 'string' ? json.size : DEFAULT_SIZE,
    };
  }
  const boundary = multipartBoundary(contentType) ?? '';
  const field = (name: string) => findMultipartField(body, boundary, name)?.value;
  const image = findMultipartFiles(body, boundary, 'input_reference')[0];
  return {
    prompt: field('prompt') ?? '',
    seconds: Number(field('seconds') ?? DEFAULT_SECONDS),
    size: field('size') ?? DEFAULT_SIZE,
    ...(image?.length ? { image: { bytes: Buffer.from(image), mimeType: imageTypeOf(image) } } : {}),
  };
}

/** How a video is asked of the channel when its vendor has a video adaptor (Veo); undefined for OpenAI's Videos API and any other operation. */
export function videoWay(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor | undefined,
  operation: Operation | undefined,
  channel: RoutedChannel,
  upstreamModel: string,
  request: UpstreamRequest,
): { call: () => Promise<Attempt> } | undefined {
  const video = operation === 'videos' && adaptor ? videoAdaptorFor(adaptor.protocol) : undefined;
  return adaptor && video ? { call: () => videoSubmit(deps, adaptor, video, channel, upstreamModel, request) } : undefined;
}

/** The video asked of the channel: its operation's name as a queued video's id, or the vendor's refusal. */
async function videoSubmit(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  video: VideoAdaptor,
  channel: RoutedChannel,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<Attempt> {
  const config = channelConfigOf(channel);
  let credential = credentialFor(adaptor, config);
  if (credential instanceof Promise) credential = await credential;
  if (isUpstreamFailure(credential)) return { outcome: 'failed', failure: credential };
  let create: VideoCreate;
  try {
    create = videoCreateOf(request.body(upstreamModel), request.headers['content-type']);
  } catch {
    // the route checked the body: only a bug lands here
    return { outcome: 'failed', failure: upstreamFailure(400, 'the video request could not be read', { retryable: false }) };
  }
  const target = video.submit(config, upstreamModel, create, credential);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  if (request.signal.aborted) return { outcome: 'aborted' };
  const controller = new AbortController();
  request.signal.onAbort(() => controller.abort());
  let response: Response;
  let text: string;
  try {
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(SUBMIT_TIMEOUT_MS)]);
    response = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body, signal });
    text = await response.text();
  } catch (error) {
    return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
  } finally {
    request.signal.onAbort(undefined);
  }
  if (!response.ok) {
    // a token revoked before its time: the next call exchanges anew
    if (response.status === 401 && credential) forgetCredential(adaptor, config, credential);
    return { outcome: 'failed', failure: video.failure(response.status, text) };
  }
  const name = video.readSubmit(text);
  if (typeof name !== 'string') return { outcome: 'failed', failure: name };
  const answer = { id: name, object: 'video', status: 'queued', progress: 0 };
  return {
    outcome: 'answered',
    answer: {
      channel,
      upstreamModel,
      response: new UpstreamResponse(200, [], 'application/json'),
      json: new LazyJson(Buffer.from(JSON.stringify(answer))),
      requestId: (request.requestId ??= deps.newRequestId()),
      log: deps.log,
    },
  };
}
