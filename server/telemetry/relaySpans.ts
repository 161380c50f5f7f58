// One relayed call as a trace: a SERVER span for the gateway's request, a
// child of the client's W3C `traceparent` when it sent one, and a CLIENT span
// per upstream attempt, whose context the upstream call carries. Attributes
// follow OpenTelemetry's HTTP and GenAI semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/); what is
// the gateway's own (channel, key suffix, retry reason, charge) is under
// `switchboard.`. The GenAI names are still "development" in the conventions,
// so they are spelled here rather than imported from the incubating entry.
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import { findChannelType, ownerOfChannelType } from '../../common/channelTypes';
import { requestIdOf } from '../../common/requestId';
import { mappedModel, secretsOf, type Attempt, type RelayTrace, type UpstreamRequest } from '../relay/attempt';
import { failureKind, goesOn, unansweredKind } from '../relay/attemptVerdicts';
import type { RoutedChannel } from '../relay/channelSelect';
import type { RelayOutcome } from '../relay/context';
import { CLIENT_GONE_STATUS, type RelayCall } from '../relay/pipeline';
import { scrubLine } from '../relay/scrub';
import type { OptionStore } from '../services/optionStore';

/** The GenAI conventions' attribute names (development status in semantic-conventions 1.45). */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  timeToFirstToken: 'gen_ai.server.time_to_first_token',
} as const;

/** The gateway's own attributes. */
export const SWITCHBOARD = {
  userId: 'switchboard.user.id',
  tokenId: 'switchboard.token.id',
  requestId: 'switchboard.request.id',
  outcome: 'switchboard.outcome',
  quota: 'switchboard.quota',
  channelId: 'switchboard.channel.id',
  channelName: 'switchboard.channel.name',
  channelType: 'switchboard.channel.type',
  keySuffix: 'switchboard.channel.key_suffix',
  retryReason: 'switchboard.retry.reason',
} as const;

/** The span event of a stream's first write to the client. */
export const FIRST_TOKEN_EVENT = 'gen_ai.first_token';

const propagator = new W3CTraceContextPropagator();

/** The conventions' operation names, by the gateway's operations (others keep their own name). */
const OPERATION_NAMES: Readonly<Record<string, string>> = {
  chat: 'chat',
  responses: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
};

/** The conventions' provider names, by wire protocol, where they name one the channel type's owner does not say. */
const PROVIDER_BY_PROTOCOL: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  anthropic: 'anthropic',
};

function providerOf(type: number): string {
  const protocol = findChannelType(type)?.protocol;
  return (protocol && PROVIDER_BY_PROTOCOL[protocol]) ?? ownerOfChannelType(type);
}

/** A key's last four characters, for telling keys apart; none for a key too short to show a part of safely. */
const keySuffix = (key: string): string | undefined => (key.length >= 12 ? key.slice(-4) : undefined);

