// The native path: a vendor that serves the client's own protocol for a model
// at a URL of its own (Claude on Bedrock for a Messages client). One entry
// point, nativeCall.
import { pipeline, Transform, type Readable } from 'node:stream';
import { upstreamFailure } from '../../protocols/shared';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type NativePath,
  type NativeStreamReframer,
  type Operation,
  type UpstreamAdaptor,
} from '../../protocols/types';
import type { RoutedChannel } from '../channelSelect';
import { AnswerBrokeOff, callUpstream, isUpstreamTimeout, poolFor, UpstreamResponse } from '../upstream';
import {
  channelConfigOf,
  ignoreError,
  LazyJson,
  type Attempt,
  type AttemptDeps,
  type UpstreamAnswer,
  type UpstreamRequest,
} from '../attempt';

/**
 * The native path: the client's request, as the adaptor's native path has it
 * (a few fields changed), to the vendor's URL for it, signed; a whole answer
 * passed back as it came (as `passThrough` does), a stream re-framed into the
 * client's wire as it arrives, so the route passes and bills it as it does
 * the answer of a channel that speaks the client's protocol. The stream is
 * read until its first event, so a failure at its start is the channel's.
 */
export async function nativeCall(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  path: NativePath,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<Attempt> {
  const config = channelConfigOf(channel);
  const requestId = (request.requestId ??= deps.newRequestId());
  const call: AdaptorCall = {
    channel: config,
    operation,
    model: upstreamModel,
    stream: request.stream === true,
    responseId: '',
    now: Math.floor(Date.now() / 1000),
    query: request.query,
  };
  let target = path.target(config, call);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  let body: string;
  try {
    body = path.encode(request.body(upstreamModel), request.headers, call);
  } catch (error) {
    return {
      outcome: 'failed',
      failure: upstreamFailure(400, (error as Error).message, {
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        retryable: false,
      }),
    };
  }
  if (adaptor.sign) {
    const signed = adaptor.sign(target, body, config, call);
    target = signed instanceof Promise ? await signed : signed;
    if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  }
  const url = new URL(target.url);
  let response: UpstreamResponse;
  try {
    response = await callUpstream(
      poolFor(url.origin),
      { path: url.pathname + url.search, headers: target.headers, body, requestId, traceHeaders: request.traceHeaders },
      request.signal,
    );
  } catch (error) {
    return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
  }
  if (response.status < 200 || response.status >= 300)
    return { outcome: 'failed', failure: adaptor.failure(response.status, response.bytes!.toString('utf8')) };
  const answered = (answer: UpstreamResponse, json?: UpstreamAnswer['json']): Attempt => ({
    outcome: 'answered',
    answer: { channel, upstreamModel, response: answer, json, requestId, log: deps.log },
  });
  if (response.bytes) return answered(response, new LazyJson(response.bytes));
  if (!response.stream) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered with an empty body') };
  const source = response.stream;
  source.on('error', ignoreError);
  if (!call.stream) {
    source.destroy();
    return {
      outcome: 'failed',
      failure: upstreamFailure(502, `the upstream answered a whole call with ${response.contentType || 'no content type'}`, {
        retryable: true,
      }),
    };
  }
  const reframed = await reframedStream(source, path.reframe(call), request.signal);
  return reframed instanceof UpstreamResponse ? answered(reframed) : reframed;
}

/**
 * A native stream re-framed into the client's wire, once its first event came
 * (read ahead, so a failure at its start is the channel's); or the attempt's
 * end when it failed, broke off or ended first.
 */
async function reframedStream(
  source: Readable,
  reframer: NativeStreamReframer,
  signal: UpstreamRequest['signal'],
): Promise<UpstreamResponse | Attempt> {
  const early = await readNativeStart(source, reframer);
  if (early.error) {
    source.destroy();
    if (signal.aborted) return { outcome: 'aborted' };
    return {
      outcome: 'unanswered',
      error: early.error instanceof AnswerBrokeOff ? early.error : new AnswerBrokeOff(early.error.message, isUpstreamTimeout(early.error)),
    };
  }
  const failure = reframer.failure();
  if (failure && !reframer.begun()) {
    source.destroy();
    return { outcome: 'failed', failure };
  }
  if (early.ended && !reframer.begun())
    return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream stream ended without an answer', { retryable: true }) };
  const reframed = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, reframer.push(chunk));
    },
    flush(done) {
      try {
        done(null, reframer.end());
      } catch (error) {
        done(error as Error);
      }
    },
  });
  if (early.text) reframed.push(early.text);
  if (early.ended) reframed.end();
  // an upstream that breaks off errors the re-framed stream (the route then bills by its count); a client
  // that leaves destroys it, and the upstream call with it
  else pipeline(source, reframed, ignoreError);
  const answer = new UpstreamResponse(200, [], 'text/event-stream');
  answer.stream = reframed;
  return answer;
}

/** Reads a native stream until its first event for the client, a failure, or the end; leaves it paused. */
function readNativeStart(source: Readable, reframer: NativeStreamReframer): Promise<{ text: string; ended: boolean; error?: Error }> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (ended: boolean, error?: Error) => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      if (!ended) source.pause();
      resolve({ text, ended, error });
    };
    const onData = (piece: Buffer) => {
      text += reframer.push(piece);
      if (reframer.failure() || reframer.begun()) finish(false);
    };
    const onEnd = () => {
      try {
        text += reframer.end();
        finish(true);
      } catch (error) {
        finish(true, error as Error);
      }
    };
    const onError = (error: Error) => finish(true, error);
    source.on('data', onData).once('end', onEnd).once('error', onError);
  });
}
