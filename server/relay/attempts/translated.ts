// The translated path: the request encoded by the channel's adaptor for a
// vendor that does not speak the client's protocol, sent over HTTP or a
// WebSocket (the adaptor's transport), and its answer decoded into OpenAI's
// shape; a stream is read until it shows substance, so a failure at its start
// still counts as the channel's and the next channel may answer. translate.ts
// answers the client from that. One entry point, translated (which retries
// once with a fresh credential when a cached one was refused).
import { Readable } from 'node:stream';
import { chatRequestProblem, upstreamFailure, withArticle } from '../../protocols/shared';
import { configuredMaxOutputTokens } from '../../billing/prices';
import { catalogMaxOutputTokens } from '../../billing/catalog';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamDecoder,
  type EmbeddingRequest,
  type EmbeddingResponse,
  type Operation,
  type UpstreamAdaptor,
} from '../../protocols/types';
import type { RoutedChannel } from '../channelSelect';
import { credentialFor, forgetCredential } from '../credentials';
import { followStream } from '../followedStream';
import { AnswerBrokeOff, callUpstream, isUpstreamTimeout, poolFor, UpstreamResponse } from '../upstream';
import { openWebSocketCall, WebSocketRefused, WebSocketTimeout } from '../websocketUpstream';
import { channelConfigOf, ignoreError, readAll, type Attempt, type AttemptDeps, type TranslatedAnswer, type UpstreamRequest } from '../attempt';
import { rerankAttempt } from './rerank';

/** A stand-in for the `response` of a translated answer (its body is the translation's). */
const TRANSLATED_RESPONSE = new UpstreamResponse(200, [], 'application/json');

/** A chunk worth holding the stream for: once one comes, the answer has begun for real. */
const hasSubstance = (chunk: ChatChunk) =>
  chunk.usage != null || chunk.choices.some((choice) => choice.finish_reason || choice.delta.content || choice.delta.reasoning_content || choice.delta.tool_calls?.length);

/**
 * A strict vendor refuses an output limit above its model's (a Claude Code
 * request asks 32,000 of any model): the limit is lowered to the catalog's
 * for the model the channel serves. A model the catalog does not know keeps
 * the client's limit.
 */
function withinModelOutput(request: ChatRequest, catalog: Readonly<Record<string, number>>): ChatRequest {
  const most = configuredMaxOutputTokens(request.model, catalog);
  if (most === undefined) return request;
  if (typeof request.max_tokens === 'number' && request.max_tokens > most) request.max_tokens = most;
  if (typeof request.max_completion_tokens === 'number' && request.max_completion_tokens > most) request.max_completion_tokens = most;
  return request;
}

/**
 * The translated path, sent again once with a fresh credential when the
 * vendor answered 401 to a cached one (a Vertex AI access token revoked
 * before its time, its key rotated). A credential refused with a 401 is
 * dropped from the cache (translatedOnce), so no later call fails on it until
 * its renewal; as nothing reached the client yet, this call is sent once more
 * with a credential exchanged now. A fresh one refused too is the key's
 * failure, classified as any other, and is dropped as well.
 */
export async function translated(deps: AttemptDeps, adaptor: UpstreamAdaptor, channel: RoutedChannel, operation: Operation, upstreamModel: string, request: UpstreamRequest): Promise<Attempt> {
  const attempt = await translatedOnce(deps, adaptor, channel, operation, upstreamModel, request);
  if (attempt.outcome !== 'failed' || attempt.staleCredential === undefined) return attempt;
  if (request.signal.aborted) return { outcome: 'aborted' };
  deps.log.info({ requestId: request.requestId, channelId: channel.id, status: attempt.failure.status }, 'the upstream refused a cached credential: trying once more with a fresh one');
  return translatedOnce(deps, adaptor, channel, operation, upstreamModel, request);
}

/** The built-in tools of a chat-form request this channel's vendor has nothing like (web search where it has no search), or undefined. */
export function droppedToolsOf(adaptor: UpstreamAdaptor, upstreamModel: string, json: Record<string, unknown>): string[] | undefined {
  return json.web_search_options !== undefined && json.web_search_options !== null && adaptor.webSearch?.(upstreamModel) !== true ? ['web_search'] : undefined;
}

