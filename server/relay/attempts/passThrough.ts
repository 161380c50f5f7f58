// The zero-parse path: the client's bytes to a channel whose adaptor speaks
// the client's protocol (OpenAI, Azure and every OpenAI-compatible row for an
// OpenAI client; Anthropic for a Messages client...), only the target and
// the key's headers from the adaptor (made once per channel and route, and
// kept), and the answer's bytes back. A 200 whose body is an error object is
// the adaptor's to read (its failureInOkBody hook).
import { isUpstreamFailure, type AdaptorCall, type Operation, type UpstreamAdaptor, type UpstreamFailure } from '../../protocols/types';
import type { RoutedChannel } from '../channelSelect';
import { callUpstream, poolFor, type UpstreamResponse } from '../upstream';
import { channelConfigOf, LazyJson, type Attempt, type AttemptDeps, type UpstreamAnswer, type UpstreamRequest } from '../attempt';

/** A passthrough target: where to send, and the key's headers merged into each headers object the routes pass. */
interface PassthroughTarget {
  origin: string;
  /** The path and query to ask the origin for. */
  path: string;
  /** The adaptor's headers other than content-type and accept (which the route's own win): the key. */
  auth: Record<string, string>;
  /** The route's headers with `auth`, per headers object (the routes pass shared constants; weak, so a one-off object is not kept). */
  merged: WeakMap<Record<string, string>, Record<string, string>>;
}

/**
 * Passthrough targets per channel object, by operation, upstream model, stream
 * and api-version (the only inputs a passthrough adaptor's target reads):
 * URL parsing and header building once per channel and route, not per
 * request. Weak: a reloaded channel (an edited key or base URL) is a new object.
 */
const passthroughTargets = new WeakMap<RoutedChannel, Map<string, PassthroughTarget | UpstreamFailure>>();
const MAX_TARGETS_PER_CHANNEL = 100;

function passthroughTarget(
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  stream: boolean,
  query: UpstreamRequest['query'],
): PassthroughTarget | UpstreamFailure {
  let byCall = passthroughTargets.get(channel);
  if (!byCall) {
    byCall = new Map();
    passthroughTargets.set(channel, byCall);
  }
  const version = query?.['api-version'];
  // an OpenAI-speaking adaptor's URL does not change with the stream, Gemini's does: each stream flag has its entry
  const asked = stream ? `${operation}\0stream` : operation;
  const key = version === undefined ? `${asked}\0${upstreamModel}` : `${asked}\0${upstreamModel}\0${version}`;
  let target = byCall.get(key);
  if (!target) {
    const config = channelConfigOf(channel);
    const call: AdaptorCall = { channel: config, operation, model: upstreamModel, stream, responseId: '', now: 0, query };
    const made = adaptor.target(config, call);
    if (isUpstreamFailure(made)) {
      target = made;
    } else {
      const url = new URL(made.url);
      const auth: Record<string, string> = {};
      for (const [name, value] of Object.entries(made.headers)) {
        const lower = name.toLowerCase();
        if (lower !== 'content-type' && lower !== 'accept') auth[lower] = value;
      }
      target = { origin: url.origin, path: url.pathname + url.search, auth, merged: new WeakMap() };
    }
    if (byCall.size >= MAX_TARGETS_PER_CHANNEL) byCall.clear();
    byCall.set(key, target);
  }
  return target;
}

function passthroughHeaders(target: PassthroughTarget, headers: Record<string, string>): Record<string, string> {
  let merged = target.merged.get(headers);
  if (!merged) {
    merged = { ...headers, ...target.auth };
    target.merged.set(headers, merged);
  }
  return merged;
}

/** The key an error object needs, as bytes (a string needle is converted on every search). */
const ERROR_KEY = Buffer.from('"error"');

/** The zero-parse path: the client's bytes to a channel that speaks its protocol, the answer's bytes back. */
export async function passThrough(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<Attempt> {
  const target = passthroughTarget(adaptor, channel, operation, upstreamModel, request.stream === true, request.query);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  let response: UpstreamResponse;
  try {
    response = await callUpstream(
      poolFor(target.origin),
      {
        path: target.path,
        headers: passthroughHeaders(target, request.headers),
        body: request.body(upstreamModel),
        requestId: request.requestId,
        traceHeaders: request.traceHeaders,
      },
      request.signal,
    );
  } catch (error) {
    return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
  }
  const { bytes } = response;
  let json: UpstreamAnswer['json'];
  if (response.status < 200 || response.status >= 300) {
    return { outcome: 'failed', failure: adaptor.failure(response.status, bytes!.toString('utf8')) };
  }
  if (bytes) {
    json = new LazyJson(bytes);
    // an error object needs the key "error": without those bytes the answer is not one, and
    // is parsed only when its value is asked for (once the client has it)
    const error = bytes.indexOf(ERROR_KEY) === -1 ? undefined : (json.value as { error?: unknown } | undefined)?.error;
    if (error && typeof error === 'object') {
      const text = bytes.toString('utf8');
      return {
        outcome: 'failed',
        failure: adaptor.failureInOkBody ? adaptor.failureInOkBody(text) : adaptor.failure(response.status, text),
      };
    }
  }
  return {
    outcome: 'answered',
    answer: { channel, upstreamModel, response, json, requestId: (request.requestId ??= deps.newRequestId()), log: deps.log },
  };
}
