// What the relay needs to know about a protocol clients speak to it (OpenAI's
// Chat Completions family, Anthropic Messages, Gemini's generateContent). A codec is pure: it reads request bodies and answer bytes and
// writes error bodies; the relay pipeline (server/relay/pipeline.ts) does the I/O.
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatChunk, ChatRequest, ChatResponse, InboundProtocol, Operation, Usage } from '../types';
import type { CountOptions } from './tokenCount';

export type { Usage };

/** The token-metered operations a text route serves. */
export type TextMode = 'chat' | 'completions' | 'edits' | 'embeddings' | 'moderations';

/** A JSON answer read whole: its bytes, and its value parsed on first use (undefined when it is not JSON). */
export interface JsonAnswer {
  bytes: Buffer;
  readonly value: unknown;
}

/** Watches a streamed answer on its way to the client: passes events on and remembers what bills it. */
export interface UsageWatcher {
  /** The bytes to pass on for this chunk (complete events only; the rest waits for the next chunk). */
  pushBytes(chunk: Buffer): Buffer | string;
  /** What is left once the upstream ended. */
  flush(): string;
  /** The usage the stream reported, if it did. */
  reportedUsage(): Usage | undefined;
  /** The text streamed (counted when no usage was reported). */
  streamedText(): string;
}

/** An error as a client of any protocol hears it (the relay's RelayError carries these fields). */
export interface InboundError {
  message: string;
  type: string;
  code: string | number | null;
  param?: string | null;
}

export interface InboundCodec {
  protocol: InboundProtocol;
  /** True for the protocol a consume log assumes (OpenAI's chat): its bills do not name it; any other's say which client protocol asked. */
  assumedInLogs?: boolean;
  /**
   * What a channel that speaks this protocol is asked for, when it is not the
   * route's mode (Responses: `responses` there, and chat of every channel the
   * request is translated for).
   */
  passthroughOperation?: Operation;
  /**
   * The caller's key as `Bearer <key>` (what the relay's authentication reads),
   * for a protocol that carries it elsewhere (`x-api-key`, `x-goog-api-key`, a
   * query parameter). Absent: the Authorization header is read as it is.
   */
  authorization?(headers: IncomingHttpHeaders): string | undefined;
  /** Headers of the client's that go on to a channel speaking its protocol (Anthropic's `anthropic-beta`); undefined for none. */
  forwardedHeaders?(headers: IncomingHttpHeaders): Record<string, string> | undefined;
  /** The content type of its error bodies. */
  contentType: string;
  /** The model a request asks for ('' when none): the body's, else the path's (`/v1/engines/:model`), else the mode's default. */
  model(mode: TextMode, body: Record<string, unknown>, pathModel: string | undefined): string;
  /** Why the request cannot be relayed though it names a model (a required field missing); undefined when it can. */
  check(mode: TextMode, body: Record<string, unknown>): { message: string; code: string; param?: string } | undefined;
  /** The prompt's tokens: counted, or with `bound` an upper bound without a tokenizer (what a reservation holds). */
  promptTokens(mode: TextMode, body: Record<string, unknown>, model: string, options: CountOptions): number;
  /** The output limit the client set (0 for none). */
  outputLimit(body: Record<string, unknown>): number;
  /** How many answers the request asks for (each may be as long as the limit). */
  answers(mode: TextMode, body: Record<string, unknown>): number;
  /** Whether the answer streams: the body's flag, or the path's method where the protocol says it there (Gemini's `:streamGenerateContent`). */
  streamed(body: Record<string, unknown>, pathMethod: string | undefined): boolean;
  /** Whether the gateway may ask a stream of this mode to report usage for the client. */
  streamUsageAskable(mode: TextMode): boolean;
  /** Whether the client asked for the stream's usage itself (it then gets the usage event). */
  clientAskedUsage(body: Record<string, unknown>): boolean;
  /** True when the upstream model is the one the body names: with nothing else changed, the client's bytes go on as they are. */
  modelUnchanged(body: Record<string, unknown>, upstreamModel: string): boolean;
  /** The body for the upstream with its model replaced, and a lowered output limit or the stream usage asked for when given. */
  encodeChanged(body: Record<string, unknown>, change: { model: string; outputLimit?: number; askUsage: boolean }): string;
  /** The usage a JSON answer reports, undefined when none. */
  jsonUsage(json: JsonAnswer): Usage | undefined;
  /** The generated text of a parsed JSON answer (counted when it reports no usage). */
  answerText(value: unknown): string;
  /** A watcher for a streamed answer; `stripUsageEvent` drops the usage event the gateway asked for on the client's behalf. */
  watchStream(stripUsageEvent: boolean): UsageWatcher;
  /** An error's body in the protocol's shape (the status, when given, picks the error's type where the protocol has types per status). */
  errorBody(error: InboundError & { status?: number }): string;
  /**
   * For a protocol other than OpenAI chat: the request in the relay's chat form
   * (what a channel that does not speak it gets), and the decoded answer
   * written back in the protocol. Absent: the answer goes out in OpenAI's shape.
   */
  chatRequest?: (body: Record<string, unknown>, call: { model: string; streamed: boolean }) => ChatRequest;
  /**
   * What of the request the chat form cannot carry (built-in tools a vendor
   * without the protocol has no equivalent of), as the reason a translating
   * channel refuses it; undefined when nothing is lost.
   */
  untranslatable?: (body: Record<string, unknown>) => string | undefined;
  /**
   * A whole decoded answer as the protocol's JSON body (`model`: the one the
   * client asked for; `request`: the client's body, for a protocol whose
   * answer repeats the request's settings, as Responses does).
   */
  encodeResponse?(chat: ChatResponse, usage: Usage, model: string, request: Record<string, unknown>): string;
  /** Writes decoded chunks as the protocol's event stream. */
  encodeStream?(model: string, request: Record<string, unknown>): InboundStreamEncoder;
}

/** A decoded stream written in a client protocol's events. */
export interface InboundStreamEncoder {
  /** The events for these chunks ('' for none); `usage` is what the vendor reported so far. */
  chunks(chunks: readonly ChatChunk[], usage: Usage | undefined, fallbackId: string): string;
  /** The closing events of a complete answer, with what it used. */
  end(usage: Usage, fallbackId: string): string;
  /** An error event mid-stream. */
  error(error: InboundError & { status?: number }): string;
}
