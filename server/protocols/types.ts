// The shared types of the protocol layer: what the relay asks any upstream,
// and what any upstream's answer becomes. Pure declarations: no I/O, no
// Fastify, no database. The relay's internal form of a chat is OpenAI's Chat
// Completions shape (the wire most clients and vendors speak), so an
// adaptor's job is to turn that shape into its vendor's request and its
// vendor's answer (whole or streamed) back into that shape, with usage.
import type { ChannelProtocol } from '../../common/channelTypes';

export type { ChannelProtocol };

/** What a relayed call asks for; routing skips channels whose adaptor lacks it. */
export type Operation =
  | 'chat'
  | 'completions'
  | 'edits'
  | 'embeddings'
  | 'moderations'
  | 'images'
  /** OpenAI's image edits and variations: a multipart upload, its bytes passed to a channel that speaks OpenAI's protocol. */
  | 'image_edit'
  | 'image_variation'
  | 'audio_speech'
  | 'audio_transcription'
  | 'audio_translation'
  /** OpenAI's Responses API, asked only of a channel whose type serves it itself (the bytes pass); any other is asked for chat. */
  | 'responses'
  /** A rerank (Cohere's, Jina's and Voyage's /rerank): always encoded by the channel's adaptor, as the vendors' shapes differ on one wire. */
  | 'rerank'
  /** OpenAI's Realtime API: a WebSocket session (GET /v1/realtime), asked only of a channel whose type serves it (relay/realtime/). */
  | 'realtime'
  /** OpenAI's Videos API (Sora): asked only of a channel whose type serves it (relay/tasks/videos.ts). */
  | 'videos';

/** The client-side protocols (what a client speaks to the gateway). */
export type InboundProtocol = 'openai' | 'anthropic' | 'openai-responses' | 'gemini';

// ---- requests ----

export interface ChatContentPart {
  /** 'text' or 'image_url' in OpenAI's chat; any other a vendor's own part, passed on. */
  type: 'text' | 'image_url' | (string & Record<never, never>);
  text?: string;
  image_url?: { url: string; detail?: string };
  [field: string]: unknown;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function' | (string & Record<never, never>);
  content: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [field: string]: unknown;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** An OpenAI Chat Completions request, as the relay holds it (unknown fields kept). */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** Not OpenAI's, but vendors (Anthropic, Gemini, Spark) take it and clients send it. */
  top_k?: number;
  n?: number;
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
  user?: string;
  tools?: ChatTool[];
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };
  response_format?: { type: string; [field: string]: unknown };
  /**
   * OpenAI chat's web search (its search models take it): the chat form's
   * carrier for every client's web search tool, which each adaptor gives to
   * its vendor's own search (UpstreamAdaptor.webSearch) or the relay drops.
   */
  web_search_options?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  [field: string]: unknown;
}

/**
 * A rerank as the relay holds it: the client's request read and checked
 * (documents as strings, whatever shape the client sent them in), the fields
 * the relay does not know kept for the vendors that take them.
 */
export interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  top_n?: number;
  /** The client's other fields (a vendor's own options), passed to a vendor of the Jina shape. */
  extra: Record<string, unknown>;
}

// ---- answers ----

/** Token counts as the relay bills them (one type for the whole gateway). */
import type { Usage } from '../../common/usage';

export type { Usage };

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** `cache_creation_tokens` is not OpenAI's: the tokens a vendor (Anthropic) wrote to its prompt cache, billed apart. */
  prompt_tokens_details?: { cached_tokens?: number; cache_creation_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatChoice {
  index: number;
  message: { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; reasoning_content?: string };
  finish_reason: FinishReason | null;
}

/** An OpenAI chat.completion object. */
export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage: OpenAIUsage;
}

export interface ChatChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkChoice {
  index: number;
  delta: { role?: 'assistant'; content?: string | null; tool_calls?: ChatChunkToolCall[]; reasoning_content?: string };
  finish_reason: FinishReason | null;
}

/** An OpenAI chat.completion.chunk object; the last one of a stream may carry usage with no choices. */
export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: OpenAIUsage | null;
}

export interface EmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** A vendor's rerank answer in the relay's terms: the ranking, and the usage as the vendor counts it. */
export interface RerankResponse {
  id?: string;
  model: string;
  /** Most relevant first, as the vendor ranked them; `index` is the document's place in the request. */
  results: Array<{ index: number; relevance_score: number }>;
  /** How the vendor bills a rerank: by the token, or by the search unit (Cohere). */
  billedBy: 'tokens' | 'search_units';
  /** The tokens the vendor counted (token-billed vendors), when it reported them. */
  tokens?: number;
  /** The search units the vendor billed (Cohere), when it bills by them. */
  searchUnits?: number;
  /**
   * True for a vendor that bills a search unit per query of up to 100
   * documents and reports no count (Bedrock): the relay's count by that rule
   * is the vendor's, not an estimate.
   */
  searchUnitsByRule?: boolean;
}

// ---- failures ----

