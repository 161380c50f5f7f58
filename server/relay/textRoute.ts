// The token-metered route: chat, completions, edits, embeddings and
// moderations, streamed or not, in any client-side protocol
// (server/protocols/inbound), as a RelayRoute for the pipeline (pipeline.ts).
// Reserve the prompt plus max_tokens (or the model's maximum output), relay,
// answer, then settle what the upstream reports (or what we count locally).
// A chat or completion without max_tokens that the balance cannot cover at
// the model's maximum has its max_tokens lowered to what the balance pays
// for (at least MIN_LOWERED_OUTPUT_TOKENS), else it is refused.
import { affinityCaller } from './routing';
import type { Readable } from 'node:stream';
import type { InboundCodec, Usage, TextMode } from '../protocols/inbound';
import { measurePrompt } from '../protocols/inbound/promptBound';
import { countPaced, countTextsPaced, hasVendorTokenizer } from '../protocols/inbound/tokenCount';
import { reserve, reserveLowered, tokenCharge, type Bill } from '../billing/accounting';
import { contextWindowFor } from '../billing/catalog';
import { affordableOutputTokens, completionRatioFor, maxOutputTokensFor, reservationQuota } from '../billing/prices';
import type { Reservation } from '../billing/quota';
import { answerBytes, type UpstreamAnswer, type UpstreamRequest } from './attempt';
import { isRelayError, relayError, type RelayError } from './errors';
import type { RelayCall, RelayRoute } from './pipeline';
import { answerTranslated } from './translate';

/** What a text request asks the upstream for; shared objects, so dispatch can reuse its per-channel copies. */
const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
const STREAM_HEADERS: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };

/** The modes whose output a max_tokens limits: a request of these may have its limit lowered to what the balance pays for. */
const LIMITABLE = new Set<TextMode>(['chat', 'completions']);

/** What a text request's steps find out, for the later ones. */
interface TextState {
  approximate: boolean;
  completionRatio: number;
  /** The client's own output limit (0 for none). */
  clientLimit: number;
  maxOutputTokens: number;
  answers: number;
  /** The prompt's byte bound: what is reserved first, with no tokenizer on the hot path. */
  boundPromptTokens: number;
  /** The bound with the vendor's tokenizer, once made (only when the byte bound is refused). */
  tightPromptTokens: Promise<number> | undefined;
  /** The prompt's exact count, once made (only when the answer reports no usage); counted paced, never holding the event loop. */
  countedPromptTokens: Promise<number> | undefined;
  /** The output limit the gateway set because the balance could not pay for the model's maximum. */
  loweredLimit: number | undefined;
  streamed: boolean;
  /** The gateway asks the stream's usage on the client's behalf (and strips it from the answer). */
  addUsage: boolean;
  clientAskedUsage: boolean;
}

/** The response header naming the built-in tools a request lost on its way to a vendor that has nothing like them. */
export const DROPPED_TOOLS_HEADER = 'x-switchboard-dropped-tools';

/** What a text route's steps share: the client's protocol and the mode it asks. */
interface TextRouteOf {
  inbound: InboundCodec;
  mode: TextMode;
  /** What its consume logs say of the client protocol: nothing for the one a log assumes (OpenAI's chat). */
  clientProtocol: string | undefined;
}

/** A text route of a client-side protocol: `mode` is what it asks, `upstreamPath` where (for channels that speak the client's protocol). */
export function textRoute(inbound: InboundCodec, mode: TextMode, upstreamPath: string): RelayRoute<TextState> {
  const route: TextRouteOf = { inbound, mode, clientProtocol: inbound.assumedInLogs ? undefined : `client protocol ${inbound.protocol}` };
  return {
    operation: mode,
    inbound,
    body: 'json',
    read: (call) => readText(route, call),
    // Reserve on the prompt's byte bound (no tokenizer on the hot path); only
    // when that is refused does the tokenizer's bound decide, for the models
    // whose tokenizer is the vendor's own.
    price: (call) => reservationFor(call, call.state.boundPromptTokens),
    // the prompt's byte bound: never below its real count, corrected to the answer's usage (server/relay/rateLimits.ts)
    tokenEstimate: (call) => call.state.boundPromptTokens,
    reserveAgain: (call, refused, hint) => reserveAgain(route, call, refused, hint),
    upstream: (call) => upstreamOf(route, upstreamPath, call),
    answer: (call, answer) => answerText(route, call, answer),
  };
}

