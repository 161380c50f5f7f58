// What every way of calling a channel shares (the modules of attempts/ and
// dispatch.ts, which picks the channel and calls one of them): the request as
// a route hands it to dispatch, the answer it gets back, what one attempt on
// one channel came to, and the helpers each attempt needs (a channel's model
// mapping, its adaptor config, its secrets for the scrubbers, a JSON answer
// parsed on first use).
import type { FastifyBaseLogger } from 'fastify';
import type { Readable } from 'node:stream';
import type {
  AdaptorCall,
  ChannelConfig,
  ChatChunk,
  ChatResponse,
  ChatStreamDecoder,
  EmbeddingResponse,
  InboundProtocol,
  Operation,
  RerankRequest,
  RerankResponse,
  UpstreamAdaptor,
  UpstreamFailure,
} from '../protocols/types';
import type { RoutedChannel } from './channelSelect';
import { relayError, unreachableRelayError, type RelayError } from './errors';
import { scrubSecrets } from './scrub';
import type { OptionStore } from '../services/optionStore';
import { isUpstreamTimeout, joinChunks, type DisconnectSignal, type UpstreamResponse } from './upstream';

export interface UpstreamRequest {
  /** What is asked; a channel whose adaptor does not offer it is passed by. */
  operation?: Operation;
  /** The protocol the client speaks (OpenAI's when absent): a channel whose adaptor speaks it gets the client's bytes. */
  inbound?: InboundProtocol;
  /**
   * What a channel that speaks the client's protocol is asked for, when that
   * is not `operation`: a Responses request is `responses` there (its bytes
   * pass) and `chat` of every channel it is translated for.
   */
  passthroughOperation?: Operation;
  /**
   * The client's parsed JSON body: what a channel that does not speak the
   * client's protocol gets, translated by its adaptor (absent for multipart).
   */
  json?: Record<string, unknown>;
  /** A rerank as the route read it: what the channel's adaptor encodes (a rerank is never passed as bytes). */
  rerank?: RerankRequest;
  /** Why a channel that translates cannot take this request (what the chat form would drop); read only by such a channel. */
  untranslatable?: () => string | undefined;
  /** The client's query parameters that matter upstream (Azure and Spark read `api-version`). */
  query?: Readonly<Record<string, string>>;
  /** The model the client asked for: it routes, and channels may map it. */
  model: string;
  /** The client asked for a stream: a vendor that streams at another URL (Gemini's `:streamGenerateContent`) is targeted by it. */
  stream?: boolean;
  /** Upstream path, joined to the channel's base URL, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** The body for one channel, given the model name that channel expects. */
  body: (upstreamModel: string) => string | Buffer;
  signal: DisconnectSignal;
  /** Who the caller says it is (the body's `user`, or the operator's affinity header) when affinity is on: it keeps its channel for a while. */
  affinity?: string;
  /**
   * Names this request in the log and in the error a token holder reads, so an
   * admin can find the upstream's full answer. Made (cheaply) when absent and
   * something failed.
   */
  requestId?: string;
  /** The call's trace when tracing is on (server/telemetry): dispatch opens a span per attempt on it. */
  trace?: RelayTrace;
  /** The attempt's trace context (`traceparent`, `tracestate`) for the upstream call, set by `trace`: never without tracing. */
  traceHeaders?: Record<string, string>;
}

/**
 * A relayed call's trace (server/telemetry): `traceId` when it is sampled (the log keeps it); `attempt` opens one
 * attempt's span and sets the request's `traceHeaders` to its context; the span ends with what the attempt came to.
 */
export interface RelayTrace {
  readonly traceId: string | undefined;
  attempt(channel: RoutedChannel, model: string, request: UpstreamRequest): { end(result: Attempt, options: OptionStore): void };
}

export interface UpstreamAnswer {
  channel: RoutedChannel;
  upstreamModel: string;
  /**
   * The upstream's answer: status, content type, headers (parsed when first
   * read), and, for anything but JSON, its body still unread as `stream`.
   */
  response: UpstreamResponse;
  /** A JSON answer, read whole (it had to be, to see an error inside a 200); its value is parsed on first use. */
  json?: { bytes: Buffer; readonly value: unknown };
  /** The request's id, for the log line and the client's error when the answer breaks off. */
  requestId: string;
  log: FastifyBaseLogger;
  /**
   * Set when the channel's vendor does not speak the client's protocol: the
   * answer decoded into OpenAI's shape (translate.ts answers the client from
   * it). `response` is then only a stand-in (status 200, no body).
   */
  translated?: TranslatedAnswer;
}

