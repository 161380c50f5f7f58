// OpenTelemetry traces of relayed calls, exported over OTLP/HTTP to a
// receiver on loopback (protobuf by default, decoded with a schema of its own
// in tests/support/otlpProtobuf.ts; JSON when OTEL_EXPORTER_OTLP_PROTOCOL says): a SERVER span per call and a CLIENT span per upstream
// attempt with the GenAI attributes, for a plain call, a stream, a call
// retried on a second channel and one that failed everywhere; a client's
// traceparent is the parent and the upstream gets the attempt's; the log row
// keeps the trace id. Off by default (nothing exported, no traceparent sent
// upstream), and a sampling ratio of 0 exports nothing.
//
// Tracing reads the process's environment as the app is built (the SDK reads
// OTEL_* itself): each harness sets the variables around its build and puts
// them back, and its provider is the app's own, never the global one.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otlpProtocol } from '../../server/telemetry/tracing';
import { tracingOf } from '../../server/telemetry/tracingPlugin';
import { decodeTraceExport } from '../support/otlpProtobuf';
import { lastConsumeLog, resetRelay, startRelayHarness, type RelayHarness } from './relay/harness';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code?: number };
  serviceName: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

const valueOf = (value: OtlpValue): unknown =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue));

const attributesOf = (list: Array<{ key: string; value: OtlpValue }> = []) =>
  Object.fromEntries(list.map((attribute) => [attribute.key, valueOf(attribute.value)]));

