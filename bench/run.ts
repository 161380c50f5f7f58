// npm run bench: the gateway against the pass-through floor and a direct call,
// all on loopback with the OpenAI emulator as the upstream and wrk as the load.
// Prints a table with the throughput and latency targets and writes it to bench/results/.
import { spawnSync } from 'node:child_process';
import { request } from 'undici';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMs, placeProcesses, repoRoot, rssMiB, startFlags, startScript, type Started } from './processes';
import { consoleCall, prepareGateway } from './consoleApi';
import { ANTHROPIC_GOOD_KEY } from '../tests/support/emulators/anthropic';
import { firstByte, starvationScenario } from './starvation';
import { runWrk, type LoadResult } from './wrk';
import { workerRows, workersOnlyReport } from './workers';
import { metricsCostRows } from './metricsCost';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Each target's SECONDS per scenario are measured in this many alternating runs. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Load on every target before anything is measured, plain and streamed, in seconds each. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const MODEL = 'gpt-3.5-turbo';
const plainBody = { model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const streamBody = { ...plainBody, stream: true, emulator: { chunks: 20 } };
/** `BENCH_ONLY=metrics` runs the metrics on/off row alone (a quick check of that row). */
const ONLY = process.env.BENCH_ONLY?.trim();
/**
 * `BENCH_BASELINE=<another checkout>` (e.g. a `git worktree` at an older commit, with node_modules): its gateway
 * joins the main rows as a fourth target, in the same alternating rounds, so a change is measured against the
 * code before it in one run rather than across two runs on a machine whose speed drifts.
 */
const BASELINE = process.env.BENCH_BASELINE?.trim();

/** The Anthropic-channel row: an OpenAI client in, the Messages API upstream out (the translated path). */
const CLAUDE_MODEL = 'claude-3-5-haiku-20241022';
const claudePlainBody = { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const claudeStreamBody = { ...claudePlainBody, stream: true };
const ANTHROPIC_HEADERS = { 'x-api-key': ANTHROPIC_GOOD_KEY, 'anthropic-version': '2023-06-01' };

/** Time to the first byte of a streamed answer, in ms. */
async function firstByteAt(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  let ms = Number.NaN;
  for await (const _ of response.body) {
    ms = Number(process.hrtime.bigint() - started) / 1e6;
    break;
  }
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One result of several runs: all their requests over all their time, and the median of their percentiles. */
function combineRuns(runs: LoadResult[]): LoadResult {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const seconds = runs.reduce((sum, run) => sum + run.requests / run.requestsPerSecond, 0);
  return {
    requestsPerSecond: requests / seconds,
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    requests,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

/**
 * Median time to the first token of each target, in ms. The samples of the
 * targets alternate, so a machine that slows down or speeds up during the
 * measurement weighs on every target alike.
 */
async function timeToFirstToken(targets: ReadonlyArray<{ url: string; key: string }>, samples = 200): Promise<number[]> {
  const times = targets.map(() => [] as number[]);
  for (let index = 0; index < samples; index += 1) {
    for (let turn = 0; turn < targets.length; turn += 1) {
      const which = (index + turn) % targets.length;
      times[which].push((await firstByte(targets[which].url, targets[which].key, streamBody)).ms);
    }
  }
  return times.map(median);
}

/** A target of the protocol rows: `direct` names the row of the vendor emulator it ends at. */
interface ProtocolTarget {
  name: string;
  url: string;
  apiKey: string;
  headers: Record<string, string>;
  body: unknown;
  streamBody: unknown;
  pid: number;
  direct?: number;
}

/** The protocol rows: every target in alternating rounds at c=16, then alternating samples of the time to a stream's first byte. */
async function protocolRows(targets: readonly ProtocolTarget[]): Promise<string[]> {
  const runs = targets.map(() => [] as LoadResult[]);
  const cpu = targets.map(() => 0);
  for (const target of targets) await runWrk({ ...target, connections: 16, durationSeconds: WARMUP_SECONDS });
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let turn = 0; turn < targets.length; turn += 1) {
      const target = targets[(round + turn) % targets.length];
      const which = targets.indexOf(target);
      await runWrk({ ...target, connections: 16, durationSeconds: 1 });
      const before = cpuMs(target.pid);
      runs[which].push(await runWrk({ ...target, connections: 16, durationSeconds: Math.max(1, Math.round(SECONDS / ROUNDS)) }));
      cpu[which] += cpuMs(target.pid) - before;
    }
  }
  const firstBytes = targets.map(() => [] as number[]);
  for (let index = 0; index < 100; index += 1) {
    for (let turn = 0; turn < targets.length; turn += 1) {
      const which = (index + turn) % targets.length;
      const target = targets[which];
      firstBytes[which].push(await firstByteAt(target.url, { authorization: `Bearer ${target.apiKey}`, ...target.headers }, target.streamBody));
    }
  }
  const results = runs.map(combineRuns);
  const lines = [
    '',
    `Client protocols and channels of other protocols (${CLAUDE_MODEL} on the Anthropic emulator, ${MODEL} on the OpenAI one), c=16, ${ROUNDS} alternating rounds`,
    '',
    '| target | req/s | x its vendor direct (round by round) | p50 ms | p99 ms | errors | CPU µs/req | first byte of a stream (median of 100) | added |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  targets.forEach((target, index) => {
    const result = results[index];
    const direct = target.direct;
    const share =
      direct === undefined
        ? ''
        : `${(result.requestsPerSecond / results[direct].requestsPerSecond).toFixed(2)} (${runs[index].map((run, round) => (run.requestsPerSecond / runs[direct][round].requestsPerSecond).toFixed(2)).join(', ')})`;
    const added = direct === undefined ? '' : `${(median(firstBytes[index]) - median(firstBytes[direct])).toFixed(3)} ms`;
    lines.push(
      `| ${target.name} | ${result.requestsPerSecond.toFixed(0)} | ${share} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${result.errors} | ${((1000 * cpu[index]) / result.requests).toFixed(0)} | ${median(firstBytes[index]).toFixed(3)} ms | ${added} |`,
    );
  });
  return lines;
}

/**
 * This build against BENCH_BASELINE's, scenario by scenario: the ratio of their throughputs over all rounds and
 * round by round (the spread), their CPU per request, the time to first token and the RSS after the run.
 */
function baselineLines(
  results: Record<string, Record<string, LoadResult>>,
  roundsOf: Record<string, LoadResult[][]>,
  cpuPerRequest: Record<string, Record<string, number>>,
  ttftDelta: number,
  rss: number,
  baselineRss: number,
): string[] {
  const lines = [
    '',
    `This build against the baseline (${BASELINE}), same rounds`,
    '',
    '| scenario | req/s this / baseline | round by round | CPU µs/req this / baseline | p99 ms this / baseline |',
    '|---|---:|---|---|---|',
  ];
  for (const [scenario, byTarget] of Object.entries(results)) {
    const [, , mine, theirs] = roundsOf[scenario];
    const rounds = mine.map((run, round) => (run.requestsPerSecond / theirs[round].requestsPerSecond).toFixed(2)).join(', ');
    lines.push(
      `| ${scenario} | ${(byTarget.switchboard.requestsPerSecond / byTarget.baseline.requestsPerSecond).toFixed(2)} | ${rounds} | ${cpuPerRequest[scenario].switchboard.toFixed(0)} / ${cpuPerRequest[scenario].baseline.toFixed(0)} | ${byTarget.switchboard.p99Ms.toFixed(2)} / ${byTarget.baseline.p99Ms.toFixed(2)} |`,
    );
  }
  lines.push('', `Time to first token, this minus baseline: ${ttftDelta.toFixed(3)} ms. RSS after the run: ${rss.toFixed(1)} MiB / ${baselineRss.toFixed(1)} MiB.`);
  return lines;
}

/** wrk comes from Debian's packages; install it when we can, else say how. */
function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  if (process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).error === undefined) {
    console.log('[bench] installing wrk (apt-get install -y wrk)');
    if (spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'inherit' }).status === 0) return;
  }
  console.error('[bench] wrk is needed: apt-get install wrk');
  process.exit(1);
}