/** An upstream's answer with the model it named, when it was read whole as JSON (passed through) or decoded. */
function answeredModel(result: Extract<Attempt, { outcome: 'answered' }>): string {
  const { answer } = result;
  const decoded = answer.translated?.chat?.model;
  if (typeof decoded === 'string' && decoded) return decoded;
  const model = (answer.json?.value as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' && model ? model : answer.upstreamModel;
}

/** A relayed call's trace: its SERVER span, and the attempt that answered (ended with the call, so it covers a stream). */
export class CallTrace implements RelayTrace {
  readonly traceId: string | undefined;
  private readonly span: Span;
  private readonly context: Context;
  private readonly operation: string;
  private answering: Span | undefined;
  private responseModel: string | undefined;

  constructor(
    private readonly tracer: Tracer,
    call: RelayCall,
  ) {
    const { headers } = call.input;
    const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const request = call.response.req as { method?: string; url?: string } | undefined;
    const method = request?.method ?? 'POST';
    const url = request?.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    this.operation = OPERATION_NAMES[call.route.operation] ?? call.route.operation;
    this.span = tracer.startSpan(
      `${method} ${path}`,
      {
        kind: SpanKind.SERVER,
        startTime: call.startedAt,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: path,
          [ATTR_HTTP_ROUTE]: path,
          [SWITCHBOARD.requestId]: requestIdOf(headers),
          [GEN_AI.operation]: this.operation,
        },
      },
      parent,
    );
    const spanContext = this.span.spanContext();
    this.traceId = spanContext.traceFlags & TraceFlags.SAMPLED ? spanContext.traceId : undefined;
    this.context = trace.setSpan(parent, this.span);
  }

  /** Opens a CLIENT span for one upstream attempt, and gives the request its context for the upstream's headers. */
  attempt(channel: RoutedChannel, model: string, request: UpstreamRequest): { end(result: Attempt, options: OptionStore): void } {
    const upstreamModel = mappedModel(channel, model);
    const provider = providerOf(channel.type);
    const attributes: Attributes = {
      [GEN_AI.operation]: this.operation,
      [GEN_AI.provider]: provider,
      [GEN_AI.system]: provider,
      [GEN_AI.requestModel]: upstreamModel,
      [SWITCHBOARD.channelId]: channel.id,
      [SWITCHBOARD.channelName]: channel.name,
      [SWITCHBOARD.channelType]: channel.type,
    };
    const suffix = keySuffix(channel.key);
    if (suffix) attributes[SWITCHBOARD.keySuffix] = suffix;
    const span = this.tracer.startSpan(`${this.operation} ${upstreamModel}`, { kind: SpanKind.CLIENT, attributes }, this.context);
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(this.context, span), carrier, defaultTextMapSetter);
    request.traceHeaders = carrier;
    return { end: (result, options) => this.attemptEnded(span, channel, result, options) };
  }

  private attemptEnded(span: Span, channel: RoutedChannel, result: Attempt, options: OptionStore): void {
    switch (result.outcome) {
      case 'answered': {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.answer.response.status);
        this.responseModel = answeredModel(result);
        span.setAttribute(GEN_AI.responseModel, this.responseModel);
        // ended with the call: a stream's attempt lasts as long as the stream, and gets the usage
        this.answering = span;
        return;
      }
      case 'failed': {
        const { failure } = result;
        const kind = failureKind(failure);
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, failure.status);
        span.setAttribute(ATTR_ERROR_TYPE, kind);
        const message = scrubLine(failure.message, secretsOf(channel.key));
        if (goesOn(options, failure)) span.setAttribute(SWITCHBOARD.retryReason, `${kind}: ${message}`);
        span.setStatus({ code: SpanStatusCode.ERROR, message });
        break;
      }
      case 'unanswered': {
        const kind = unansweredKind(result.error);
        const message = scrubLine((result.error as Error).message ?? String(result.error), secretsOf(channel.key));
        span.setAttribute(ATTR_ERROR_TYPE, kind);
        span.setAttribute(SWITCHBOARD.retryReason, `${kind}: ${message}`);
        span.setStatus({ code: SpanStatusCode.ERROR, message });
        break;
      }
      case 'aborted':
        span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
        break;
    }
    span.end();
  }

  /** The answer's first streamed write: the time to first token, as an event on the call's span. */
  firstToken(call: RelayCall): void {
    this.span.addEvent(FIRST_TOKEN_EVENT, { [GEN_AI.timeToFirstToken]: (call.firstChunkAt - call.startedAt) / 1000 }, call.firstChunkAt);
  }

  /** The call is over: who made it, what it came to and cost, on its span (and the answering attempt's); both end. */
  finish(outcome: RelayOutcome, call: RelayCall): void {
    const { span } = this;
    const status =
      call.error?.status ?? (outcome !== 'settled' && !call.response.writableFinished ? CLIENT_GONE_STATUS : call.response.statusCode);
    const attributes: Attributes = { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status, [SWITCHBOARD.outcome]: outcome };
    if (call.caller) {
      attributes[SWITCHBOARD.userId] = Number(call.caller.user.id);
      attributes[SWITCHBOARD.tokenId] = Number(call.caller.token.id);
    }
    if (call.model) attributes[GEN_AI.requestModel] = call.model;
    if (this.responseModel) attributes[GEN_AI.responseModel] = this.responseModel;
    const usage = call.bill ? usageOf(call) : undefined;
    if (call.error) attributes[ATTR_ERROR_TYPE] = call.error.code === null ? String(status) : String(call.error.code);
    span.setAttributes(attributes);
    if (usage) span.setAttributes(usage);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: call.error?.message });
    if (this.answering) {
      if (usage) this.answering.setAttributes(usage);
      this.answering.end();
    }
    span.end();
  }
}

/** The bill's tokens and charge as GenAI usage attributes. */
function usageOf(call: RelayCall): Attributes {
  const bill = call.bill!;
  const usage: Attributes = {
    [GEN_AI.inputTokens]: bill.promptTokens,
    [GEN_AI.outputTokens]: bill.completionTokens,
    [SWITCHBOARD.quota]: bill.charge,
  };
  if (bill.pricing?.cachedPromptTokens) usage[GEN_AI.cacheReadTokens] = bill.pricing.cachedPromptTokens;
  if (bill.pricing?.cacheCreationTokens) usage[GEN_AI.cacheWriteTokens] = bill.pricing.cacheCreationTokens;
  return usage;
}
