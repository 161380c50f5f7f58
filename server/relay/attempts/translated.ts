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
  type ChatStreamDecoder,
  type EmbeddingRequest,
  type Operation,
  type UpstreamAdaptor,
} from '../../protocols/types';
import type { RoutedChannel } from '../channelSelect';
import { credentialFor, forgetCredential } from '../credentials';
import { AnswerBrokeOff, isUpstreamTimeout, UpstreamResponse } from '../upstream';
import { WebSocketTimeout } from '../websocketUpstream';
import { channelConfigOf, ignoreError, type Attempt, type AttemptDeps, type UpstreamRequest } from '../attempt';
import { viaHttp } from './translatedHttp';
import type { PreparedCall } from './translatedCall';
import { viaWebSocket } from './translatedWebSocket';

/** A stand-in for the `response` of a translated answer (its body is the translation's). */
const TRANSLATED_RESPONSE = new UpstreamResponse(200, [], 'application/json');

/** A chunk worth holding the stream for: once one comes, the answer has begun for real. */
const hasSubstance = (chunk: ChatChunk) =>
  chunk.usage != null ||
  chunk.choices.some(
    (choice) => choice.finish_reason || choice.delta.content || choice.delta.reasoning_content || choice.delta.tool_calls?.length,
  );

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
export async function translated(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<Attempt> {
  const attempt = await translatedOnce(deps, adaptor, channel, operation, upstreamModel, request);
  if (attempt.outcome !== 'failed' || attempt.staleCredential === undefined) return attempt;
  if (request.signal.aborted) return { outcome: 'aborted' };
  deps.log.info(
    { requestId: request.requestId, channelId: channel.id, status: attempt.failure.status },
    'the upstream refused a cached credential: trying once more with a fresh one',
  );
  return translatedOnce(deps, adaptor, channel, operation, upstreamModel, request);
}

/** The built-in tools of a chat-form request this channel's vendor has nothing like (web search where it has no search), or undefined. */
export function droppedToolsOf(adaptor: UpstreamAdaptor, upstreamModel: string, json: Record<string, unknown>): string[] | undefined {
  return json.web_search_options !== undefined && json.web_search_options !== null && adaptor.webSearch?.(upstreamModel) !== true
    ? ['web_search']
    : undefined;
}

/** The translated path: the request encoded by the channel's adaptor, sent over its transport, its answer decoded into OpenAI's shape. */
async function translatedOnce(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<Attempt> {
  const prepared = await prepareCall(deps, adaptor, channel, operation, upstreamModel, request);
  if ('outcome' in prepared) return prepared;
  const sent = adaptor.transport === 'websocket' ? await viaWebSocket(prepared) : await viaHttp(prepared);
  if ('outcome' in sent) return sent;
  return streamStart(prepared, sent.source, sent.decoder ?? adaptor.decodeChatStream(prepared.call));
}

/** The credential, the adaptor's call and target, the body encoded and signed; or the attempt that ends it before anything is sent. */
async function prepareCall(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  channel: RoutedChannel,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
): Promise<PreparedCall | Attempt> {
  const config = channelConfigOf(channel);
  const json = request.json!;
  // a request an adaptor cannot read is the client's fault, whichever channel: a 400 before anything is sent
  const problem = operation === 'chat' ? chatRequestProblem(json) : undefined;
  if (problem)
    return {
      outcome: 'failed',
      failure: upstreamFailure(400, problem.message, { type: 'invalid_request_error', code: 'invalid_request_error', retryable: false }),
    };
  let credential = credentialFor(adaptor, config);
  // a credential from the cache, which the vendor may have revoked since (one exchanged now is not retried)
  const cachedCredential = typeof credential === 'string' ? credential : undefined;
  if (credential instanceof Promise) credential = await credential;
  const used = typeof credential === 'string' ? credential : undefined;
  if (isUpstreamFailure(credential)) return { outcome: 'failed', failure: credential };
  if (request.signal.aborted) return { outcome: 'aborted' };
  const dropped = operation === 'chat' ? droppedToolsOf(adaptor, upstreamModel, json) : undefined;
  const clientStreams = operation === 'chat' && json.stream === true;
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
  const body = encodeBody(deps, adaptor, operation, upstreamModel, request, call);
  if (typeof body !== 'string') return body;
  if (adaptor.sign) {
    const signed = adaptor.sign(target, body, config, call);
    target = signed instanceof Promise ? await signed : signed;
    if (isUpstreamFailure(target)) return { outcome: 'failed', failure: target };
  }
  const requestId = request.requestId;
  return {
    adaptor,
    operation,
    config,
    call,
    target,
    body,
    clientStreams,
    request,
    deps,
    refused(status, text) {
      if (status === 401 && used !== undefined) forgetCredential(adaptor, config, used);
      return { outcome: 'failed', failure: adaptor.failure(status, text), staleCredential: status === 401 ? cachedCredential : undefined };
    },
    answered: (translatedAnswer) => ({
      outcome: 'answered',
      answer: { channel, upstreamModel, response: TRANSLATED_RESPONSE, requestId, log: deps.log, translated: translatedAnswer },
    }),
  };
}

/** The request in the vendor's format; a failure when the adaptor cannot carry it (another channel may). */
function encodeBody(
  deps: AttemptDeps,
  adaptor: UpstreamAdaptor,
  operation: Operation,
  upstreamModel: string,
  request: UpstreamRequest,
  call: AdaptorCall,
): string | Attempt {
  const json = request.json!;
  try {
    if (operation === 'chat') {
      const chat: ChatRequest = { ...(json as unknown as ChatRequest), model: upstreamModel };
      // a built-in tool this vendor has nothing like goes no further (the answer says so: call.droppedTools)
      if (call.droppedTools) delete chat.web_search_options;
      return adaptor.encodeChat(withinModelOutput(chat, deps.options.json('ModelMaxOutputTokens')), call);
    }
    if (operation === 'rerank') {
      if (!adaptor.encodeRerank || !request.rerank)
        return {
          outcome: 'failed',
          failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot encode rerank`, { retryable: true }),
        };
      return adaptor.encodeRerank({ ...request.rerank, model: upstreamModel }, call);
    }
    if (adaptor.encodeEmbeddings) return adaptor.encodeEmbeddings({ ...(json as unknown as EmbeddingRequest), model: upstreamModel }, call);
    return {
      outcome: 'failed',
      failure: upstreamFailure(501, `the ${adaptor.protocol} adaptor cannot encode ${operation}`, { retryable: true }),
    };
  } catch (error) {
    // an input the vendor's format cannot carry (token arrays to Gemini embeddings...): another channel may take it
    return {
      outcome: 'failed',
      failure: upstreamFailure(
        400,
        `this request cannot be sent to ${withArticle(adaptor.protocol)} channel: ${(error as Error).message}`,
        {
          type: 'invalid_request_error',
          code: 'invalid_request_error',
          retryable: true,
        },
      ),
    };
  }
}

/**
 * A stream (or a WebSocket's frames): read until it shows substance, fails,
 * or ends; a non-streamed call to a stream-only vendor reads it to the end
 * (translate.ts folds it into one answer).
 */
async function streamStart(prepared: PreparedCall, source: Readable, decoder: ChatStreamDecoder): Promise<Attempt> {
  const { adaptor, call, request } = prepared;
  source.on('error', ignoreError);
  const early = await readStreamStart(source, decoder, !prepared.clientStreams);
  if (early.error) {
    source.destroy();
    if (request.signal.aborted) return { outcome: 'aborted' };
    const broke = early.error instanceof AnswerBrokeOff || early.error instanceof WebSocketTimeout;
    return { outcome: 'unanswered', error: broke ? early.error : new AnswerBrokeOff(early.error.message, isUpstreamTimeout(early.error)) };
  }
  const failure = decoder.failure();
  if (failure) {
    source.destroy();
    return { outcome: 'failed', failure };
  }
  if (early.ended && early.held.length === 0)
    return { outcome: 'failed', failure: upstreamFailure(502, 'the upstream stream ended without an answer') };
  return prepared.answered({ adaptor, call, stream: { decoder, held: early.held, source, ended: early.ended } });
}

/**
 * Reads a stream into its decoder until a chunk of substance, a failure the
 * vendor reported, or the end (to the end when `whole`). Leaves it paused.
 */
function readStreamStart(
  source: Readable,
  decoder: ChatStreamDecoder,
  whole: boolean,
): Promise<{ held: ChatChunk[]; ended: boolean; error?: Error }> {
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