ensureWrk();
if (process.env.BENCH_ONLY === 'workers') {
  await workersOnlyReport({ model: MODEL, body: plainBody, seconds: SECONDS, rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS });
  process.exit(0);
}
const placement = placeProcesses();
const started: Started[] = [];
try {
  const emulator = await startScript('emulatorProcess', {});
  started.push(emulator);
  const gateway = await startScript('gatewayProcess', {}, startFlags());
  started.push(gateway);

  const { rootCookie: cookie, key: gatewayKey } = await prepareGateway(gateway.url, emulator.url, MODEL);

  // the same build with metrics off, for the metrics row
  const withoutMetrics = await startScript('gatewayProcess', { METRICS_ENABLED: 'false' }, startFlags());
  started.push(withoutMetrics);
  const { key: withoutMetricsKey } = await prepareGateway(withoutMetrics.url, emulator.url, MODEL);
  placement.pinMeasured(withoutMetrics.child.pid!);
  const metricsRows = () =>
    metricsCostRows(
      [
        { name: 'switchboard, metrics on', url: gateway.url, key: gatewayKey, pid: gateway.child.pid!, scraped: true },
        { name: 'switchboard, METRICS_ENABLED=false', url: withoutMetrics.url, key: withoutMetricsKey, pid: withoutMetrics.child.pid!, scraped: false },
      ],
      { seconds: SECONDS, rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS, body: plainBody, combine: combineRuns },
    );
  if (ONLY === 'metrics') {
    placement.pinMeasured(gateway.child.pid!);
    console.log([`# Switchboard benchmark, metrics row only (${new Date().toISOString()}; CPU placement: ${placement.description})`, ...(await metricsRows())].join('\n'));
    await Promise.all(started.map((part) => part.stop()));
    process.exit(0);
  }

  const anthropic = await startScript('anthropicEmulatorProcess', {});
  started.push(anthropic);
  await consoleCall(`${gateway.url}/api/channel/`, {
    method: 'POST',
    cookie,
    body: { name: 'anthropic emulator', type: 14, key: ANTHROPIC_GOOD_KEY, base_url: anthropic.url, models: CLAUDE_MODEL },
  });

  const passthrough = await startScript('passthroughProcess', { UPSTREAM_URL: emulator.url, CLIENT_KEY: 'sk-bench' });
  started.push(passthrough);
  placement.pinMeasured(gateway.child.pid!);
  placement.pinMeasured(passthrough.child.pid!);

  const targets = [
    { name: 'direct', url: emulator.url, key: 'sk-good', pid: emulator.child.pid! },
    { name: 'pass-through', url: passthrough.url, key: 'sk-bench', pid: passthrough.child.pid! },
    { name: 'switchboard', url: gateway.url, key: gatewayKey, pid: gateway.child.pid! },
  ];
  let baselinePid: number | undefined;
  if (BASELINE) {
    const baseline = await startScript('gatewayProcess', {}, startFlags(), BASELINE);
    started.push(baseline);
    const { key } = await prepareGateway(baseline.url, emulator.url, MODEL);
    baselinePid = baseline.child.pid!;
    placement.pinMeasured(baselinePid);
    targets.push({ name: 'baseline', url: baseline.url, key, pid: baselinePid });
  }
  const scenarios = [
    { name: 'chat c=1', body: plainBody, connections: 1 },
    { name: 'chat c=16', body: plainBody, connections: 16 },
    { name: 'chat c=64', body: plainBody, connections: 64 },
    { name: 'stream(20) c=16', body: streamBody, connections: 16 },
  ];
  // Warm up first: the gateway has far more code than the pass-through for V8 to compile and optimise,
  // and what the targets are about is a serving process, not the first seconds after a start.
  for (const target of targets) {
    await runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: plainBody, connections: 16, durationSeconds: WARMUP_SECONDS });
    await runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: streamBody, connections: 16, durationSeconds: WARMUP_SECONDS });
  }
  const results: Record<string, Record<string, LoadResult>> = {};
  /** CPU time (all threads) the serving process spent per request, in µs: for direct, the emulator's. */
  const cpuPerRequest: Record<string, Record<string, number>> = {};
  /** Each scenario's runs, by target and then round: runs of one round were back to back. */
  const roundsOf: Record<string, LoadResult[][]> = {};
  for (const scenario of scenarios) {
    const load = (target: (typeof targets)[number], durationSeconds: number) =>
      runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: scenario.body, connections: scenario.connections, durationSeconds });
    // the targets take turns, ROUNDS short runs each, so a machine whose speed drifts
    // during the scenario (as shared virtual machines do) weighs on every target alike
    const runs = targets.map(() => [] as LoadResult[]);
    const cpu = targets.map(() => 0);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let turn = 0; turn < targets.length; turn += 1) {
        const which = (round + turn) % targets.length;
        // a second of the same load first: a process that sat idle while the others ran is warm again
        await load(targets[which], 1);
        const before = cpuMs(targets[which].pid);
        const run = await load(targets[which], Math.max(1, Math.round(SECONDS / ROUNDS)));
        cpu[which] += cpuMs(targets[which].pid) - before;
        runs[which].push(run);
      }
    }
    roundsOf[scenario.name] = runs;
    results[scenario.name] = Object.fromEntries(targets.map((target, index) => [target.name, combineRuns(runs[index])]));
    cpuPerRequest[scenario.name] = Object.fromEntries(targets.map((target, index) => [target.name, (1000 * cpu[index]) / combineRuns(runs[index]).requests]));
  }

  const [ttftDirect, ttftPassthrough, ttftGateway, ttftBaseline] = await timeToFirstToken(targets);

  // Client protocols and channels of other protocols: each way through the gateway against the vendor
  // emulator it ends at, called directly in its own protocol; all targets in alternating rounds, then the
  // time to the first byte of a stream, the targets alternating too.
  const claudeStreamVia = { ...claudeStreamBody, max_tokens: undefined };
  const messagesToOpenAi = { model: MODEL, max_tokens: 64, messages: claudePlainBody.messages };
  const protocolTargets: ProtocolTarget[] = [
    {
      name: 'Messages emulator direct',
      url: `${anthropic.url}/v1/messages`,
      apiKey: 'unused',
      headers: ANTHROPIC_HEADERS,
      body: claudePlainBody,
      streamBody: claudeStreamBody,
      pid: anthropic.child.pid!,
    },
    {
      name: 'OpenAI emulator direct',
      url: `${emulator.url}/v1/chat/completions`,
      apiKey: 'sk-good',
      headers: {},
      body: plainBody,
      streamBody: { ...plainBody, stream: true },
      pid: emulator.child.pid!,
    },
    {
      name: 'chat -> Anthropic channel (translated)',
      direct: 0,
      url: `${gateway.url}/v1/chat/completions`,
      apiKey: gatewayKey,
      headers: {},
      body: { ...claudePlainBody, max_tokens: undefined },
      streamBody: claudeStreamVia,
      pid: gateway.child.pid!,
    },
    {
      name: '/v1/messages -> Anthropic channel (passthrough)',
      direct: 0,
      url: `${gateway.url}/v1/messages`,
      apiKey: gatewayKey,
      headers: { 'anthropic-version': '2023-06-01' },
      body: claudePlainBody,
      streamBody: claudeStreamBody,
      pid: gateway.child.pid!,
    },
    {
      name: '/v1/messages -> OpenAI channel (translated)',
      direct: 1,
      url: `${gateway.url}/v1/messages`,
      apiKey: gatewayKey,
      headers: { 'anthropic-version': '2023-06-01' },
      body: messagesToOpenAi,
      streamBody: { ...messagesToOpenAi, stream: true },
      pid: gateway.child.pid!,
    },
  ];
  const protocolLines = await protocolRows(protocolTargets);
  const metricsLines = await metricsRows();
  const rss = rssMiB(gateway.child.pid!);

  const lines = ['| scenario | target | req/s | p50 ms | p99 ms | errors | CPU µs/req |', '|---|---|---:|---:|---:|---:|---:|'];
  for (const [scenario, byTarget] of Object.entries(results)) {
    for (const [target, result] of Object.entries(byTarget)) {
      lines.push(
        `| ${scenario} | ${target} | ${result.requestsPerSecond.toFixed(0)} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${result.errors} | ${cpuPerRequest[scenario][target].toFixed(0)} |`,
      );
    }
  }
  const c16 = results['chat c=16'];
  const c1 = results['chat c=1'];
  const addedGateway = c1.switchboard.p50Ms - c1.direct.p50Ms;
  const addedPassthrough = c1['pass-through'].p50Ms - c1.direct.p50Ms;
  const ttftAdded = ttftGateway - ttftDirect;
  // the same ratios within each round alone: how far apart runs of one build land on this machine
  const [directRounds, passthroughRounds, gatewayRounds] = roundsOf['chat c=1'];
  const roundRatios = gatewayRounds.map((run, round) => (run.p50Ms - directRounds[round].p50Ms) / (passthroughRounds[round].p50Ms - directRounds[round].p50Ms));
  const [, passthroughRounds16, gatewayRounds16] = roundsOf['chat c=16'];
  const roundShares16 = gatewayRounds16.map((run, round) => run.requestsPerSecond / passthroughRounds16[round].requestsPerSecond);
  const listed = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
  const checks = [
    [
      `c=16 req/s >= 0.8 x pass-through`,
      `${c16.switchboard.requestsPerSecond.toFixed(0)} vs ${(0.8 * c16['pass-through'].requestsPerSecond).toFixed(0)} (${(c16.switchboard.requestsPerSecond / c16['pass-through'].requestsPerSecond).toFixed(2)} x; round by round ${listed(roundShares16)} x)`,
      c16.switchboard.requestsPerSecond >= 0.8 * c16['pass-through'].requestsPerSecond,
    ],
    [
      `c=1 added p50 <= 1.25 x pass-through's`,
      `${addedGateway.toFixed(3)} ms vs ${(1.25 * addedPassthrough).toFixed(3)} ms (${(addedGateway / addedPassthrough).toFixed(2)} x; round by round ${listed(roundRatios)} x)`,
      addedGateway <= 1.25 * addedPassthrough,
    ],
    [
      'time to first token added < 1 ms',
      `${ttftAdded.toFixed(3)} ms (direct ${ttftDirect.toFixed(3)}, gateway ${ttftGateway.toFixed(3)}; the pass-through adds ${(ttftPassthrough - ttftDirect).toFixed(3)})`,
      ttftAdded < 1,
    ],
    ['gateway RSS after the run < 150 MiB', `${rss.toFixed(1)} MiB`, rss < 150],
  ] as const;
  lines.push('', '| target | measured | met |', '|---|---|---|');
  for (const [name, measured, met] of checks) lines.push(`| ${name} | ${measured} | ${met ? 'yes' : 'NO'} |`);
  if (baselinePid !== undefined) lines.push(...baselineLines(results, roundsOf, cpuPerRequest, ttftGateway - ttftBaseline, rss, rssMiB(baselinePid)));
  // last, so the flood cannot weigh on the rows above
  const starvation = await starvationScenario({ gateway: gateway.url, rootCookie: cookie, floodKey: gatewayKey });
  // 1 and 2 workers on PostgreSQL, each a gateway of its own (the one measured above sits idle meanwhile)
  const workers = await workerRows({ emulatorUrl: emulator.url, model: MODEL, body: plainBody, seconds: SECONDS, rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS });
  const report = [
    `# Switchboard benchmark (${new Date().toISOString()}, ${SECONDS}s per target and scenario in ${ROUNDS} alternating runs, wrk on loopback)`,
    '',
    `CPU placement: ${placement.description}.`,
    '',
    ...lines,
    ...protocolLines,
    ...metricsLines,
    '',
    ...starvation,
    ...workers,
  ].join('\n');
  console.log(report);
  const resultsDir = join(repoRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.md'), report);
  console.log(`written to bench/results/latest.md`);
} finally {
  await Promise.all(started.map((part) => part.stop()));
}
