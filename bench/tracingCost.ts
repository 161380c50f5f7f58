// The tracing row: the same gateway build with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT
// naming a local OTLP/HTTP sink in this process, every call sampled) and off (the
// default), chat at c=16 through the OpenAI emulator, in alternating rounds so
// a machine whose speed drifts weighs on both alike. The sink answers each
// export at once and keeps only counts, so what is measured is the gateway's
// own work: two spans a call, their attributes and the batched export.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpuMs } from './processes';
import { decodeTraceExport } from '../tests/support/otlpProtobuf';
import { runWrk, type LoadResult } from './wrk';

export interface TracingTarget {
  name: string;
  url: string;
  key: string;
  pid: number;
}

/** An OTLP/HTTP endpoint on loopback that counts the exports and the spans in them, and keeps nothing else. */
export async function startOtlpSink(): Promise<{ url: string; exports: () => number; spans: () => number; close(): Promise<void> }> {
  let exports = 0;
  let spans = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        exports += 1;
        const bytes = Buffer.concat(chunks);
        if (request.headers['content-type'] === 'application/x-protobuf') {
          // the gateway's default encoding
          const decoded = decodeTraceExport(bytes) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: unknown[] }> }> };
          for (const resource of decoded.resourceSpans ?? [])
            for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
        }
        // in JSON each span has one "spanId" key (its parent's is "parentSpanId")
        else spans += bytes.toString('utf8').split('"spanId"').length - 1;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    spans: () => spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function tracingCostRows(
  targets: readonly [on: TracingTarget, off: TracingTarget],
  sink: { exports: () => number; spans: () => number },
  settings: { seconds: number; rounds: number; warmupSeconds: number; body: unknown; combine: (runs: LoadResult[]) => LoadResult },
): Promise<string[]> {
  const load = (target: TracingTarget, durationSeconds: number) =>
    runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: settings.body, connections: 16, durationSeconds });
  for (const target of targets) await load(target, settings.warmupSeconds);
  const runs = targets.map(() => [] as LoadResult[]);
  const cpu = targets.map(() => 0);
  const spansBefore = sink.spans();
  for (let round = 0; round < settings.rounds; round += 1) {
    for (let turn = 0; turn < targets.length; turn += 1) {
      const which = (round + turn) % targets.length;
      const target = targets[which];
      await load(target, 1);
      const before = cpuMs(target.pid);
      runs[which].push(await load(target, Math.max(1, Math.round(settings.seconds / settings.rounds))));
      cpu[which] += cpuMs(target.pid) - before;
    }
  }
  const [on, off] = runs.map(settings.combine);
  const share = on.requestsPerSecond / off.requestsPerSecond;
  const byRound = runs[0].map((run, round) => (run.requestsPerSecond / runs[1][round].requestsPerSecond).toFixed(3)).join(', ');
  const lines = [
    '',
    `Tracing on vs off (chat c=16, ${settings.rounds} alternating rounds; the "on" gateway exported ${sink.spans() - spansBefore} spans in ${sink.exports()} OTLP/HTTP posts to a local sink)`,
    '',
    '| target | req/s | p50 ms | p99 ms | errors | CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  targets.forEach((target, index) => {
    const result = index === 0 ? on : off;
    lines.push(
      `| ${target.name} | ${result.requestsPerSecond.toFixed(0)} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${result.errors} | ${((1000 * cpu[index]) / result.requests).toFixed(0)} |`,
    );
  });
  lines.push('', `Tracing on serves ${share.toFixed(3)} x what tracing off serves at c=16 (round by round ${byRound} x).`);
  return lines;
}
