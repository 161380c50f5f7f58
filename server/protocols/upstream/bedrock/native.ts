// Claude on Bedrock for a client that speaks Anthropic's Messages API: the
// client's own request through InvokeModel / InvokeModelWithResponseStream,
// Bedrock's Anthropic Messages flavour, so nothing is lost to Converse's
// common shape (server tools, thinking, cache_control, metadata...).
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html,
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html
//
// The body is the client's without `model` (it is in the URL) and `stream`
// (the URL says it), with `anthropic_version: "bedrock-2023-05-31"`, and the
// client's `anthropic-beta` header as the body's `anthropic_beta` list
// (InvokeModel passes no such header to the model). A whole answer is
// Anthropic's Messages JSON. A streamed one is AWS's event stream whose
// `chunk` events carry `{"bytes": base64 of one Anthropic stream event}`:
// each is written as the SSE event Anthropic itself would have sent; an
// exception frame becomes Anthropic's `error` event.
import type { Message } from '@smithy/eventstream-codec';
import {
  isUpstreamFailure,
  type AdaptorCall,
  type ChannelConfig,
  type HttpTarget,
  type NativePath,
  type NativeStreamReframer,
  type UpstreamFailure,
} from '../../types';
import { isObject, parseJson, trimmedBaseUrl, upstreamFailure } from '../../shared';
import { streamException } from './errors';
import { bedrockKey } from './keys';
import { bedrockModelId, isClaudeOnBedrock } from './models';
import { EventStreamFrames } from './stream';
import { utf8Text as toUtf8 } from './libraries';

/** The Messages version Bedrock's Claude models take in the body (Anthropic's own takes a header). */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export function nativeTarget(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
  const key = bedrockKey(channel);
  if (isUpstreamFailure(key)) return key;
  const base = trimmedBaseUrl(channel.baseUrl, `https://bedrock-runtime.${key.region}.amazonaws.com`);
  // the stream's own framing is asked by Accept; the payloads inside it are JSON (X-Amzn-Bedrock-Accept)
  const headers: Record<string, string> = call.stream
    ? { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-accept': 'application/json' }
    : { 'content-type': 'application/json', accept: 'application/json' };
  if (key.kind === 'api-key') headers.authorization = `Bearer ${key.token}`;
  return {
    url: `${base}/model/${encodeURIComponent(bedrockModelId(call.model))}/${call.stream ? 'invoke-with-response-stream' : 'invoke'}`,
    method: 'POST',
    headers,
  };
}

/** The client's Messages body as InvokeModel takes it. */
export function encodeNative(body: string | Buffer, headers: Readonly<Record<string, string>>, _call: AdaptorCall): string {
  const parsed = parseJson(typeof body === 'string' ? body : body.toString('utf8'));
  if (!isObject(parsed)) throw new Error('the request body is not a JSON object');
  const { model: _model, stream: _stream, ...rest } = parsed;
  const invoke: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  const beta = headers['anthropic-beta'];
  if (beta) {
    const asked = beta
      .split(',')
      .map((flag) => flag.trim())
      .filter(Boolean);
    const listed = Array.isArray(rest.anthropic_beta) ? rest.anthropic_beta.filter((flag): flag is string => typeof flag === 'string') : [];
    invoke.anthropic_beta = [...new Set([...listed, ...asked])];
  }
  return JSON.stringify(invoke);
}

/** Anthropic's error type for the status a Bedrock exception comes with (https://docs.anthropic.com/en/api/errors). */
function anthropicErrorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 400) return 'invalid_request_error';
  return 'api_error';
}

const headerText = (message: Message, name: string): string => {
  const header = message.headers[name];
  return header && header.type === 'string' ? header.value : '';
};

const sse = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;

/** InvokeModelWithResponseStream's frames → Anthropic's SSE events. */
export class InvokeStreamReframer implements NativeStreamReframer {
  private readonly frames = new EventStreamFrames();
  private error: UpstreamFailure | undefined;
  private wrote = false;

  push(data: Buffer): string {
    if (this.error) return '';
    let messages: Message[];
    try {
      messages = this.frames.push(data);
    } catch (error) {
      return this.fail(upstreamFailure(502, `Bedrock's event stream could not be read: ${(error as Error).message}`, { retryable: true }));
    }
    let out = '';
    for (const message of messages) {
      out += this.handle(message);
      if (this.error) break;
    }
    return out;
  }

  end(): string {
    if (!this.error && this.frames.held > 0)
      throw new Error(`Bedrock's event stream broke off inside a frame (${this.frames.held} bytes held)`);
    return '';
  }

  failure(): UpstreamFailure | undefined {
    return this.error;
  }

  begun(): boolean {
    return this.wrote;
  }

  private fail(failure: UpstreamFailure): string {
    this.error = failure;
    return sse('error', JSON.stringify({ type: 'error', error: { type: anthropicErrorType(failure.status), message: failure.message } }));
  }

  private handle(message: Message): string {
    const messageType = headerText(message, ':message-type');
    if (messageType === 'exception') {
      const payload = parseJson(toUtf8(message.body));
      const said = isObject(payload) && typeof payload.message === 'string' ? payload.message : '';
      return this.fail(streamException(headerText(message, ':exception-type'), said));
    }
    if (messageType === 'error')
      return this.fail(streamException(headerText(message, ':error-code'), headerText(message, ':error-message')));
    // `chunk` is the stream's one event type; any other added later carries nothing for the client
    if (headerText(message, ':event-type') !== 'chunk') return '';
    const payload = parseJson(toUtf8(message.body));
    if (!isObject(payload) || typeof payload.bytes !== 'string') return '';
    const text = Buffer.from(payload.bytes, 'base64').toString('utf8').trim();
    const event = parseJson(text);
    if (!isObject(event) || typeof event.type !== 'string') return '';
    this.wrote = true;
    // one event per line of `data:`: a payload printed over several lines is written again on one
    return sse(event.type, text.includes('\n') ? JSON.stringify(event) : text);
  }
}

export const bedrockNative: NativePath = {
  inbound: 'anthropic',
  serves: (model) => isClaudeOnBedrock(bedrockModelId(model)),
  target: nativeTarget,
  encode: encodeNative,
  reframe: () => new InvokeStreamReframer(),
};
