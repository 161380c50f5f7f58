// One line of a gateway-run batch through the relay's own steps: the text
// route of its endpoint reads the body and prices it (the bound the batch
// holds for the line is the one route.price gives a normal call), dispatch
// chooses the channel (routing, retries, translation, the same as a client's
// request), and the route writes its answer, to a response kept in memory.
// What differs from pipeline.ts is where the money goes: the batch's task
// holds the bound already, so nothing is reserved here, and the route's
// settle() only records the bill; the runner (selfRun.ts) settles the line
// at the batch discount in the transaction that closes it. The seam is a
// RelayCall whose settle and release are the runner's, driven by this file
// in the pipeline's order (read, admit, price, dispatch, answer): no shared
// file needed a marker for in-process calls.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { admitModel, type Bill } from '../../billing/accounting';
import { anthropicMessages, openaiChat, openaiResponses } from '../../protocols/inbound';
import type { RelayContext } from '../context';
import { isRelayError, relayError, type RelayError } from '../errors';
import { RelayCall, type RelayRoute } from '../pipeline';
import { textRoute } from '../textRoute';
import type { RelayCaller } from '../tokenAuth';
import { DisconnectSignal } from '../upstream';

/** The endpoints a batch may name, as OpenAI lists them, each with the relay's route for it. */
export const BATCH_ROUTES: Readonly<Record<string, RelayRoute<unknown>>> = {
  '/v1/chat/completions': textRoute(openaiChat, 'chat', '/v1/chat/completions'),
  '/v1/completions': textRoute(openaiChat, 'completions', '/v1/completions'),
  '/v1/embeddings': textRoute(openaiChat, 'embeddings', '/v1/embeddings'),
  '/v1/responses': textRoute(openaiResponses, 'chat', '/v1/responses'),
};

/** Every route a line may run through: OpenAI's batch endpoints, and Anthropic's Messages for a Message Batch (messageBatch.ts). */
const LINE_ROUTES: Readonly<Record<string, RelayRoute<unknown>>> = {
  ...BATCH_ROUTES,
  '/v1/messages': textRoute(anthropicMessages, 'chat', '/v1/messages'),
};

/** A response that keeps what the route writes: its status, headers and bytes. */
class KeptResponse extends ServerResponse {
  readonly chunks: Buffer[] = [];

  constructor() {
    const request = new IncomingMessage(new Socket());
    request.method = 'POST';
    request.httpVersionMajor = 1;
    request.httpVersionMinor = 1;
    super(request);
    // a socket that swallows the bytes: the response finishes as a real one does
    this.assignSocket(new Writable({ write: (_chunk, _encoding, callback) => callback() }) as unknown as Socket);
  }

  override write(chunk: unknown, ...rest: unknown[]): boolean {
    this.keep(chunk, rest[0]);
    return (ServerResponse.prototype.write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  }

  override end(chunk?: unknown, ...rest: unknown[]): this {
    if (chunk !== undefined && typeof chunk !== 'function') this.keep(chunk, rest[0]);
    (ServerResponse.prototype.end as (...args: unknown[]) => void).call(this, chunk, ...rest);
    return this;
  }

  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  private keep(chunk: unknown, encoding: unknown): void {
    if (Buffer.isBuffer(chunk)) this.chunks.push(chunk);
    else if (typeof chunk === 'string')
      this.chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) this.chunks.push(Buffer.from(chunk));
  }
}

/** A relayed call whose money is the batch's: settle records the bill, release gives nothing back (nothing was reserved). */
class BatchLineCall extends RelayCall<unknown> {
  billed: Bill | undefined;

  override settle(bill: Bill): void {
    this.billed ??= bill;
    this.bill = bill;
  }

  override release(): undefined {
    return undefined;
  }
}

/** What a line's request is, read and priced as the relay reads and prices it. */
export interface PricedLine {
  call: BatchLineCall;
  /** The most it can cost: route.price at the caller's price. */
  bound: number;
}

/** Reads and prices a line's body for `caller` (nothing held, nothing sent); the refusal a client would get otherwise. */
export function priceLine(
  ctx: RelayContext,
  caller: RelayCaller,
  endpoint: string,
  body: Record<string, unknown>,
  requestId?: string,
): PricedLine | RelayError {
  const route = LINE_ROUTES[endpoint];
  if (!route) return relayError(400, `the endpoint ${endpoint} is not one a batch may use`, 'invalid_endpoint');
  const call = new BatchLineCall(ctx, route, { headers: {}, ip: '127.0.0.1', body }, new KeptResponse());
  call.caller = caller;
  call.body = body;
  call.startedAt = Date.now();
  const state = route.read(call);
  if (isRelayError(state)) return state;
  call.state = state;
  const admission = admitModel(ctx, caller, call.model, requestId);
  if (isRelayError(admission)) return admission;
  call.admission = admission;
  return { call, bound: route.price(call) };
}

/** What running a line came to: the answer's status and body, the bill when it was billed, the channel, the request id. */
export interface LineAnswer {
  statusCode: number;
  body: unknown;
  bill: Bill | undefined;
  channelId: number;
  requestId: string;
  modelRatio: number;
  groupRatio: number;
  model: string;
}

const parsedOr = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

/** Runs a priced line: dispatch, then the route's answer into memory. `bound` is what the batch holds for it. */
export async function runPricedLine(ctx: RelayContext, priced: PricedLine, bound: number): Promise<LineAnswer> {
  const { call } = priced;
  const { route } = call;
  const response = call.response as KeptResponse;
  call.reservation = {
    userId: Number(call.caller.user.id),
    tokenId: Number(call.caller.token.id),
    limitedToken: Number(call.caller.token.unlimited_quota) !== 1,
    amount: bound,
  };
  call.signal = new DisconnectSignal();
  ctx.registry.add(call.signal);
  const base = {
    requestId: call.admission.requestId,
    modelRatio: call.admission.modelRatio,
    groupRatio: call.admission.groupRatio,
    model: call.model,
  };
  const failedWith = (error: RelayError, channelId: number): LineAnswer => ({
    ...base,
    statusCode: error.status,
    body: parsedOr(route.inbound.errorBody(error)),
    bill: undefined,
    channelId,
  });
  try {
    const dispatched = await ctx.dispatch(call.caller, route.upstream(call));
    if (dispatched.outcome === 'failed') return failedWith(dispatched.error, dispatched.channelId);
    if (dispatched.outcome === 'aborted') return failedWith(relayError(503, 'the gateway is shutting down', 'aborted', 'server_error'), 0);
    const channelId = dispatched.answer.channel.id;
    call.channelId = channelId;
    let failed = route.answer(call, dispatched.answer);
    if (failed instanceof Promise) failed = await failed;
    if (failed) return failedWith(failed, channelId);
    return { ...base, statusCode: response.statusCode, body: parsedOr(response.text), bill: call.billed, channelId };
  } finally {
    ctx.registry.delete(call.signal);
  }
}