/** A tiny OTLP/HTTP receiver: collects the spans of every POST /v1/traces, protobuf or JSON by its content type. */
async function startReceiver(): Promise<{
  url: string;
  spans: ExportedSpan[];
  posts: number;
  contentTypes: string[];
  close(): Promise<void>;
}> {
  const state = { spans: [] as ExportedSpan[], posts: 0, contentTypes: [] as string[] };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        state.posts += 1;
        const contentType = String(request.headers['content-type']);
        state.contentTypes.push(contentType);
        const bytes = Buffer.concat(chunks);
        const body = (contentType === 'application/x-protobuf' ? decodeTraceExport(bytes) : JSON.parse(bytes.toString('utf8'))) as {
          resourceSpans?: any[];
        };
        for (const resourceSpans of body.resourceSpans ?? []) {
          const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'];
          for (const scope of resourceSpans.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              state.spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
                status: span.status ?? {},
                serviceName,
              });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get spans() {
      return state.spans;
    },
    get posts() {
      return state.posts;
    },
    get contentTypes() {
      return state.contentTypes;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const OTEL_NAMES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SERVICE_NAME',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
];

/** A relay harness built with exactly these OTEL_* variables set (the others unset), then the environment as it was. */
async function harnessWith(variables: Record<string, string>): Promise<RelayHarness> {
  const saved = Object.fromEntries(OTEL_NAMES.map((name) => [name, process.env[name]]));
  for (const name of OTEL_NAMES) delete process.env[name];
  Object.assign(process.env, variables);
  try {
    return await startRelayHarness();
  } finally {
    for (const name of OTEL_NAMES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

const SERVER = 2;
const CLIENT = 3;
const chat = { model: 'gpt-4', messages: [{ role: 'user', content: 'hello there' }] };
const CLIENT_SPAN = 'b7ad6b7169203331';
/** A client's trace of its own: a fresh id per call, so no test reads another's spans. */
const clientTrace = () => randomBytes(16).toString('hex');

/** The spans of one trace once the app has exported `count` of them. */
async function spansOfTrace(harness: RelayHarness, receiver: { spans: ExportedSpan[] }, traceId: string, count: number) {
  await expect
    .poll(async () => {
      await tracingOf(harness.app)?.flush();
      return receiver.spans.filter((span) => span.traceId === traceId).length;
    })
    .toBe(count);
  return receiver.spans.filter((span) => span.traceId === traceId);
}

describe('with an OTLP endpoint set, a relayed call', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let harness: RelayHarness;
  beforeAll(async () => {
    receiver = await startReceiver();
    harness = await harnessWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  });
  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
  });
  beforeEach(() => resetRelay(harness));

  it('is a server span with a client span per attempt, with the GenAI attributes, and its log keeps the trace id', async () => {
    const channelId = await harness.addChannel({ name: 'plain', key: 'sk-trace-plain-abcd' });
    const response = await harness.post('/v1/chat/completions', chat);
    expect(response.status).toBe(200);
    await harness.settled();
    const log = await lastConsumeLog(harness);
    const traceId = (JSON.parse(String(log.other)) as { traceId: string }).traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = await spansOfTrace(harness, receiver, traceId, 2);
    const server = spans.find((span) => span.kind === SERVER)!;
    const attempt = spans.find((span) => span.kind === CLIENT)!;
    expect(server.serviceName).toBe('switchboard');
    expect(server.parentSpanId).toBe('');
    expect(server.name).toBe('POST /v1/chat/completions');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'switchboard.token.id': harness.tokenId,
      'switchboard.request.id': response.headers.get('x-request-id'),
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4',
      'gen_ai.usage.input_tokens': log.prompt_tokens,
      'gen_ai.usage.output_tokens': log.completion_tokens,
      'switchboard.quota': log.quota,
    });
    expect(server.attributes['switchboard.user.id']).toBe(log.user_id);
    expect(attempt.parentSpanId).toBe(server.spanId);
    expect(attempt.attributes).toMatchObject({
      'switchboard.channel.id': channelId,
      'switchboard.channel.name': 'plain',
      'switchboard.channel.type': 8,
      'switchboard.channel.key_suffix': 'abcd',
      'http.response.status_code': 200,
      'gen_ai.provider.name': 'custom',
      'gen_ai.request.model': 'gpt-4',
      'gen_ai.response.model': 'gpt-4',
      'gen_ai.usage.output_tokens': log.completion_tokens,
    });
    expect(JSON.stringify(spans)).not.toContain('sk-trace-plain-abcd');
    // the upstream got the attempt's context
    const sent = harness.emulator.requests.at(-1)!.headers.traceparent;
    expect(sent).toBe(`00-${traceId}-${attempt.spanId}-01`);
  });

  it('that streams marks its time to first token with an event', async () => {
    const parentTrace = clientTrace();
    await harness.addChannel({ name: 'stream', key: 'sk-trace-stream-wxyz' });
    const response = await harness.post(
      '/v1/chat/completions',
      { ...chat, stream: true, stream_options: { include_usage: true } },
      undefined,
      {
        traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01`,
      },
    );
    expect(response.status).toBe(200);
    await response.text();
    await harness.settled();
    const log = await lastConsumeLog(harness);
    expect(log.is_stream).toBeTruthy();
    const spans = await spansOfTrace(harness, receiver, parentTrace, 2);
    const server = spans.find((span) => span.kind === SERVER)!;
    const attempt = spans.find((span) => span.kind === CLIENT)!;
    expect(server.events.map((event) => event.name)).toEqual(['gen_ai.first_token']);
    expect(server.events[0].attributes['gen_ai.server.time_to_first_token']).toBeGreaterThanOrEqual(0);
    expect(attempt.attributes['gen_ai.usage.output_tokens']).toBe(log.completion_tokens);
  });

  it('honours the client traceparent as its parent and forwards the attempt context upstream', async () => {
    const parentTrace = clientTrace();
    await harness.addChannel({ name: 'parented', key: 'sk-trace-parented-1234' });
    const response = await harness.post('/v1/chat/completions', chat, undefined, {
      traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01`,
      tracestate: 'vendor=opaque',
    });
    expect(response.status).toBe(200);
    const spans = await spansOfTrace(harness, receiver, parentTrace, 2);
    const server = spans.find((span) => span.kind === SERVER)!;
    const attempt = spans.find((span) => span.kind === CLIENT)!;
    expect(server.parentSpanId).toBe(CLIENT_SPAN);
    const upstream = harness.emulator.requests.at(-1)!.headers;
    expect(upstream.traceparent).toBe(`00-${parentTrace}-${attempt.spanId}-01`);
    expect(upstream.tracestate).toBe('vendor=opaque');
    await harness.settled();
    expect((JSON.parse(String((await lastConsumeLog(harness)).other)) as { traceId: string }).traceId).toBe(parentTrace);
  });

  it('retried on a second channel shows both attempts, the first with the retry reason', async () => {
    const parentTrace = clientTrace();
    await harness.app.ctx.options.set('RetryTimes', '1');
    const down = await harness.addChannel({ name: 'down', key: 'sk-down', priority: 10 });
    const good = await harness.addChannel({ name: 'good', key: 'sk-trace-good-5678', priority: 0 });
    const response = await harness.post('/v1/chat/completions', chat, undefined, { traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01` });
    expect(response.status).toBe(200);
    const spans = await spansOfTrace(harness, receiver, parentTrace, 3);
    const attempts = spans.filter((span) => span.kind === CLIENT);
    const failed = attempts.find((span) => span.attributes['switchboard.channel.id'] === down)!;
    const answered = attempts.find((span) => span.attributes['switchboard.channel.id'] === good)!;
    expect(failed.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': 'server_error' });
    expect(failed.attributes['switchboard.retry.reason']).toMatch(/^server_error: /);
    expect(failed.status.code).toBe(2);
    expect(answered.attributes['http.response.status_code']).toBe(200);
    expect(answered.attributes['switchboard.retry.reason']).toBeUndefined();
    // each attempt carried its own span's context
    const sent = harness.emulator.requests.slice(-2).map((request) => request.headers.traceparent);
    expect(sent).toEqual([`00-${parentTrace}-${failed.spanId}-01`, `00-${parentTrace}-${answered.spanId}-01`]);
  });

  it('that fails on every channel ends its server span in error', async () => {
    const parentTrace = clientTrace();
    await harness.addChannel({ name: 'down only', key: 'sk-down' });
    const response = await harness.post('/v1/chat/completions', chat, undefined, { traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01` });
    expect(response.status).toBeGreaterThanOrEqual(500);
    const spans = await spansOfTrace(harness, receiver, parentTrace, 2);
    const server = spans.find((span) => span.kind === SERVER)!;
    expect(server.attributes['http.response.status_code']).toBe(response.status);
    expect(server.attributes['error.type']).toBeDefined();
    expect(server.status.code).toBe(2);
    expect(server.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    // the error log names the trace too
    await harness.settled();
    const errorLog = await harness.app.ctx.db
      .selectFrom('logs')
      .select('other')
      .where('type', '=', 5)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect((JSON.parse(String(errorLog.other)) as { traceId: string }).traceId).toBe(parentTrace);
  });
});

