// Answers an OpenAI client from a channel whose vendor speaks something else:
// the answer dispatch decoded into OpenAI's shape (a whole chat.completion or
// embeddings list, or a stream of chunks still arriving) goes out as OpenAI
// would have sent it, and what it used comes back to be settled.
//
// A stream goes out as `data: <chunk>\n\n` ... `data: [DONE]\n\n`, each chunk
// as it is decoded, held back only while the client reads slower than the
// vendor writes; a final usage chunk (choices: []) when the client asked for
// stream_options.include_usage; an upstream error mid-stream ends it with an
// error event in OpenAI's shape; a client that leaves closes the upstream.
// Billed: the vendor's reported usage, or, when it reported none or the
// stream was cut, the prompt's count and the streamed text's.
import type { ServerResponse } from 'node:http';
import { assembleChatResponse, openAiUsage } from '../protocols/shared';
import type { ChatChunk, ChatResponse, EmbeddingResponse, OpenAIUsage, UpstreamFailure, Usage } from '../protocols/types';
import type { TranslatedStream, UpstreamAnswer } from './attempt';
import { relayError, unreachableRelayError, upstreamRelayError, type RelayError } from './errors';
import { scrubSecrets } from './scrub';
import { secretsOf } from './attempt';
import { countTextsPaced } from '../protocols/inbound/tokenCount';
import { isUpstreamTimeout } from './upstream';
import type { InboundCodec } from '../protocols/inbound';

/** What a translated answer used, as the routes settle it: the vendor's usage, or the gateway's own count (estimated). */
export type TranslatedUsage = Usage & { estimated: boolean };

export interface TranslateOptions {
  /** The client's protocol: one with its own encoders gets the answer in its shape, any other OpenAI's. */
  inbound?: InboundCodec;
  /** The client asked for a stream. */
  streamed: boolean;
  /** The client asked stream_options.include_usage. */
  clientAskedUsage: boolean;
  /** The prompt's exact count, made only when the vendor reports no usage (counted paced: countPaced). */
  promptTokens: () => number | Promise<number>;
  /** The model the client asked for (the estimate's tokenizer). */
  model: string;
  /** The client's request as it sent it (a protocol whose answer repeats its settings reads them). */
  request?: Record<string, unknown>;
  approximate: boolean;
  /** Keeps the bookkeeping from being idle while an estimate is being counted (Bookkeeping.track). */
  track?: <T>(work: Promise<T>) => Promise<T>;
}

const NO_REQUEST: Record<string, unknown> = Object.freeze({});
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};
const DONE = 'data: [DONE]\n\n';

/** The usage the relay bills from OpenAI's usage object, when it says anything. */
function reported(usage: OpenAIUsage | null | undefined): Usage | undefined {
  if (!usage || usage.prompt_tokens + usage.completion_tokens <= 0) return undefined;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    cachedPromptTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    ...(usage.prompt_tokens_details?.cache_creation_tokens
      ? { cacheCreationTokens: usage.prompt_tokens_details.cache_creation_tokens }
      : {}),
  };
}

const exact = (usage: Usage): TranslatedUsage => {
  const billed: TranslatedUsage = {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedPromptTokens: usage.cachedPromptTokens,
    estimated: false,
  };
  if (usage.cacheCreationTokens) billed.cacheCreationTokens = usage.cacheCreationTokens;
  // not billed apart (they are part of the completion), but a protocol that reports them says how many
  if (usage.reasoningTokens) billed.reasoningTokens = usage.reasoningTokens;
  return billed;
};

/** Text a chunk delivered, for an estimate. */
function textOf(chunk: ChatChunk): string {
  let text = '';
  for (const choice of chunk.choices) {
    if (typeof choice.delta.content === 'string') text += choice.delta.content;
    if (typeof choice.delta.reasoning_content === 'string') text += choice.delta.reasoning_content;
    for (const call of choice.delta.tool_calls ?? []) text += (call.function?.name ?? '') + (call.function?.arguments ?? '');
  }
  return text;
}

function textOfResponse(chat: ChatResponse): string {
  return chat.choices
    .map(
      (choice) =>
        (choice.message.content ?? '') +
        (choice.message.reasoning_content ?? '') +
        (choice.message.tool_calls ?? []).map((call) => call.function.name + call.function.arguments).join(''),
    )
    .join('');
}

/** The error a failure becomes for the client: OpenAI's shape, scrubbed, with the request id. */
function clientError(answer: UpstreamAnswer, failure: UpstreamFailure): RelayError {
  return upstreamRelayError(failure.status, failure, secretsOf(answer.channel.key), answer.requestId);
}

