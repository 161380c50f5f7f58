// What the environment says of tracing (OpenTelemetry's own variables), read
// without loading the SDK: the tracing plugin asks this first, and loads
// tracing.ts only when tracing is on.

/** The OTLP protocol the environment asks for (the traces' own variable first), or why it cannot be had. */
export function otlpProtocol(env: NodeJS.ProcessEnv): 'http/protobuf' | 'http/json' | { refused: string } {
  const asked = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ||
    'http/protobuf'
  ).toLowerCase();
  if (asked === 'http/protobuf' || asked === 'http/json') return asked;
  return {
    refused: `traces are off: OTLP protocol '${asked}' is not offered (OTEL_EXPORTER_OTLP_PROTOCOL takes http/protobuf or http/json)`,
  };
}

/** Whether the environment turns tracing on: an OTLP endpoint named, and the SDK not disabled. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}