describe('tracing', () => {
  it('exports protobuf by default and JSON when the environment asks, the same spans either way; grpc is refused', async () => {
    const receiver = await startReceiver();
    const traces: string[] = [];
    for (const protocol of [undefined, 'http/json']) {
      const harness = await harnessWith({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        ...(protocol ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}),
      });
      const parentTrace = clientTrace();
      traces.push(parentTrace);
      try {
        await harness.addChannel({ name: `encoded-${protocol ?? 'default'}`, key: 'sk-trace-encoded-4321' });
        const response = await harness.post('/v1/chat/completions', chat, undefined, {
          traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01`,
        });
        expect(response.status).toBe(200);
        await harness.settled();
        const spans = await spansOfTrace(harness, receiver, parentTrace, 2);
        const server = spans.find((span) => span.kind === SERVER)!;
        expect(server.parentSpanId).toBe(CLIENT_SPAN);
        expect(server.attributes['gen_ai.request.model']).toBe('gpt-4');
        expect(typeof server.attributes['gen_ai.usage.input_tokens']).toBe('number');
        expect(spans.find((span) => span.kind === CLIENT)!.parentSpanId).toBe(server.spanId);
      } finally {
        await harness.close();
      }
    }
    expect([...new Set(receiver.contentTypes)]).toEqual(['application/x-protobuf', 'application/json']);
    await receiver.close();
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('http/json');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual({ refused: expect.stringContaining("'grpc' is not offered") });
    const refused = await harnessWith({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    try {
      expect(tracingOf(refused.app)).toBeUndefined();
    } finally {
      await refused.close();
    }
  });

  it('is off by default: nothing exported, no traceparent sent upstream, no trace id logged', async () => {
    const parentTrace = clientTrace();
    const receiver = await startReceiver();
    const harness = await harnessWith({});
    try {
      expect(tracingOf(harness.app)).toBeUndefined();
      await harness.addChannel({ name: 'untraced', key: 'sk-untraced-0000' });
      const response = await harness.post('/v1/chat/completions', chat, undefined, { traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01` });
      expect(response.status).toBe(200);
      expect(harness.emulator.requests.at(-1)!.headers.traceparent).toBeUndefined();
      await harness.settled();
      expect(JSON.parse(String((await lastConsumeLog(harness)).other))).not.toHaveProperty('traceId');
    } finally {
      await harness.close();
    }
    expect(receiver.posts).toBe(0);
    await receiver.close();
  });

  it("exports what is still queued as the app closes, under the operator's service name", async () => {
    const receiver = await startReceiver();
    // a batch that would wait an hour: only the close sends it
    const harness = await harnessWith({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '3600000',
      OTEL_SERVICE_NAME: 'gateway-eu',
    });
    const parentTrace = clientTrace();
    try {
      await harness.addChannel({ name: 'queued', key: 'sk-trace-queued-9999' });
      const response = await harness.post('/v1/chat/completions', chat, undefined, { traceparent: `00-${parentTrace}-${CLIENT_SPAN}-01` });
      expect(response.status).toBe(200);
      await harness.settled();
    } finally {
      await harness.close();
    }
    const spans = receiver.spans.filter((span) => span.traceId === parentTrace);
    expect(spans.map((span) => span.kind).sort()).toEqual([SERVER, CLIENT]);
    expect(spans.every((span) => span.serviceName === 'gateway-eu')).toBe(true);
    await receiver.close();
  });

  it('samples nothing at a ratio of 0: no span exported, no trace id logged', async () => {
    const receiver = await startReceiver();
    const harness = await harnessWith({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    try {
      expect(tracingOf(harness.app)).toBeDefined();
      await harness.addChannel({ name: 'unsampled', key: 'sk-unsampled-0000' });
      expect((await harness.post('/v1/chat/completions', chat)).status).toBe(200);
      // the context still travels, marked as not sampled
      expect(harness.emulator.requests.at(-1)!.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
      await harness.settled();
      expect(JSON.parse(String((await lastConsumeLog(harness)).other))).not.toHaveProperty('traceId');
      await tracingOf(harness.app)!.flush();
    } finally {
      await harness.close();
    }
    expect(receiver.spans).toEqual([]);
    await receiver.close();
  });
});