/** The prompt's exact count, made once. */
const promptTokens = ({ inbound, mode }: TextRouteOf, call: RelayCall<TextState>) =>
  (call.state.countedPromptTokens ??= countPaced(call.model, { approximate: call.state.approximate }, (options) =>
    inbound.promptTokens(mode, call.body, call.model, options),
  ));

/** A text's tokens, counted paced (a huge answer from an upstream that reports no usage must not hold the event loop either). */
const textTokens = (call: RelayCall<TextState>, text: string) =>
  countTextsPaced([text], call.model, { approximate: call.state.approximate });

/**
 * A closer bound than the bytes where the model's own tokenizer is at hand
 * (OpenAI's families): the same walk over the whole body, each text counted
 * by the tokenizer; for any other model the byte bound stands, since a
 * borrowed tokenizer can count fewer tokens than the vendor bills.
 */
const tightPromptTokens = (call: RelayCall<TextState>) => (call.state.tightPromptTokens ??= tokenizedBound(call));

/** The byte bound already holds the context-window cap and the uncountable parts: the tokenizer can only lower it. */
async function tokenizedBound(call: RelayCall<TextState>): Promise<number> {
  const bound = call.state.boundPromptTokens;
  if (call.state.approximate || !hasVendorTokenizer(call.model)) return bound;
  // the walk itself is linear; its texts are counted after it, paced
  const texts: string[] = [];
  const measured = measurePrompt(call.body, call.model, (text) => (texts.push(text), 0));
  if (measured.uncountable) return bound;
  return Math.min(bound, measured.tokens + (await countTextsPaced(texts, call.model)));
}

function reservationFor(call: RelayCall<TextState>, promptTokens: number, maxTokens = call.state.clientLimit): number {
  const { state, admission } = call;
  return reservationQuota({
    promptTokens,
    maxTokens,
    maxOutputTokens: state.maxOutputTokens,
    n: state.answers,
    ratio: admission.ratio,
    completionRatio: state.completionRatio,
  });
}

/** Bills the usage: the upstream's report, or (estimated) what was counted locally. */
function settle(route: TextRouteOf, call: RelayCall<TextState>, channelId: number, usage: Usage, estimated: boolean, note?: string): void {
  const { charge, pricing } = tokenCharge(call.admission, usage, call.state.completionRatio);
  const bill: Bill = {
    channelId,
    charge,
    pricing,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    isStream: call.state.streamed,
    estimated,
  };
  // the consume log says which client protocol asked, when it was not OpenAI's, and what was left out
  const detail = [route.clientProtocol, note].filter(Boolean).join('; ');
  if (detail) bill.detail = detail;
  call.settle(bill);
}

/** Step: the request read, its model and what the later steps need of it found out. */
function readText({ inbound, mode }: TextRouteOf, call: RelayCall<TextState>): TextState | RelayError {
  const { body } = call;
  const model = inbound.model(mode, body, call.input.pathModel);
  if (!model) return relayError(400, 'you must provide a model parameter', 'model_required');
  const problem = inbound.check(mode, body);
  if (problem)
    return problem.param
      ? { ...relayError(400, problem.message, problem.code), param: problem.param }
      : relayError(400, problem.message, problem.code);
  call.model = model;
  const { options } = call.ctx;
  const streamed = inbound.streamed(body, call.input.pathMethod);
  const clientAskedUsage = inbound.clientAskedUsage(body);
  return {
    approximate: options.bool('ApproximateTokenEnabled'),
    completionRatio: completionRatioFor(model, options.json('CompletionRatio')),
    clientLimit: inbound.outputLimit(body),
    maxOutputTokens: maxOutputTokensFor(model, options.json('ModelMaxOutputTokens')),
    answers: inbound.answers(mode, body),
    boundPromptTokens: inbound.promptTokens(mode, body, model, { bound: true, contextWindow: contextWindowFor(model) }),
    tightPromptTokens: undefined,
    countedPromptTokens: undefined,
    loweredLimit: undefined,
    streamed,
    addUsage: streamed && inbound.streamUsageAskable(mode) && !clientAskedUsage,
    clientAskedUsage,
  };
}