/** The translated path: the request encoded by the channel's adaptor, its answer decoded into OpenAI's shape. */
async function translatedOnce(deps: AttemptDeps, adaptor: UpstreamAdaptor, channel: RoutedChannel, operation: Operation, upstreamModel: string, request: UpstreamRequest): Promise<Attempt> {
  const config = channelConfigOf(channel);
  const json = request.json!;
  const clientStreams = operation === 'chat' && json.stream === true;
  // a request an adaptor cannot read is the client's fault, whichever channel: a 400 before anything is sent
  const problem = operation === 'chat' ? chatRequestProblem(json) : undefined;
  if (problem) return { outcome: 'failed', failure: upstreamFailure(400, problem.message, { type: 'invalid_request_error', code: 'invalid_request_error', retryable: false }) };
  let credential = credentialFor(adaptor, config);
  // a credential from the cache, which the vendor may have revoked since (one exchanged now is not retried)
  const cachedCredential = typeof credential === 'string' ? credential : undefined;
  if (credential instanceof Promise) credential = await credential;
  const used = typeof credential === 'string' ? credential : undefined;
  /** A refusal of the call. A 401 drops the credential from the cache; when it came from there, translated() retries once. */
  const refused = (status: number, body: string): Attempt => {
    if (status === 401 && used !== undefined) forgetCredential(adaptor, config, used);
    return { outcome: 'failed', failure: adaptor.failure(status, body), staleCredential: status === 401 ? cachedCredential : undefined };
  };
  if (isUpstreamFailure(credential)) return { outcome: 'failed', failure: credential };
  if (request.signal.aborted) return { outcome: 'aborted' };
  const dropped = operation === 'chat' ? droppedToolsOf(adaptor, upstreamModel, json) : undefined;
  const call: AdaptorCall = {
    channel: config,
    droppedTools: dropped,
    operation,
    model: upstreamModel,
    stream: clientStreams,
    responseId: `chatcmpl-${(request.requestId ??= deps.newRequestId()).replace(/[^A-Za-z0-9]/g, '')}`,
    now: Math.floor(Date.now() / 1000),
    credential,
    query: request.query,
    modelMaxOutputTokens: catalogMaxOutputTokens(upstreamModel),
  };
  let target = adaptor.target(config, call);
  if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  let body: string;
  try {
    if (operation === 'chat') {
      const chat: ChatRequest = { ...(json as unknown as ChatRequest), model: upstreamModel };
      // a built-in tool this vendor has nothing like goes no further (the answer says so: call.droppedTools)
      if (dropped) delete chat.web_search_options;
      body = adaptor.encodeChat(withinModelOutput(chat, deps.options.json('ModelMaxOutputTokens')), call);
    } else if (operation === 'rerank') {
      if (!adaptor.encodeRerank || !request.rerank) return { outcome: 'failed', failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot encode rerank`, { retryable: true }) };
      body = adaptor.encodeRerank({ ...request.rerank, model: upstreamModel }, call);
    } else if (adaptor.encodeEmbeddings) {
      body = adaptor.encodeEmbeddings({ ...(json as unknown as EmbeddingRequest), model: upstreamModel }, call);
    } else {
      return { outcome: 'failed', failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot encode ${operation}`, { retryable: true }) };
    }
  } catch (error) {
    // an input the vendor's format cannot carry (token arrays to Gemini embeddings...): another channel may take it
    return {
      outcome: 'failed',
      failure: upstreamFailure(400, `this request cannot be sent to ${withArticle(adaptor.protocol)} channel: ${(error as Error).message}`, {
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        retryable: true,
      }),
    };
  }
  if (adaptor.sign) {
    target = await adaptor.sign(target, body, config, call);
    if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  }
  const answered = (translatedAnswer: TranslatedAnswer): Attempt => ({
    outcome: 'answered',
    answer: { channel, upstreamModel, response: TRANSLATED_RESPONSE, requestId: request.requestId!, log: deps.log, translated: translatedAnswer },
  });

  let source: Readable;
  /** The decoder of a followed stream (followedStream.ts), which knows when its usage has come. */
  let followedDecoder: ChatStreamDecoder | undefined;
  if (adaptor.transport === 'websocket') {
    try {
      source = await openWebSocketCall(target, body, request.signal, request.requestId);
    } catch (error) {
      if (request.signal.aborted) return { outcome: 'aborted' };
      if (error instanceof WebSocketRefused) return refused(error.status, error.body);
      return { outcome: 'unanswered', error };
    }
  } else {
    const url = new URL(target.url);
    let response: UpstreamResponse;
    try {
      response = await callUpstream(poolFor(url.origin), { path: url.pathname + url.search, headers: target.headers, body, requestId: request.requestId }, request.signal);
    } catch (error) {
      return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error };
    }
    if (response.status < 200 || response.status >= 300) return refused(response.status, response.bytes!.toString('utf8'));
    let following: Readable | undefined;
    if (clientStreams && adaptor.followStream) {
      // the answer only says where the stream is (Replicate's prediction): follow it (followedStream.ts)
      const followed = await followStream(adaptor, config, call, response, request.signal, request.requestId, deps.log);
      if ('failure' in followed) return { outcome: 'failed', failure: followed.failure };
      if ('aborted' in followed) return { outcome: 'aborted' };
      if ('error' in followed) return { outcome: 'unanswered', error: followed.error };
      followedDecoder = followed.decoder;
      following = followed.source;
    } else if (response.bytes && !(clientStreams && !response.contentType.includes('json'))) {
      // a whole answer (an error in a 200 included), even to a streamed call: some vendors answer a refusal as JSON
      const text = response.bytes.toString('utf8');
      if (operation === 'rerank') return rerankAttempt(adaptor, text, call, answered);
      if (operation === 'embeddings') {
        const decoded = adaptor.decodeEmbeddings!(text, call);
        return isUpstreamFailure(decoded) ? { outcome: 'failed', failure: decoded } : answered({ adaptor, call, embeddings: decoded });
      }
      if (clientStreams) {
        const decoder = adaptor.decodeChatStream(call);
        const held = [...decoder.push(response.bytes), ...decoder.end()];
        const failure = decoder.failure();
        if (failure) return { outcome: 'failed', failure };
        if (held.length > 0) return answered({ adaptor, call, stream: { decoder, held, source: emptySource(), ended: true } });
      }
      const decoded = adaptor.decodeChat(text, call);
      return isUpstreamFailure(decoded) ? { outcome: 'failed', failure: decoded } : answered({ adaptor, call, chat: decoded });
    }
    if (following) source = following;
    else if (!response.stream) return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream answered with an empty body') };
    else source = response.stream;
    if (!clientStreams) {
      // a whole answer that came as something else than JSON (text/plain): read it, then decode it
      const read = await readAll(source).then(
        (whole) => whole,
        (error: Error) => error,
      );
      if (read instanceof Error) return request.signal.aborted ? { outcome: 'aborted' } : { outcome: 'unanswered', error: new AnswerBrokeOff(read.message, isUpstreamTimeout(read)) };
      const text = read.toString('utf8');
      if (operation === 'rerank') return rerankAttempt(adaptor, text, call, answered);
      const decoded = operation === 'embeddings' ? adaptor.decodeEmbeddings!(text, call) : adaptor.decodeChat(text, call);
      if (isUpstreamFailure(decoded)) return { outcome: 'failed', failure: decoded };
      return answered(operation === 'embeddings' ? { adaptor, call, embeddings: decoded as EmbeddingResponse } : { adaptor, call, chat: decoded as ChatResponse });
    }
  }
  // a stream (or a WebSocket's frames): read until it shows substance, fails, or ends; a non-streamed
  // call to a stream-only vendor reads it to the end (translate.ts folds it into one answer)
  // an error after the readers let go (the client left, the call was aborted) must not go unhandled
  source.on('error', ignoreError);
  const decoder = followedDecoder ?? adaptor.decodeChatStream(call);
  const early = await readStreamStart(source, decoder, !clientStreams);
  if (early.error) {
    source.destroy();
    return request.signal.aborted
      ? { outcome: 'aborted' }
      : {
          outcome: 'unanswered',
          error: early.error instanceof AnswerBrokeOff || early.error instanceof WebSocketTimeout ? early.error : new AnswerBrokeOff(early.error.message, isUpstreamTimeout(early.error)),
        };
  }
  const failure = decoder.failure();
  if (failure) {
    source.destroy();
    return { outcome: 'failed', failure };
  }
  if (early.ended && early.held.length === 0) {
    return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream stream ended without an answer') };
  }
  return answered({ adaptor, call, stream: { decoder, held: early.held, source, ended: early.ended } });
}

/** The source of a stream that came whole: nothing more to read. */
const emptySource = () => Readable.from([]);

/**
 * Reads a stream into its decoder until a chunk of substance, a failure the
 * vendor reported, or the end (to the end when `whole`). Leaves it paused.
 */
function readStreamStart(source: Readable, decoder: ChatStreamDecoder, whole: boolean): Promise<{ held: ChatChunk[]; ended: boolean; error?: Error }> {
  return new Promise((resolve) => {
    const held: ChatChunk[] = [];
    const finish = (ended: boolean, error?: Error) => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      if (!ended) source.pause();
      resolve({ held, ended, error });
    };
    const onData = (piece: Buffer | string) => {
      const chunks = decoder.push(piece);
      held.push(...chunks);
      if (decoder.failure()) return finish(false);
      if (decoder.done()) {
        // the vendor's own end of answer: whatever follows (a socket's close) adds nothing
        held.push(...decoder.end());
        source.destroy();
        return finish(true);
      }
      if (!whole && chunks.some(hasSubstance)) finish(false);
    };
    const onEnd = () => {
      held.push(...decoder.end());
      finish(true);
    };
    const onError = (error: Error) => finish(true, error);
    source.on('data', onData).once('end', onEnd).once('error', onError);
  });
}