/** A vendor's answer in OpenAI's shape: whole, or a stream still open. */
export interface TranslatedAnswer {
  adaptor: UpstreamAdaptor;
  call: AdaptorCall;
  chat?: ChatResponse;
  embeddings?: EmbeddingResponse;
  rerank?: RerankResponse;
  stream?: TranslatedStream;
}

export interface TranslatedStream {
  decoder: ChatStreamDecoder;
  /** Chunks decoded while dispatch looked for an early failure, not yet sent. */
  held: ChatChunk[];
  /** The rest of the answer: bytes (HTTP) or one frame per piece (WebSocket); paused. Destroying it ends the upstream call. */
  source: Readable;
  /** True when the upstream had already ended (everything is in `held`). */
  ended: boolean;
}

/** What one attempt on one channel came to. */
export type Attempt =
  | { outcome: 'answered'; answer: UpstreamAnswer }
  /** `staleCredential`: the cached credential the vendor refused with a 401 (translated() retries once with a fresh one). */
  | { outcome: 'failed'; failure: UpstreamFailure; staleCredential?: string }
  /** Nothing answered (network, timeout, busy): the error for the client, the detail for the log. */
  | { outcome: 'unanswered'; error: unknown }
  | { outcome: 'aborted' };

/** What an attempt works with: handed in by dispatch, plain (no Fastify instance). */
export interface AttemptDeps {
  options: OptionStore;
  log: FastifyBaseLogger;
  newRequestId: () => string;
}

/** Parsed model mappings by their text, so a mapped channel costs one JSON.parse, not one per request. */
const parsedMappings = new Map<string, Readonly<Record<string, unknown>>>();
const MAX_CACHED_MAPPINGS = 1000;

function parseMapping(text: string): Readonly<Record<string, unknown>> {
  let mapping = parsedMappings.get(text);
  if (!mapping) {
    try {
      const parsed: unknown = JSON.parse(text);
      mapping = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      mapping = {};
    }
    // edited mappings leave old texts behind; start over rather than grow without bound
    if (parsedMappings.size >= MAX_CACHED_MAPPINGS) parsedMappings.clear();
    parsedMappings.set(text, mapping);
  }
  return mapping;
}

/** A whole body as one Buffer: the chunk itself when it came in one (no copy). */
export function readAll(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    body.once('end', () => resolve(joinChunks(chunks, size)));
    body.once('error', reject);
  });
}

/** A JSON answer whose value is parsed on first use (undefined when it is not valid JSON). A class: an object literal with a getter costs far more to make. */
export class LazyJson {
  private parsed: { value: unknown } | undefined;

  constructor(readonly bytes: Buffer) {}

  get value(): unknown {
    if (!this.parsed) {
      try {
        this.parsed = { value: JSON.parse(this.bytes.toString('utf8')) };
      } catch {
        this.parsed = { value: undefined };
      }
    }
    return this.parsed.value;
  }
}

/** The whole body of an answer (at once when it was read already); an upstream that breaks off mid-body is a 502, so the caller can release. */
export function answerBytes(answer: UpstreamAnswer): Buffer | Promise<Buffer | RelayError> {
  if (answer.json) return answer.json.bytes;
  return readAll(answer.response.stream!).catch((error: Error) => {
    const { requestId } = answer;
    answer.log.warn(
      { requestId, channelId: answer.channel.id, detail: scrubSecrets(error.message, secretsOf(answer.channel.key)) },
      'upstream answer broke off',
    );
    return isUpstreamTimeout(error)
      ? relayError(504, `the upstream answer stalled (request id ${requestId})`, 'upstream_timeout', 'server_error')
      : unreachableRelayError(true, requestId);
  });
}

/** The model a channel expects: its model_mapping entry, else the requested name. */
export function mappedModel(channel: RoutedChannel, model: string): string {
  if (!channel.model_mapping || channel.model_mapping === '{}') return model;
  const target = parseMapping(channel.model_mapping)[model];
  return typeof target === 'string' && target ? target : model;
}

/**
 * A channel key as the scrubbers take it: a key of several secrets
 * (`APIKey|SecretKey`, `APPID|APISecret|APIKey`) one per line, so each part is
 * scrubbed where an upstream quotes it alone.
 */
export const secretsOf = (key: string) => key.replace(/\|/g, '\n');

/** What a channel's adaptor knows of it. */
export function channelConfigOf(channel: Pick<RoutedChannel, 'type' | 'key' | 'base_url' | 'other'>): ChannelConfig {
  return { type: channel.type, key: channel.key, baseUrl: channel.base_url ?? '', other: channel.other ?? '' };
}

/** An error after the readers let go (the client left, the call was aborted) must not go unhandled. */
export const ignoreError = () => undefined;