function sendJson(response: ServerResponse, value: unknown): void {
  const text = JSON.stringify(value);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * Embeddings as OpenAI sends them when asked for `encoding_format: "base64"`
 * (what the official SDKs ask by default): each vector as the base64 of its
 * little-endian float32 values.
 */
function base64Embeddings(
  embeddings: EmbeddingResponse,
): Omit<EmbeddingResponse, 'data'> & { data: Array<{ object: 'embedding'; index: number; embedding: string }> } {
  return {
    ...embeddings,
    data: embeddings.data.map((item) => {
      const bytes = Buffer.alloc(item.embedding.length * 4);
      item.embedding.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
      return { ...item, embedding: bytes.toString('base64') };
    }),
  };
}

/**
 * Answers the client from a translated answer. Resolves to the usage to
 * settle, or to the error the client gets when nothing could be sent (the
 * caller then releases the reservation and answers it).
 */
export async function answerTranslated(
  answer: UpstreamAnswer,
  response: ServerResponse,
  options: TranslateOptions,
): Promise<TranslatedUsage | RelayError> {
  const translated = answer.translated!;
  // counted paced, so that a huge answer without usage does not hold the event loop
  const counted = async (text: string): Promise<TranslatedUsage> => ({
    promptTokens: await options.promptTokens(),
    completionTokens: await countTextsPaced([text], options.model, { approximate: options.approximate }),
    cachedPromptTokens: 0,
    estimated: true,
  });
  const estimate = (text: string) => (options.track ? options.track(counted(text)) : counted(text));

  if (translated.embeddings) {
    sendJson(response, options.request?.encoding_format === 'base64' ? base64Embeddings(translated.embeddings) : translated.embeddings);
    const promptTokens = translated.embeddings.usage.prompt_tokens;
    return promptTokens > 0 ? { promptTokens, completionTokens: 0, cachedPromptTokens: 0, estimated: false } : estimate('');
  }

  const inbound = options.inbound;
  if (inbound?.encodeResponse && inbound.encodeStream)
    return answerInProtocol(
      answer,
      response,
      options,
      inbound as Required<Pick<InboundCodec, 'encodeResponse' | 'encodeStream'>>,
      estimate,
    );

  if (translated.stream && !options.streamed) {
    // a stream-only vendor (or a stream kept open for a whole answer): fold it into one answer
    const collected = await collect(answer, translated.stream);
    if ('status' in collected) return collected;
    const usage = translated.stream.decoder.usage();
    const chat = assembleChatResponse(
      collected.chunks,
      translated.call,
      usage ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 },
    );
    const billed = usage ? exact(usage) : await estimate(textOfResponse(chat));
    if (!usage) chat.usage = openAiUsage(billed);
    sendJson(response, chat);
    return billed;
  }

  if (translated.chat) {
    const chat = translated.chat;
    const usage = reported(chat.usage);
    const billed = usage ? exact(usage) : await estimate(textOfResponse(chat));
    if (!options.streamed) {
      if (!usage) chat.usage = openAiUsage(billed);
      sendJson(response, chat);
      return billed;
    }
    // the vendor answered a streamed call whole: the client still gets a stream
    response.writeHead(200, SSE_HEADERS);
    for (const chunk of chunksOfResponse(chat)) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    if (options.clientAskedUsage) response.write(`data: ${JSON.stringify(usageChunk(chat.id, chat.model, chat.created, billed))}\n\n`);
    response.end(DONE);
    return billed;
  }

  return streamTranslated(answer, translated.stream!, response, options, estimate);
}

/** A whole answer as the chunks a stream of it would have carried. */
function chunksOfResponse(chat: ChatResponse): ChatChunk[] {
  const base = { id: chat.id, object: 'chat.completion.chunk' as const, created: chat.created, model: chat.model };
  const chunks: ChatChunk[] = [];
  for (const choice of chat.choices) {
    const delta: ChatChunk['choices'][number]['delta'] = { role: 'assistant', content: choice.message.content ?? '' };
    if (choice.message.reasoning_content) delta.reasoning_content = choice.message.reasoning_content;
    if (choice.message.tool_calls) delta.tool_calls = choice.message.tool_calls.map((call, index) => ({ index, ...call }));
    chunks.push({ ...base, choices: [{ index: choice.index, delta, finish_reason: null }] });
    chunks.push({ ...base, choices: [{ index: choice.index, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }] });
  }
  return chunks;
}

