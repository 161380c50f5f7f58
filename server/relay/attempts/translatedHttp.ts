// The translated path over HTTP: the encoded request to the vendor's URL; a
// refusal, a whole answer (decoded at once, an error in a 200 included), an
// answer that only says where its stream is (followed: followedStream.ts), or
// a stream for translated.ts to read. One entry point, viaHttp.
import { upstreamFailure } from '../../protocols/shared';
import type { ChatStreamDecoder } from '../../protocols/types';
import { followStream } from '../followedStream';
import { AnswerBrokeOff, callUpstream, isUpstreamTimeout, poolFor, type UpstreamResponse } from '../upstream';
import { readAll, type Attempt } from '../attempt';
import { decodeWhole, emptySource, type PreparedCall, type TransportResult } from './translatedCall';

export async function viaHttp(prepared: PreparedCall): Promise<TransportResult> {
  const { adaptor, config, call, target, body, request, deps, clientStreams } = prepared;
  const url = new URL(target.url);
  let response: UpstreamResponse;
  try {
    response = await callUpstream(
      poolFor(url.origin),
      {
        path: url.pathname + url.search,
        headers: target.headers,
        body,
        requestId: request.requestId,
        traceHeaders: request.traceHeaders,
      },
      request.signal,
    );
  } catch (error) {
    return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
  }
  if (response.status < 200 || response.status >= 300) return prepared.refused(response.status, response.bytes!.toString('utf8'));
  if (clientStreams && adaptor.followStream) {
    // the answer only says where the stream is (Replicate's prediction): follow it (followedStream.ts)
    const followed = await followStream(adaptor, config, call, response, request.signal, request.requestId, deps.log);
    if ('failure' in followed) return { outcome: 'failed', failure: followed.failure };
    if ('aborted' in followed) return { outcome: 'aborted' };
    if ('error' in followed) return { outcome: 'unanswered', error: followed.error };
    return { source: followed.source, decoder: followed.decoder };
  }
  // a whole answer (an error in a 200 included), even to a streamed call: some vendors answer a refusal as JSON
  if (response.bytes && !(clientStreams && !response.contentType.includes('json'))) return wholeAnswer(prepared, response.bytes);
  if (!response.stream) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered with an empty body') };
  if (clientStreams) return { source: response.stream };
  // a whole answer that came as something else than JSON (text/plain): read it, then decode it
  const read = await readAll(response.stream).then(
    (whole) => whole,
    (error: Error) => error,
  );
  if (read instanceof Error)
    return request.signal.aborted
      ? { outcome: 'aborted' }
      : { outcome: 'unanswered', error: new AnswerBrokeOff(read.message, isUpstreamTimeout(read)) };
  return decodeWhole(prepared, read.toString('utf8'));
}

/** A whole answer: decoded for the operation, or, to a streamed call, read as the stream it holds. */
function wholeAnswer(prepared: PreparedCall, bytes: Buffer): Attempt {
  const { adaptor, call, clientStreams } = prepared;
  // a streamed call (chat's alone) answered whole: the stream it holds, when it holds one
  if (clientStreams) {
    const decoder: ChatStreamDecoder = adaptor.decodeChatStream(call);
    const held = [...decoder.push(bytes), ...decoder.end()];
    const failure = decoder.failure();
    if (failure) return { outcome: 'failed', failure };
    if (held.length > 0) return prepared.answered({ adaptor, call, stream: { decoder, held, source: emptySource(), ended: true } });
  }
  return decodeWhole(prepared, bytes.toString('utf8'));
}
