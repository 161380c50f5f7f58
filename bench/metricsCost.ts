// The metrics row: the same gateway build with metrics on (the default) and
// with METRICS_ENABLED=false, chat at c=16 through the OpenAI emulator, in
// alternating rounds so a machine whose speed drifts weighs on both alike.
// Metrics may cost the hot path at most 3% of its throughput, judged on the
// median of the rounds' ratios (one slow round on a shared machine moves the
// ratio of the totals by several percent). The "on" gateway is scraped once a
// second during its runs, as Prometheus would. BENCH_METRICS_AA=1 starts the
// second gateway with metrics on too: the row then shows its own noise.
import { cpuMs } from './processes';
import { median, runWrk, type LoadResult } from './wrk';

export interface MetricsTarget {
  name: string;
  url: string;
  key: string;
  pid: number;
  /** Scraped during its runs. */
  scraped: boolean;
}

/** Keeps GET /metrics going once a second until stopped; how many scrapes answered 200. */
function scrapeEverySecond(url: string) {
  let answered = 0;
  const timer = setInterval(() => {
    void fetch(`${url}/metrics`).then(async (response) => {
      await response.text();
      if (response.status === 200) answered += 1;
    });
  }, 1000);
  return {
    stop: () => {
      clearInterval(timer);
      return answered;
    },
  };
}

export async function metricsCostRows(
  targets: readonly [MetricsTarget, MetricsTarget],
  settings: { seconds: number; rounds: number; warmupSeconds: number; body: unknown; combine: (runs: LoadResult[]) => LoadResult },
): Promise<string[]> {
  const load = (target: MetricsTarget, durationSeconds: number) =>
    runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: settings.body, connections: 16, durationSeconds });
  for (const target of targets) await load(target, settings.warmupSeconds);
  const runs = targets.map(() => [] as LoadResult[]);
  const cpu = targets.map(() => 0);
  let scrapes = 0;
  for (let round = 0; round < settings.rounds; round += 1) {
    for (let turn = 0; turn < targets.length; turn += 1) {
      const which = (round + turn) % targets.length;
      const target = targets[which];
      await load(target, 1);
      const scraper = target.scraped ? scrapeEverySecond(target.url) : undefined;
      const before = cpuMs(target.pid);
      runs[which].push(await load(target, Math.max(1, Math.round(settings.seconds / settings.rounds))));
      cpu[which] += cpuMs(target.pid) - before;
      scrapes += scraper?.stop() ?? 0;
    }
  }
  const [on, off] = runs.map(settings.combine);
  const share = on.requestsPerSecond / off.requestsPerSecond;
  const ratios = runs[0].map((run, round) => run.requestsPerSecond / runs[1][round].requestsPerSecond);
  const byRound = ratios.map((ratio) => ratio.toFixed(3)).join(', ');
  const middle = median(ratios);
  const lines = [
    '',
    `Metrics on vs off (chat c=16, ${settings.rounds} alternating rounds; ${scrapes} scrapes of /metrics answered during the "on" runs)`,
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
  lines.push(
    '',
    '| target | measured | met |',
    '|---|---|---|',
    `| metrics on >= 0.97 x metrics off at c=16, median of the rounds | ${middle.toFixed(3)} x (all rounds together ${share.toFixed(3)} x; round by round ${byRound} x) | ${middle >= 0.97 ? 'yes' : 'NO'} |`,
  );
  return lines;
}