function usageChunk(id: string, model: string, created: number, usage: TranslatedUsage): ChatChunk {
  return { id, object: 'chat.completion.chunk', created, model, choices: [], usage: openAiUsage(usage) };
}

/** Reads the rest of a stream into its decoder (nothing has reached the client). */
function collect(answer: UpstreamAnswer, stream: TranslatedStream): Promise<{ chunks: ChatChunk[] } | RelayError> {
  const { decoder, source } = stream;
  const chunks = [...stream.held];
  const failed = () => {
    const failure = decoder.failure();
    return failure ? clientError(answer, failure) : undefined;
  };
  if (stream.ended || source.destroyed) return Promise.resolve(failed() ?? { chunks });
  return new Promise((resolve) => {
    const finish = (result: { chunks: ChatChunk[] } | RelayError) => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(result);
    };
    const onData = (piece: Buffer | string) => {
      chunks.push(...decoder.push(piece));
      const failure = failed();
      if (failure || decoder.done()) {
        source.destroy();
        chunks.push(...decoder.end());
        finish(failure ?? { chunks });
      }
    };
    const onEnd = () => {
      chunks.push(...decoder.end());
      finish(failed() ?? { chunks });
    };
    const onError = (error: Error) => {
      answer.log.warn(
        { requestId: answer.requestId, channelId: answer.channel.id, detail: scrubSecrets(error.message, secretsOf(answer.channel.key)) },
        'upstream answer broke off',
      );
      finish(
        isUpstreamTimeout(error)
          ? relayError(504, `the upstream answer stalled (request id ${answer.requestId})`, 'upstream_timeout', 'server_error')
          : unreachableRelayError(true, answer.requestId),
      );
    };
    source.on('data', onData).once('end', onEnd).once('error', onError);
    source.resume();
  });
}

/**
 * Hands a vendor stream's decoded chunks to `send` as they arrive (what was
 * held back first), with backpressure from the client, until the vendor ends,
 * fails or breaks off, or the client leaves (the vendor is then closed).
 */
async function pumpStream(
  answer: UpstreamAnswer,
  stream: TranslatedStream,
  response: ServerResponse,
  send: (chunks: ChatChunk[]) => boolean,
): Promise<{ broken: boolean; failure: UpstreamFailure | undefined }> {
  const { decoder, source } = stream;
  let broken = false;
  let failure: UpstreamFailure | undefined;
  send(stream.held);
  if (stream.ended || source.destroyed) return { broken, failure: decoder.failure() };
  await new Promise<void>((resolve) => {
    const clientLeft = () => {
      if (!response.writableFinished) {
        broken = true;
        source.destroy();
        finish();
      }
    };
    const finish = () => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      response.off('close', clientLeft);
      resolve();
    };
    const onData = (piece: Buffer | string) => {
      const more = send(decoder.push(piece));
      failure = decoder.failure();
      if (failure || decoder.done()) {
        // the vendor said it is done (a WebSocket stays open until closed) or failed: stop reading
        source.destroy();
        send(decoder.end());
        return finish();
      }
      // a client that reads slower than the vendor writes holds the vendor back
      if (!more) {
        source.pause();
        response.once('drain', () => source.resume());
      }
    };
    const onEnd = () => {
      send(decoder.end());
      failure = decoder.failure();
      finish();
    };
    const onError = (error: Error) => {
      broken = true;
      if (!response.destroyed) {
        answer.log.warn(
          { requestId: answer.requestId, channelId: answer.channel.id, detail: scrubSecrets(error.message, secretsOf(answer.channel.key)) },
          'upstream stream broke off',
        );
        failure = { status: 502, message: error.message, type: null, code: null, deadKey: false, retryable: true };
      }
      finish();
    };
    source.on('data', onData).once('end', onEnd).once('error', onError);
    response.once('close', clientLeft);
    source.resume();
  });
  return { broken, failure };
}