/** What an upstream said about a failure, classified. */
export interface UpstreamFailure {
  /** The HTTP status to treat the failure as (the upstream's, or what an error inside a 200 means). */
  status: number;
  message: string;
  type?: string | null;
  code?: string | number | null;
  /** The upstream's own words prove the key can never succeed as it is (invalid, deactivated, out of credit). */
  deadKey: boolean;
  /** Another channel may well succeed (5xx, 429, a dead key); false for a request that would fail anywhere. */
  retryable: boolean;
}

// ---- channels and calls ----

/** What an adaptor may know about a channel. */
export interface ChannelConfig {
  type: number;
  key: string;
  /** The channel's own base URL; empty for the type's default. */
  baseUrl: string;
  /** The type-specific setting (Azure api-version, Spark version, Zhipu protocol choice...). */
  other: string;
}

/** One call to one channel. */
export interface AdaptorCall {
  /** The channel called (the relay always sets it; encoders that depend on `other` read it). */
  channel?: ChannelConfig;
  operation: Operation;
  /** The model the upstream expects (after the channel's model mapping). */
  model: string;
  stream: boolean;
  /** The id the answer carries when the upstream gives none (`chatcmpl-...`). */
  responseId: string;
  /** Unix seconds, for `created` and for request signing. */
  now: number;
  /** A credential from the adaptor's exchange (Baidu's access token), when it has one. */
  credential?: string;
  /** The client's query parameters that matter upstream (Azure and Spark read `api-version`). */
  query?: Readonly<Record<string, string>>;
  /**
   * The model's largest output as the catalog knows it (billing's
   * catalogMaxOutputTokens), set by the relay: Anthropic's default
   * `max_tokens` when the client gave none. Unset: the catalog is not asked.
   */
  modelMaxOutputTokens?: number;
  /** Built-in tools the relay took out of the request because this channel's vendor has nothing like them (set by the relay; the answer names them). */
  droppedTools?: string[];
}

/** Where and how to send one call. */
export interface HttpTarget {
  /** Absolute URL (http:, https:, or ws:/wss: for a WebSocket adaptor). */
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
}

/** A credential fetched before calls (Baidu's access token), cached by the relay until it expires. */
export interface CredentialExchange {
  /** Calls with the same cache key share one credential. */
  cacheKey(channel: ChannelConfig): string;
  /** The exchange request, or a failure when the key cannot even be read (a Promise when building it signs: Vertex AI's JWT). */
  request(
    channel: ChannelConfig,
  ): (HttpTarget & { body?: string }) | UpstreamFailure | Promise<(HttpTarget & { body?: string }) | UpstreamFailure>;
  /** The credential and its life, or the vendor's refusal. */
  parse(status: number, body: string): { credential: string; expiresInSeconds: number } | UpstreamFailure;
}

/** Where a followed stream is read, and where its usage is asked for once it is done (UpstreamAdaptor.followStream). */
export interface FollowedTargets {
  stream: HttpTarget;
  usage?: HttpTarget;
}

/** Turns a vendor's stream into OpenAI chunks, one piece of bytes (or one WebSocket frame) at a time. */
export interface ChatStreamDecoder {
  /** The chunks made complete by these bytes; bytes may split an event anywhere. */
  push(data: Buffer | string): ChatChunk[];
  /** The chunks still held when the upstream ended. */
  end(): ChatChunk[];
  /** Usage the stream reported, once it has. */
  usage(): Usage | undefined;
  /** An error the upstream reported inside the stream, if it did. */
  failure(): UpstreamFailure | undefined;
  /** True once the vendor's own end-of-answer event arrived (a WebSocket adaptor closes the socket then). */
  done(): boolean;
}

/** A vendor's balance: one GET and how to read it. */
export interface BalanceSource {
  request(channel: ChannelConfig): HttpTarget;
  /** The balance in the type's `balance.unit`, or a failure. */
  parse(status: number, body: string): number | UpstreamFailure;
}

/**
 * One wire protocol. Every method is pure: the relay does the I/O. The
 * registry in ./upstream/index.ts holds one per ChannelProtocol.
 */
/**
 * An adaptor's native path for a client protocol: the client's body with the
 * few changes the vendor's URL wants (signed by the adaptor's `sign` when it
 * has one); a whole answer passed back as it came, a stream re-framed from the
 * vendor's framing into the client's wire as it arrives.
 */
export interface NativePath {
  /** The client protocol this path serves. */
  inbound: InboundProtocol;
  /** Whether the model (as the channel names it) is served this way; any other goes the translated way. */
  serves(model: string): boolean;
  /** URL and headers for a call. May return a failure (a malformed key). */
  target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure;
  /** The body sent, from the client's (its model already the channel's) and the headers the route forwards; throws on a body it cannot read. */
  encode(body: string | Buffer, headers: Readonly<Record<string, string>>, call: AdaptorCall): string;
  /** A fresh re-framer for one streamed answer. */
  reframe(call: AdaptorCall): NativeStreamReframer;
}