/** Step: the byte bound was refused; the tokenizer's bound, then (no client limit) an output limit the balance pays for. */
async function reserveAgain(
  { mode }: TextRouteOf,
  call: RelayCall<TextState>,
  refused: RelayError,
  hint: { alone: boolean },
): Promise<Reservation | RelayError> {
  const { ctx, state, admission } = call;
  let reservation: Reservation | RelayError = refused;
  const bound = await tightPromptTokens(call);
  if (bound < state.boundPromptTokens) {
    reservation = await reserve(ctx, admission, reservationFor(call, bound), hint);
  }
  if (
    isRelayError(reservation) &&
    reservation.code === 'insufficient_quota' &&
    state.clientLimit === 0 &&
    LIMITABLE.has(mode) &&
    state.maxOutputTokens > 0
  ) {
    // the client set no limit: answer as much as the balance pays for, if that is worth an answer
    const lowered = await reserveLowered(
      ctx,
      admission,
      (outputTokens) => reservationFor(call, bound, outputTokens),
      (available) =>
        affordableOutputTokens({
          available,
          promptTokens: bound,
          maxOutputTokens: state.maxOutputTokens,
          n: state.answers,
          ratio: admission.ratio,
          completionRatio: state.completionRatio,
        }),
      hint,
    );
    if (lowered) {
      reservation = lowered.reservation;
      state.loweredLimit = lowered.outputTokens;
    }
  }
  return reservation;
}

/** Step: the request as dispatch sends it. */
function upstreamOf({ inbound, mode }: TextRouteOf, upstreamPath: string, call: RelayCall<TextState>): UpstreamRequest {
  const { state, body, input } = call;
  return {
    operation: mode,
    inbound: inbound.protocol,
    passthroughOperation: inbound.passthroughOperation,
    untranslatable: inbound.untranslatable ? () => inbound.untranslatable!(body) : undefined,
    json: upstreamJson(inbound, call),
    stream: state.streamed,
    query: input.query,
    requestId: call.admission.requestId,
    model: call.model,
    path: upstreamPath,
    headers: upstreamHeaders(inbound, state.streamed, input.headers),
    body: (upstreamModel) => {
      // nothing to change: the client's own bytes go on, unparsed and unprinted
      if (input.raw && !state.addUsage && state.loweredLimit === undefined && inbound.modelUnchanged(body, upstreamModel)) return input.raw;
      return inbound.encodeChanged(body, { model: upstreamModel, outputLimit: state.loweredLimit, askUsage: state.addUsage });
    },
    signal: call.signal,
    affinity: affinityCaller(call.ctx.options, input.headers, body),
  };
}

/**
 * What a channel that does not speak the client's protocol encodes (with the limit the balance set); a
 * protocol other than OpenAI's is decoded into the chat form only when such a channel asks for it.
 */
function upstreamJson(inbound: InboundCodec, call: RelayCall<TextState>): Record<string, unknown> {
  const { state, body } = call;
  if (inbound.chatRequest)
    return chatFormOf(inbound.chatRequest, body, { model: call.model, streamed: state.streamed }, state.loweredLimit);
  return state.loweredLimit === undefined ? body : { ...body, max_tokens: state.loweredLimit };
}

/** The headers of the upstream request: the shared ones of a stream or a whole answer, with the client's forwarded ones. */
function upstreamHeaders(
  inbound: InboundCodec,
  streamed: boolean,
  headers: RelayCall<TextState>['input']['headers'],
): Record<string, string> {
  const shared = streamed ? STREAM_HEADERS : JSON_HEADERS;
  return inbound.forwardedHeaders ? withForwarded(shared, inbound.forwardedHeaders(headers)) : shared;
}

/** Step: the answer written back to the client and billed. */
function answerText(route: TextRouteOf, call: RelayCall<TextState>, answer: UpstreamAnswer): ReturnType<RelayRoute<TextState>['answer']> {
  const { state } = call;
  // the channel's vendor does not speak the client's protocol: its decoded answer is written back in it
  if (answer.translated) return answerTranslatedText(route, call, answer);
  const { stream, contentType } = answer.response;
  if (state.streamed && stream && contentType.includes('text/event-stream')) return streamBack(route, call, answer, stream);
  const pending = answerBytes(answer);
  if (pending instanceof Promise) return pending.then((bytes) => answerWhole(route, call, answer, bytes));
  return answerWhole(route, call, answer, pending);
}

/** An answer the channel's adaptor decoded: written in the client's protocol, billed by the vendor's usage or an estimate. */
async function answerTranslatedText(
  route: TextRouteOf,
  call: RelayCall<TextState>,
  answer: UpstreamAnswer,
): Promise<RelayError | undefined> {
  const { state } = call;
  // built-in tools the channel's vendor has nothing like went no further: the client is told, and the log says so
  const dropped = answer.translated?.call.droppedTools;
  if (dropped?.length) call.response.setHeader(DROPPED_TOOLS_HEADER, dropped.join(', '));
  const usage = await answerTranslated(answer, call.response, {
    inbound: route.inbound,
    streamed: state.streamed,
    clientAskedUsage: state.clientAskedUsage,
    promptTokens: () => promptTokens(route, call),
    model: call.model,
    request: call.body,
    approximate: state.approximate,
    // an estimate is counted paced once the answer is over: the bookkeeping is not idle before it is made
    track: (work) => call.ctx.bookkeeping.track(work),
  });
  if (isRelayError(usage)) return usage;
  settle(
    route,
    call,
    answer.channel.id,
    usage,
    usage.estimated,
    dropped?.length ? `left out (the channel's vendor has none): ${dropped.join(', ')}` : undefined,
  );
  return undefined;
}

