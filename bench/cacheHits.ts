// The response cache row (docs/cache.md): a hit through the gateway against
// the lean relay's call to the emulator, whole and streamed, c=16, in
// alternating rounds so a machine whose speed drifts weighs on both alike.
// The gateway's cache is turned on for the row alone, asked for by the
// request's header (the main rows before it never use it): each request is
// the same one, so after the first every answer is a hit.
import { consoleCall } from './consoleApi';
import { cpuMs } from './processes';
import { runWrk, type LoadResult } from './wrk';

export interface CacheTarget {
  name: string;
  url: string;
  key: string;
  pid: number;
  headers?: Record<string, string>;
}

interface CacheSettings {
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  plainBody: unknown;
  streamBody: unknown;
  combine: (runs: LoadResult[]) => LoadResult;
}

/** Turns the gateway's cache on (or off again) through the console API. */
export async function setResponseCache(gatewayUrl: string, cookie: string, enabled: boolean): Promise<void> {
  await consoleCall(`${gatewayUrl}/api/option/`, { method: 'PUT', cookie, body: { key: 'ResponseCacheEnabled', value: String(enabled) } });
}

/** The hit through `gateway` against the lean relay, whole and streamed; the gateway's cache must be on. */
export async function cacheHitRows(gateway: CacheTarget, lean: CacheTarget, settings: CacheSettings): Promise<string[]> {
  const hit = { ...gateway, headers: { 'x-switchboard-cache': 'on', ...gateway.headers } };
  const targets = [hit, lean];
  const lines = [
    '',
    `Response cache hits (every request the same, asked with X-Switchboard-Cache: on) against the lean relay's call to the emulator, c=16, ${settings.rounds} alternating rounds`,
    '',
    '| scenario | target | req/s | x lean relay (round by round) | p50 ms | p99 ms | errors | CPU µs/req |',
    '|---|---|---:|---|---:|---:|---:|---:|',
  ];
  for (const [scenario, body] of [
    ['chat', settings.plainBody],
    ['stream', settings.streamBody],
  ] as const) {
    const load = (target: CacheTarget, durationSeconds: number) =>
      runWrk({
        url: `${target.url}/v1/chat/completions`,
        apiKey: target.key,
        headers: target.headers,
        body,
        connections: 16,
        durationSeconds,
      });
    for (const target of targets) await load(target, settings.warmupSeconds);
    const runs = targets.map(() => [] as LoadResult[]);
    const cpu = targets.map(() => 0);
    for (let round = 0; round < settings.rounds; round += 1) {
      for (let turn = 0; turn < targets.length; turn += 1) {
        const which = (round + turn) % targets.length;
        await load(targets[which], 1);
        const before = cpuMs(targets[which].pid);
        runs[which].push(await load(targets[which], Math.max(1, Math.round(settings.seconds / settings.rounds))));
        cpu[which] += cpuMs(targets[which].pid) - before;
      }
    }
    const [ofHit, ofLean] = runs.map(settings.combine);
    const byRound = runs[0].map((run, round) => (run.requestsPerSecond / runs[1][round].requestsPerSecond).toFixed(2)).join(', ');
    targets.forEach((target, index) => {
      const result = index === 0 ? ofHit : ofLean;
      const share = index === 0 ? `${(ofHit.requestsPerSecond / ofLean.requestsPerSecond).toFixed(2)} (${byRound})` : '';
      lines.push(
        `| ${scenario} | ${target.name} | ${result.requestsPerSecond.toFixed(0)} | ${share} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${result.errors} | ${((1000 * cpu[index]) / result.requests).toFixed(0)} |`,
      );
    });
  }
  return lines;
}