/** Turns a vendor's stream, cut anywhere, into the client's wire text. */
export interface NativeStreamReframer {
  /** The client's text for these bytes ('' while a frame is incomplete). */
  push(data: Buffer): string;
  /** The end of the vendor's stream: what is left, or a throw when it was cut mid-frame. */
  end(): string;
  /** A failure the stream reported (its text for the client is what `push` gave). */
  failure(): UpstreamFailure | undefined;
  /** True once an event of the answer itself was written: a failure before that is the channel's, and another may answer. */
  begun(): boolean;
}

export interface UpstreamAdaptor {
  protocol: ChannelProtocol;
  /** The vendor's API reference. */
  docs: string;
  /** What it can do; routing skips a channel for anything else. */
  operations: ReadonlySet<Operation>;
  /**
   * Set when the vendor speaks a client protocol on the wire: then a request
   * whose only change is the model passes as bytes (the zero-parse path).
   */
  speaks?: InboundProtocol;
  /**
   * A client protocol beyond `speaks` that only some channel types of this
   * wire serve (OpenAI's own API serves Responses, its resellers mostly do
   * not): true when a channel of `channelType` takes `inbound`'s bytes as they are.
   */
  alsoSpeaks?(channelType: number, inbound: InboundProtocol): boolean;
  /**
   * A client protocol the vendor serves for some models at URLs of its own,
   * behind the adaptor's signature (Bedrock's Anthropic Messages for Claude,
   * through InvokeModel): the client's request goes on nearly as it came,
   * rather than translated into the vendor's common shape.
   */
  native?: NativePath;
  /** 'websocket' when calls go over a WebSocket (one JSON frame out, frames back); 'http' otherwise. */
  transport: 'http' | 'websocket';
  credential?: CredentialExchange;
  /** URL and headers for a call (the body is `encode*`'s). May return a failure (a malformed key). */
  target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure;
  encodeChat(request: ChatRequest, call: AdaptorCall): string;
  /**
   * For a vendor whose signature covers the body (AWS SigV4): the target to
   * send once the body is encoded, its headers completed, or a failure (a key
   * it cannot sign with). Absent: the target goes as `target` made it.
   */
  sign?(
    target: HttpTarget,
    body: string,
    channel: ChannelConfig,
    call: AdaptorCall,
  ): HttpTarget | UpstreamFailure | Promise<HttpTarget | UpstreamFailure>;
  /**
   * For a vendor whose streamed call only starts the answer (a Replicate
   * prediction created with `stream: true` names its event stream in
   * `urls.stream`): from that first answer, the GET that streams the answer
   * (decoded by `decodeChatStream`), and the GET whose answer holds the usage
   * the stream's events do not carry, made once the stream is done. The relay
   * makes both (relay/followedStream.ts), and only to a host of `followHosts`
   * over https or to the channel's own base URL's origin.
   */
  followStream?(body: string, channel: ChannelConfig, call: AdaptorCall): FollowedTargets | UpstreamFailure;
  /** The vendor's hosts (each with its subdomains) a followed stream may be at; anything else is refused. */
  followHosts?: readonly string[];
  /** The usage in the answer to followStream's `usage` GET (status 2xx), or undefined when it holds none. */
  usageAfterStream?(body: string, call: AdaptorCall): Usage | undefined;
  /** A whole answer; an error inside a 2xx body is returned as a failure. */
  decodeChat(body: string, call: AdaptorCall): ChatResponse | UpstreamFailure;
  decodeChatStream(call: AdaptorCall): ChatStreamDecoder;
  encodeEmbeddings?(request: EmbeddingRequest, call: AdaptorCall): string;
  /** True for a model that embeds one text a call (Bedrock's Titan): the relay calls it once per input and joins the answers. */
  embeddingsPerInput?(model: string): boolean;
  decodeEmbeddings?(body: string, call: AdaptorCall): EmbeddingResponse | UpstreamFailure;
  /**
   * For an adaptor whose channel types differ in what they serve (on OpenAI's
   * wire only some vendors rerank): whether a channel of this type serves
   * `operation`; routing passes the others by. Absent: `operations` alone says.
   */
  servesOperation?(channelType: number, operation: Operation): boolean;
  encodeRerank?(request: RerankRequest, call: AdaptorCall): string;
  decodeRerank?(body: string, call: AdaptorCall): RerankResponse | UpstreamFailure;
  /** Classifies a non-2xx answer (and is used for any error body). */
  failure(status: number, body: string): UpstreamFailure;
  /** Classifies an error object that came in a 200 (a vendor that answers some failures so); `failure` when absent. */
  failureInOkBody?(body: string): UpstreamFailure;
  balance?: BalanceSource;
  /**
   * Whether `encodeChat` gives chat's `web_search_options` to the vendor's own
   * search for this model (Anthropic's web search tool, Gemini's Google Search
   * grounding, OpenAI's search models). Absent or false: the relay drops it
   * and tells the client (a header and the log), or refuses where the
   * operator said so.
   */
  webSearch?(model: string): boolean;
}

export const isUpstreamFailure = (value: unknown): value is UpstreamFailure =>
  typeof value === 'object' && value !== null && 'deadKey' in value && 'retryable' in value && 'status' in value;
