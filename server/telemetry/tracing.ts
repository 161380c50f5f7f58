// OpenTelemetry traces of the relay, off unless the operator names an OTLP
// endpoint with the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Then each relayed call is a trace
// (relaySpans.ts), exported over OTLP/HTTP in batches, as protobuf (the
// default OpenTelemetry's environment specification gives) or as JSON when
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL says
// http/json; grpc is not offered (tracing stays off and the start says why).
// The sampler, the batch sizes and the resource come from OpenTelemetry's own
// environment variables, read by the SDK itself.
//
// The provider belongs to one app, never registered as the process's global
// one: two apps in one process (the tests) each export their own spans, and a
// library that asks the global API for a tracer gets its no-op. When tracing
// is off nothing of the SDK is made: the relay's one test per request is
// whether the context has a `tracing` function.
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { VERSION } from '../../common/version';
import { otlpProtocol, tracingWanted } from './tracingEnv';

export { otlpProtocol, tracingWanted };

/** The service name when OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) does not say. */
export const DEFAULT_SERVICE_NAME = 'switchboard';

/** An app's tracing when it is on: its tracer, and the flush and stop of its exporter. */
export interface Tracing {
  tracer: Tracer;
  /** Exports what is still queued, then stops the exporter (the app's close calls it). */
  shutdown(): Promise<void>;
  /** Exports what is queued now (the tests call it rather than wait for the batch's delay). */
  flush(): Promise<void>;
}

/**
 * The app's tracing from the process's environment, or undefined when it is off. The SDK reads the sampler
 * (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the batch settings (OTEL_BSP_*), the endpoint and its headers
 * (OTEL_EXPORTER_OTLP_*) and the resource (OTEL_RESOURCE_ATTRIBUTES) from process.env as it is built.
 */
export function makeTracing(env: NodeJS.ProcessEnv = process.env): Tracing | { refused: string } | undefined {
  if (!tracingWanted(env)) return undefined;
  const protocol = otlpProtocol(env);
  if (typeof protocol !== 'string') return protocol;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME, [ATTR_SERVICE_VERSION]: VERSION }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter())],
  });
  return {
    tracer: provider.getTracer('switchboard-relay', VERSION),
    shutdown: () => provider.shutdown(),
    flush: () => provider.forceFlush(),
  };
}