/** Streams the chunks to the client as they are decoded; resolves to what to bill. */
async function streamTranslated(
  answer: UpstreamAnswer,
  stream: TranslatedStream,
  response: ServerResponse,
  options: TranslateOptions,
  estimate: (text: string) => Promise<TranslatedUsage>,
): Promise<TranslatedUsage> {
  const { decoder } = stream;
  const call = answer.translated!.call;
  let streamedText = '';
  let last: ChatChunk | undefined;
  response.writeHead(200, SSE_HEADERS);
  /** Writes chunks; false when the client's socket asks to wait. */
  const send = (chunks: ChatChunk[]): boolean => {
    let out = '';
    for (const chunk of chunks) {
      // usage goes out once, at the end, and only when asked for
      if (chunk.choices.length === 0) continue;
      const { usage: _usage, ...rest } = chunk;
      void _usage;
      streamedText += textOf(chunk);
      last = chunk;
      out += `data: ${JSON.stringify(rest)}\n\n`;
    }
    return out.length === 0 || response.write(out);
  };

  const outcome = await pumpStream(answer, stream, response, send);
  return endStream(answer, response, outcome, decoder.usage(), () => estimate(streamedText), {
    error: (error) => `data: ${JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code } })}\n\n`,
    finish: (billed) => {
      if (options.clientAskedUsage)
        response.write(
          `data: ${JSON.stringify(usageChunk(last?.id ?? call.responseId, last?.model ?? call.model, last?.created ?? call.now, billed))}\n\n`,
        );
      response.end(DONE);
    },
  });
}

/**
 * Closes a pumped stream for either kind of client. The vendor's usage is
 * billed only when the stream ran to its end; a broken or failed one is billed
 * by estimate of what was sent (counted only then). A client still listening gets its protocol's
 * error event, or its normal ending.
 */
async function endStream(
  answer: UpstreamAnswer,
  response: ServerResponse,
  { broken, failure }: { broken: boolean; failure: UpstreamFailure | undefined },
  usage: Usage | undefined,
  estimated: () => Promise<TranslatedUsage>,
  frames: { error: (error: RelayError) => string; finish: (billed: TranslatedUsage) => void },
): Promise<TranslatedUsage> {
  const billed = usage && !broken && !failure ? exact(usage) : await estimated();
  if (!response.destroyed && !response.writableEnded) {
    if (failure) {
      const error = failure.status === 502 && broken ? unreachableRelayError(true, answer.requestId) : clientError(answer, failure);
      response.end(frames.error(error));
    } else {
      frames.finish(billed);
    }
  }
  return billed;
}

/**
 * Answers a client of another protocol (one whose codec has encoders): a whole
 * answer as its JSON, a stream as its events. The same reading, failures and
 * billing as OpenAI's answers above.
 */
async function answerInProtocol(
  answer: UpstreamAnswer,
  response: ServerResponse,
  options: TranslateOptions,
  inbound: Required<Pick<InboundCodec, 'encodeResponse' | 'encodeStream'>>,
  estimate: (text: string) => Promise<TranslatedUsage>,
): Promise<TranslatedUsage | RelayError> {
  const translated = answer.translated!;
  const { call } = translated;
  const sendBody = (text: string) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  };

  if (!options.streamed) {
    let chat = translated.chat;
    let usage: Usage | undefined;
    if (translated.stream) {
      const collected = await collect(answer, translated.stream);
      if ('status' in collected) return collected;
      usage = translated.stream.decoder.usage();
      chat = assembleChatResponse(collected.chunks, call, usage ?? { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 });
    } else if (chat) {
      usage = reported(chat.usage);
    }
    if (!chat) return unreachableRelayError(true, answer.requestId);
    const billed = usage ? exact(usage) : await estimate(textOfResponse(chat));
    sendBody(inbound.encodeResponse(chat, billed, options.model, options.request ?? NO_REQUEST));
    return billed;
  }

  const encoder = inbound.encodeStream(options.model, options.request ?? NO_REQUEST);
  if (translated.chat) {
    // the vendor answered a streamed call whole: the client still gets a stream
    const chat = translated.chat;
    const usage = reported(chat.usage);
    const billed = usage ? exact(usage) : await estimate(textOfResponse(chat));
    response.writeHead(200, SSE_HEADERS);
    response.write(encoder.chunks(chunksOfResponse(chat), billed, chat.id));
    response.end(encoder.end(billed, chat.id));
    return billed;
  }

  const stream = translated.stream!;
  const { decoder } = stream;
  let streamedText = '';
  response.writeHead(200, SSE_HEADERS);
  const send = (chunks: ChatChunk[]): boolean => {
    for (const chunk of chunks) streamedText += textOf(chunk);
    const out = encoder.chunks(chunks, decoder.usage(), call.responseId);
    return out.length === 0 || response.write(out);
  };
  const outcome = await pumpStream(answer, stream, response, send);
  return endStream(answer, response, outcome, decoder.usage(), () => estimate(streamedText), {
    error: (error) => encoder.error(error),
    finish: (billed) => response.end(encoder.end(billed, call.responseId)),
  });
}