/** A whole answer, passed on as it came; billed by its reported usage, else by counting its text. */
function answerWhole(
  route: TextRouteOf,
  call: RelayCall<TextState>,
  answer: UpstreamAnswer,
  bytes: Buffer | RelayError,
): RelayError | undefined | Promise<undefined> {
  if (isRelayError(bytes)) return bytes;
  const { inbound } = route;
  const { response } = call;
  const { status, contentType } = answer.response;
  response.writeHead(status, { 'content-type': contentType || 'application/json', 'content-length': bytes.length });
  response.end(bytes);
  const { json } = answer;
  const reported = json ? inbound.jsonUsage(json) : undefined;
  if (reported) settle(route, call, answer.channel.id, reported, false);
  else {
    // counted paced: the call's place is held until the bill is made, and the bookkeeping is not idle before it
    return call.ctx.bookkeeping.track(
      Promise.all([promptTokens(route, call), json ? textTokens(call, inbound.answerText(json.value)) : 0]).then(
        ([promptCount, completionTokens]) => {
          settle(route, call, answer.channel.id, { promptTokens: promptCount, completionTokens, cachedPromptTokens: 0 }, true);
          return undefined;
        },
      ),
    );
  }
  return undefined;
}

/** Hands each complete event on as it arrives; bills the reported usage, or counts what was streamed. */
async function streamBack(route: TextRouteOf, call: RelayCall<TextState>, answer: UpstreamAnswer, body: Readable): Promise<undefined> {
  const { response, state } = call;
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const watcher = route.inbound.watchStream(!state.clientAskedUsage);
  let broken = false;
  try {
    await new Promise<void>((resolve, reject) => {
      body.on('data', (chunk: Buffer) => {
        const out = watcher.pushBytes(chunk);
        // a client that reads slower than the upstream writes holds the upstream back
        if (out.length > 0 && !response.write(out)) {
          body.pause();
          response.once('drain', () => body.resume());
        }
      });
      body.once('end', resolve);
      body.once('error', reject);
    });
    const rest = watcher.flush();
    if (rest) response.write(rest);
  } catch {
    // the client left (the upstream call was aborted) or the upstream broke off
    broken = true;
  }
  if (!response.writableEnded) response.end();
  const reported = watcher.reportedUsage();
  if (reported && !broken && reported.promptTokens + reported.completionTokens > 0) settle(route, call, answer.channel.id, reported, false);
  else {
    const [promptCount, completionTokens] = await call.ctx.bookkeeping.track(
      Promise.all([promptTokens(route, call), textTokens(call, watcher.streamedText())]),
    );
    settle(route, call, answer.channel.id, { promptTokens: promptCount, completionTokens, cachedPromptTokens: 0 }, true);
  }
  return undefined;
}

/** The route's headers with the client's forwarded ones (the shared object itself when there are none). */
const withForwarded = (headers: Record<string, string>, forwarded: Record<string, string> | undefined) =>
  forwarded ? { ...headers, ...forwarded } : headers;

/** A request in the chat form, decoded on first read (a channel that speaks the client's protocol never reads it). */
function chatFormOf(
  decode: NonNullable<InboundCodec['chatRequest']>,
  body: Record<string, unknown>,
  call: { model: string; streamed: boolean },
  loweredLimit: number | undefined,
): Record<string, unknown> {
  let decoded: Record<string, unknown> | undefined;
  const read = (): Record<string, unknown> => {
    if (!decoded) {
      const chat = decode(body, call) as unknown as Record<string, unknown>;
      decoded = loweredLimit === undefined ? chat : { ...chat, max_tokens: loweredLimit };
    }
    return decoded;
  };
  return new Proxy(
    {},
    {
      get: (_target, key) => Reflect.get(read(), key) as unknown,
      has: (_target, key) => Reflect.has(read(), key),
      ownKeys: () => Reflect.ownKeys(read()),
      getOwnPropertyDescriptor: (_target, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(read(), key);
        return descriptor ? { ...descriptor, configurable: true } : undefined;
      },
    },
  );
}
