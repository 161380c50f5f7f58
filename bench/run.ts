// npm run bench: the gateway against the lean relay (the floor: bench/passthrough.ts) and a direct call,
// all on loopback with the OpenAI emulator as the upstream and wrk as the load.
// Prints a table with the throughput and latency targets and writes it to bench/results/.
// BENCH_DB=postgres|mysql adds the gateway on that database server to the same rounds, with its commits per
// request; BENCH_ONLY=rss drives the SQLite gateway through a million requests and tracks its RSS (bench/rss.ts);
// BENCH_ONLY=realtime runs the realtime row alone (bench/realtime.ts).
import { spawnSync } from 'node:child_process';
import { request } from 'undici';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMs, placeProcesses, repoRoot, rssMiB, startFlags, startScript, type Placement, type Started } from './processes';
import { consoleCall, prepareGateway } from './consoleApi';
import { ANTHROPIC_GOOD_KEY } from '../tests/support/emulators/anthropic';
import { BEDROCK_CHANNELS } from '../tests/support/emulators/bedrock';
import { bedrockAdaptor } from '../server/protocols/upstream/bedrock';
import { isUpstreamFailure } from '../server/protocols/types';
import { firstByte, starvationScenario } from './starvation';
import { combineRuns, median, runWrk, type LoadResult } from './wrk';
import { workerRows, workersOnlyReport } from './workers';
import { metricsCostRows } from './metricsCost';
import { startOtlpSink, tracingCostRows } from './tracingCost';
import { cacheHitRows, setResponseCache } from './cacheHits';
import { signingCostRows } from './signingCost';
import { longStreamReport } from './longStreams';
import { batchFairnessReport } from './batchFairness';
import { benchDatabaseKind, CommitWindows, createBenchDatabase, DATABASE_LABELS, type BenchDatabase } from './databases';
import { rssReport } from './rss';
import { REALTIME_MODEL, realtimeRows, type RealtimeTarget } from './realtime';
import { REALTIME_GOOD_KEY } from '../tests/support/emulators/realtime';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Each target's SECONDS per scenario are measured in this many alternating runs. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Load on every target before anything is measured, plain and streamed, in seconds each. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const MODEL = 'gpt-3.5-turbo';
const plainBody = { model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const streamBody = { ...plainBody, stream: true, emulator: { chunks: 20 } };
/** A long answer's stream: against the short one, what each further chunk costs once a request's own work is paid. */
const longStreamBody = { ...plainBody, stream: true, emulator: { chunks: 200 } };
/**
 * `BENCH_ONLY=metrics` runs the metrics on/off row alone (a quick check of that row); `workers` the workers rows
 * alone; `rss` the RSS of the SQLite gateway over a million requests (BENCH_RSS_REQUESTS) and nothing else;
 * `realtime` the realtime row alone; `cache` the response cache row alone; `tracing` the tracing on/off row alone;
 * `signing` the SigV4 signing row alone; `streams` the long-stream row (1,000 streams held open for five minutes);
 * `protocols` the protocol rows alone, each way through the gateway against its vendor and its protocol's lean relay.
 */
const ONLY = process.env.BENCH_ONLY?.trim();
/**
 * `BENCH_BASELINE=<another checkout>` (e.g. a `git worktree` at an older commit, with node_modules): its gateway
 * joins the main rows as a fourth target, in the same alternating rounds, so a change is measured against the
 * code before it in one run rather than across two runs on a machine whose speed drifts.
 */
const BASELINE = process.env.BENCH_BASELINE?.trim();
/**
 * `BENCH_DB=postgres|mysql`: the gateway also runs on that server (a fresh database, dropped afterwards) as a
 * target of the main rows beside the SQLite one, in the same rounds; the baseline, if any, runs on it too.
 */
const DATABASE = benchDatabaseKind(process.env.BENCH_DB);

/** The Anthropic-channel row: an OpenAI client in, the Messages API upstream out (the translated path). */
const CLAUDE_MODEL = 'claude-3-5-haiku-20241022';
const claudePlainBody = { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const claudeStreamBody = { ...claudePlainBody, stream: true };
const ANTHROPIC_HEADERS = { 'x-api-key': ANTHROPIC_GOOD_KEY, 'anthropic-version': '2023-06-01' };

/** The Bedrock row: an OpenAI client in, Converse out, each call signed with SigV4 (another Claude than the Anthropic row's, so each has its channel). */
const BEDROCK_MODEL = 'claude-3-haiku-20240307';
const bedrockPlainBody = { model: BEDROCK_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const BEDROCK_KEY = BEDROCK_CHANNELS[0].key;
/** The same Converse way without a signature: a Bedrock API key (a bearer) on a channel of its own model. */
const BEDROCK_UNSIGNED_MODEL = 'claude-3-sonnet-20240229';
const BEDROCK_API_KEY_CHANNEL = BEDROCK_CHANNELS[1].key;

/**
 * The Converse call the gateway makes for `bedrockPlainBody`, encoded and
 * signed once by the adaptor: the direct row sends it as it is (the bench
 * emulator takes signatures an hour old), so the emulator verifies a
 * signature on both rows alike.
 */
async function presignedConverse(
  emulatorUrl: string,
  stream: boolean,
): Promise<{ url: string; headers: Record<string, string>; body: unknown }> {
  const channel = { type: 33, key: BEDROCK_KEY, baseUrl: emulatorUrl, other: '' };
  const call = { operation: 'chat' as const, model: BEDROCK_MODEL, stream, responseId: 'bench', now: Math.floor(Date.now() / 1000) };
  const body = bedrockAdaptor.encodeChat(bedrockPlainBody, call);
  const target = bedrockAdaptor.target(channel, call);
  const signed = isUpstreamFailure(target) ? target : await bedrockAdaptor.sign!(target, body, channel, call);
  if (isUpstreamFailure(signed)) throw new Error(signed.message);
  // `Authorization` as wrk writes it, so the signature replaces wrk's bearer rather than joining it
  const { authorization, ...headers } = signed.headers;
  return { url: signed.url, headers: { ...headers, Authorization: authorization }, body: JSON.parse(body) as unknown };
}

/** Time to the first byte of a streamed answer, in ms. */
async function firstByteAt(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  let ms = Number.NaN;
  for await (const _ of response.body) {
    ms = Number(process.hrtime.bigint() - started) / 1e6;
    break;
  }
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
  return ms;
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
  /** Where the stream goes and its headers, when not `url` and `headers` (Bedrock's ConverseStream is another path, signed apart). */
  streamUrl?: string;
  streamHeaders?: Record<string, string>;
  pid: number;
  direct?: number;
  /** The row of the lean relay of the protocol it ends at (bench/passthrough.ts), relaying the same bytes. */
  lean?: number;
  /** For a signed way, the row of a like way unsigned: its CPU per request must stay within SIGNED_CPU_CEILING of that one's. */
  unsigned?: number;
}

/** What signing a call (SigV4) may add to the gateway's CPU per request, as a multiple of a like unsigned call. */
const SIGNED_CPU_CEILING = 1.3;

/** The share of the lean relay of its protocol each translated or passed-through row must reach. */
const PROTOCOL_FLOOR = 0.6;

/**
 * One request every SEQUENTIAL_PACE_MS in the one-at-a-time rows. Sent back to back, a way whose upstream answers
 * later (the Converse emulator checks a signature: 100 µs more) leaves the gateway idle longer between requests,
 * and a core woken from a longer idle runs the same work slower: the signed way read 1.33 to 1.52 x the unsigned
 * one's CPU back to back while its own work (profiled) was 8% more. At a common pace both idle alike.
 */
const SEQUENTIAL_PACE_MS = 2;

/** CPU µs per request of each target's process, requests sent one at a time at a fixed pace, the targets alternating by round. */
async function sequentialCpu(targets: readonly ProtocolTarget[], rounds = ROUNDS + 1, requests = 500): Promise<number[][]> {
  const perRound = targets.map(() => [] as number[]);
  const send = async (target: ProtocolTarget) => {
    const response = await request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}`, ...target.headers },
      body: JSON.stringify(target.body),
    });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`${target.name} answered ${response.statusCode}`);
  };
  for (const target of targets) for (let index = 0; index < 100; index += 1) await send(target);
  for (let round = 0; round < rounds; round += 1) {
    for (const [which, target] of targets.entries()) {
      const before = cpuMs(target.pid);
      const start = performance.now();
      for (let index = 0; index < requests; index += 1) {
        await send(target);
        const wait = start + (index + 1) * SEQUENTIAL_PACE_MS - performance.now();
        if (wait > 0) await new Promise((resolveWait) => setTimeout(resolveWait, wait));
      }
      perRound[which].push((1000 * (cpuMs(target.pid) - before)) / requests);
    }
  }
  return perRound;
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
      const headers = target.streamHeaders ?? target.headers;
      // a target that carries its own authorization (a SigV4 signature) sends no bearer beside it
      const bearer: Record<string, string> = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')
        ? {}
        : { authorization: `Bearer ${target.apiKey}` };
      firstBytes[which].push(await firstByteAt(target.streamUrl ?? target.url, { ...bearer, ...headers }, target.streamBody));
    }
  }
  const results = runs.map(combineRuns);
  const lines = [
    '',
    `Client protocols and channels of other protocols (${CLAUDE_MODEL} on the Anthropic emulator, ${BEDROCK_MODEL} on the Bedrock one, ${MODEL} on the OpenAI one), c=16, ${ROUNDS} alternating rounds`,
    '',
    '| target | req/s | x its vendor direct (round by round) | x the lean relay of its protocol (round by round) | p50 ms | p99 ms | errors | CPU µs/req | first byte of a stream (median of 100) | added |',
    '|---|---:|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  /** `index`'s throughput over `other`'s: over all rounds, and round by round. */
  const shareOf = (index: number, other: number | undefined) =>
    other === undefined
      ? undefined
      : {
          all: results[index].requestsPerSecond / results[other].requestsPerSecond,
          rounds: runs[index].map((run, round) => run.requestsPerSecond / runs[other][round].requestsPerSecond),
        };
  const shown = (share: { all: number; rounds: number[] } | undefined) =>
    share === undefined ? '' : `${share.all.toFixed(2)} (${share.rounds.map((value) => value.toFixed(2)).join(', ')})`;
  const checks: string[] = [];
  targets.forEach((target, index) => {
    const result = results[index];
    const direct = target.direct;
    const lean = shareOf(index, target.lean);
    const added = direct === undefined ? '' : `${(median(firstBytes[index]) - median(firstBytes[direct])).toFixed(3)} ms`;
    lines.push(
      `| ${target.name} | ${result.requestsPerSecond.toFixed(0)} | ${shown(shareOf(index, direct))} | ${shown(lean)} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${result.errors} | ${((1000 * cpu[index]) / result.requests).toFixed(0)} | ${median(firstBytes[index]).toFixed(3)} ms | ${added} |`,
    );
    if (lean !== undefined)
      checks.push(
        `| ${target.name} >= ${PROTOCOL_FLOOR} x ${targets[target.lean!].name}, median of the rounds | ${median(lean.rounds).toFixed(2)} x (all rounds together ${lean.all.toFixed(2)} x) | ${median(lean.rounds) >= PROTOCOL_FLOOR ? 'yes' : 'NO'} |`,
      );
  });
  for (const target of targets) {
    if (target.unsigned === undefined) continue;
    // one request at a time at a common pace, so neither way's CPU per request depends on how fast its upstream answers
    const [signed, unsigned] = await sequentialCpu([target, targets[target.unsigned]]);
    // each round's two ways are measured side by side: the median of their ratios, as the other checks judge
    const byRound = signed.map((value, round) => value / unsigned[round]);
    const ratio = median(byRound);
    checks.push(
      `| ${target.name}: CPU per request <= ${SIGNED_CPU_CEILING} x ${targets[target.unsigned].name}'s, one request every ${SEQUENTIAL_PACE_MS} ms, median of the rounds | ${ratio.toFixed(2)} x (round by round ${byRound.map((value) => value.toFixed(2)).join(', ')}; medians ${median(signed).toFixed(0)} vs ${median(unsigned).toFixed(0)} µs, ${(median(signed) / median(unsigned)).toFixed(2)} x) | ${ratio <= SIGNED_CPU_CEILING ? 'yes' : 'NO'} |`,
    );
  }
  lines.push('', '| target | measured | met |', '|---|---|---|', ...checks);
  return lines;
}

/**
 * This build against BENCH_BASELINE's, scenario by scenario: the ratio of their throughputs over all rounds and
 * round by round (the spread), their CPU per request, the time to first token and the RSS after the run.
 * `mine` names the target the baseline is held against: the gateway on the database the baseline runs on.
 */
function baselineLines(
  mine: string,
  results: Record<string, Record<string, LoadResult>>,
  runsOf: (scenario: string, target: string) => LoadResult[],
  cpuPerRequest: Record<string, Record<string, number>>,
  ttftDelta: number,
  rss: number,
  baselineRss: number,
): string[] {
  const lines = [
    '',
    `This build (${mine}) against the baseline (${BASELINE}), same rounds`,
    '',
    '| scenario | req/s this / baseline | round by round | CPU µs/req this / baseline | p99 ms this / baseline |',
    '|---|---:|---|---|---|',
  ];
  for (const [scenario, byTarget] of Object.entries(results)) {
    const theirs = runsOf(scenario, 'baseline');
    const rounds = runsOf(scenario, mine)
      .map((run, round) => (run.requestsPerSecond / theirs[round].requestsPerSecond).toFixed(2))
      .join(', ');
    lines.push(
      `| ${scenario} | ${(byTarget[mine].requestsPerSecond / byTarget.baseline.requestsPerSecond).toFixed(2)} | ${rounds} | ${cpuPerRequest[scenario][mine].toFixed(0)} / ${cpuPerRequest[scenario].baseline.toFixed(0)} | ${byTarget[mine].p99Ms.toFixed(2)} / ${byTarget.baseline.p99Ms.toFixed(2)} |`,
    );
  }
  lines.push(
    '',
    `Time to first token, this minus baseline: ${ttftDelta.toFixed(3)} ms. RSS after the run: ${rss.toFixed(1)} MiB / ${baselineRss.toFixed(1)} MiB.`,
  );
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

/** A target of the main rows; `database` is set for a gateway on a database server, whose commits are counted. */
interface MainTarget {
  name: string;
  url: string;
  key: string;
  pid: number;
  database?: BenchDatabase;
}

/** What the protocol rows run against: the emulators, the gateway and the lean relays of each vendor protocol. */
interface ProtocolParts {
  started: Started[];
  placement: Placement;
  gateway: Started;
  gatewayKey: string;
  emulator: Started;
  anthropic: Started;
  bedrock: Started;
  /** The OpenAI lean relay of the main rows. */
  passthrough: Started;
}

/**
 * The protocol rows' targets. Client protocols and channels of other protocols: each way through the gateway
 * against the vendor emulator it ends at, called directly in its own protocol, and against the lean relay of
 * that protocol (bench/passthrough.ts) sending the emulator the same bytes. The Messages and Converse lean relays
 * start here, pinned as the gateway is.
 */
async function protocolTargetsOf(parts: ProtocolParts): Promise<ProtocolTarget[]> {
  const { gateway, gatewayKey, emulator, anthropic, bedrock, passthrough } = parts;
  const leanMessages = await startScript('passthroughProcess', {
    UPSTREAM_URL: anthropic.url,
    UPSTREAM_KEY: ANTHROPIC_GOOD_KEY,
    CLIENT_KEY: 'sk-bench',
    LEAN_PROTOCOL: 'anthropic',
  });
  const leanConverse = await startScript('passthroughProcess', {
    UPSTREAM_URL: bedrock.url,
    CLIENT_KEY: 'sk-bench',
    LEAN_PROTOCOL: 'bedrock',
  });
  parts.started.push(leanMessages, leanConverse);
  parts.placement.pinMeasured(leanMessages.child.pid!);
  parts.placement.pinMeasured(leanConverse.child.pid!);
  // Client protocols and channels of other protocols: each way through the gateway against the vendor
  // emulator it ends at, called directly in its own protocol; all targets in alternating rounds, then the
  // time to the first byte of a stream, the targets alternating too.
  const claudeStreamVia = { ...claudeStreamBody, max_tokens: undefined };
  const messagesToOpenAi = { model: MODEL, max_tokens: 64, messages: claudePlainBody.messages };
  const converse = await presignedConverse(bedrock.url, false);
  const converseStream = await presignedConverse(bedrock.url, true);
  const pathOf = (url: string) => new URL(url).pathname;
  const [CHAT, MESSAGES, VERSION] = ['/v1/chat/completions', '/v1/messages', { 'anthropic-version': '2023-06-01' }] as const;
  const unsignedBody = { ...bedrockPlainBody, model: BEDROCK_UNSIGNED_MODEL };
  /** A way through the gateway: `rows` names the rows it is held against. */
  const through = (
    name: string,
    rows: Pick<ProtocolTarget, 'direct' | 'lean' | 'unsigned'>,
    path: string,
    headers: Record<string, string>,
    body: unknown,
    streamBody: unknown,
  ): ProtocolTarget => ({
    name,
    ...rows,
    url: `${gateway.url}${path}`,
    apiKey: gatewayKey,
    headers,
    body,
    streamBody,
    pid: gateway.child.pid!,
  });
  // the rows' order: the three vendors direct, the three lean relays, then the gateway's ways (indices below)
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
      name: 'Converse emulator direct (SigV4 verified)',
      url: converse.url,
      apiKey: 'unused',
      headers: converse.headers,
      body: converse.body,
      streamUrl: converseStream.url,
      streamHeaders: converseStream.headers,
      streamBody: converseStream.body,
      pid: bedrock.child.pid!,
    },
    {
      name: 'lean relay, Messages',
      direct: 0,
      url: `${leanMessages.url}/v1/messages`,
      apiKey: 'sk-bench',
      headers: { 'anthropic-version': '2023-06-01' },
      body: claudePlainBody,
      streamBody: claudeStreamBody,
      pid: leanMessages.child.pid!,
    },
    {
      name: 'lean relay, OpenAI chat',
      direct: 1,
      url: `${passthrough.url}/v1/chat/completions`,
      apiKey: 'sk-bench',
      headers: {},
      body: plainBody,
      streamBody: { ...plainBody, stream: true },
      pid: passthrough.child.pid!,
    },
    {
      name: 'lean relay, Converse (the client signs)',
      direct: 2,
      url: `${leanConverse.url}${pathOf(converse.url)}`,
      apiKey: 'unused',
      headers: { ...converse.headers, 'x-relay-key': 'sk-bench' },
      body: converse.body,
      streamUrl: `${leanConverse.url}${pathOf(converseStream.url)}`,
      streamHeaders: { ...converseStream.headers, 'x-relay-key': 'sk-bench' },
      streamBody: converseStream.body,
      pid: leanConverse.child.pid!,
    },
    through(
      'chat -> Anthropic channel (translated)',
      { direct: 0, lean: 3 },
      CHAT,
      {},
      { ...claudePlainBody, max_tokens: undefined },
      claudeStreamVia,
    ),
    through(
      '/v1/messages -> Anthropic channel (passthrough)',
      { direct: 0, lean: 3 },
      MESSAGES,
      VERSION,
      claudePlainBody,
      claudeStreamBody,
    ),
    through('/v1/messages -> OpenAI channel (translated)', { direct: 1, lean: 4 }, MESSAGES, VERSION, messagesToOpenAi, {
      ...messagesToOpenAi,
      stream: true,
    }),
    // the signed way, and the same way with an API key instead of a signature
    through('chat -> Bedrock channel (Converse, signed per call)', { direct: 2, lean: 5, unsigned: 10 }, CHAT, {}, bedrockPlainBody, {
      ...bedrockPlainBody,
      stream: true,
    }),
    through('chat -> Bedrock channel (Converse, API key: unsigned)', { direct: 2 }, CHAT, {}, unsignedBody, {
      ...unsignedBody,
      stream: true,
    }),
  ];
  return protocolTargets;
}

/** The lean relay's name in the tables: every ratio of the main rows is against it. */
const LEAN = 'lean relay';
/** The realtime row: 16 WebSockets, the bench's rounds at half its seconds (about 25 s in all with the defaults). */
const REALTIME_OPTIONS = { connections: 16, rounds: ROUNDS, seconds: SECONDS / 2, warmupSeconds: 1 };

/** The realtime emulator direct and through `gateway` (a realtime channel to the emulator is added there). */
async function realtimeTargets(gateway: Started, cookie: string, key: string, emulator: Started): Promise<RealtimeTarget[]> {
  await consoleCall(`${gateway.url}/api/channel/`, {
    method: 'POST',
    cookie,
    body: { name: 'realtime emulator', type: 1, key: REALTIME_GOOD_KEY, base_url: emulator.url, models: REALTIME_MODEL },
  });
  const path = `/v1/realtime?model=${REALTIME_MODEL}`;
  const beta = { 'openai-beta': 'realtime=v1' };
  return [
    {
      name: 'realtime emulator direct',
      url: `${emulator.url.replace('http:', 'ws:')}${path}`,
      headers: { authorization: `Bearer ${REALTIME_GOOD_KEY}`, ...beta },
      pid: emulator.child.pid!,
    },
    {
      name: 'switchboard',
      url: `${gateway.url.replace('http:', 'ws:')}${path}`,
      headers: { authorization: `Bearer ${key}`, ...beta },
      pid: gateway.child.pid!,
    },
  ];
}

/** Content chunks in a stream of the stream scenario (the role, finish and usage events come on top). */
const STREAM_CHUNKS = streamBody.emulator.chunks;
const LONG_STREAM_CHUNKS = longStreamBody.emulator.chunks;

function writeReport(file: string, report: string): void {
  console.log(report);
  const resultsDir = join(repoRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, file), report);
  console.log(`written to bench/results/${file}`);
}

ensureWrk();
if (ONLY === 'workers') {
  await workersOnlyReport({ model: MODEL, body: plainBody, seconds: SECONDS, rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS });
  process.exit(0);
}
if (ONLY === 'rss') {
  writeReport('rss.md', await rssReport({ model: MODEL, body: plainBody }));
  process.exit(0);
}
if (ONLY === 'streams') {
  writeReport(
    'streams.md',
    [`# Switchboard benchmark, long streams (${new Date().toISOString()})`, ...(await longStreamReport(MODEL))].join('\n'),
  );
  process.exit(0);
}
if (ONLY === 'batch') {
  writeReport('batch.md', (await batchFairnessReport()).join('\n'));
  process.exit(0);
}
if (ONLY === 'signing') {
  console.log((await signingCostRows()).join('\n'));
  process.exit(0);
}
const placement = placeProcesses();
const started: Started[] = [];
const databases: BenchDatabase[] = [];
try {
  const emulator = await startScript('emulatorProcess', {});
  started.push(emulator);
  // SQL_DSN emptied: this gateway is the SQLite one whatever the shell around the bench has set
  const gateway = await startScript('gatewayProcess', { SQL_DSN: '' }, startFlags());
  started.push(gateway);

  const { rootCookie: cookie, key: gatewayKey } = await prepareGateway(gateway.url, emulator.url, MODEL);

  if (ONLY === 'realtime') {
    const realtimeEmulator = await startScript('realtimeEmulatorProcess', {});
    started.push(realtimeEmulator);
    placement.pinMeasured(gateway.child.pid!);
    const rows = await realtimeRows(await realtimeTargets(gateway, cookie, gatewayKey, realtimeEmulator), REALTIME_OPTIONS);
    console.log(
      [`# Switchboard benchmark, realtime row only (${new Date().toISOString()}; CPU placement: ${placement.description})`, ...rows].join(
        '\n',
      ),
    );
    await Promise.all(started.map((part) => part.stop()));
    process.exit(0);
  }

  /**
   * A gateway of this build started for one of the on/off rows, pinned like the others. Both sides of such a
   * row start fresh: the main gateway has by then served every row before it, and its log table (millions of
   * rows, seven indexes) makes each of its writes dearer than a new one's.
   */
  const freshGateway = async (env: Record<string, string>) => {
    const fresh = await startScript('gatewayProcess', { SQL_DSN: '', ...env }, startFlags());
    started.push(fresh);
    const { key } = await prepareGateway(fresh.url, emulator.url, MODEL);
    placement.pinMeasured(fresh.child.pid!);
    return { ...fresh, key };
  };
  /** In a full run, a gateway started for the row; a row run alone (BENCH_ONLY) has the main one, still fresh. */
  const freshOrMain = async () => (ONLY === undefined || ONLY === '' ? freshGateway({}) : { ...gateway, key: gatewayKey });
  // the same build with metrics on and off, for the metrics row
  const metricsOff = process.env.BENCH_METRICS_AA === '1' ? 'true' : 'false';
  const withMetrics = await freshOrMain();
  const withoutMetrics = await freshGateway({ METRICS_ENABLED: metricsOff });
  const withoutMetricsKey = withoutMetrics.key;
  const metricsRows = () =>
    metricsCostRows(
      [
        { name: 'switchboard, metrics on', url: withMetrics.url, key: withMetrics.key, pid: withMetrics.child.pid!, scraped: true },
        {
          name: `switchboard, METRICS_ENABLED=${metricsOff}`,
          url: withoutMetrics.url,
          key: withoutMetricsKey,
          pid: withoutMetrics.child.pid!,
          scraped: false,
        },
      ],
      // rounds of a second each: more of them, for a median that one slow round does not move
      { seconds: SECONDS, rounds: SECONDS, warmupSeconds: WARMUP_SECONDS, body: plainBody, combine: combineRuns },
    );
  /** The tracing row: the same build exporting traces of every call to a sink in this process, started for it. */
  const tracingRows = async () => {
    const otlpSink = await startOtlpSink();
    const traced = await startScript('gatewayProcess', { SQL_DSN: '', OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.url }, startFlags());
    started.push({ ...traced, stop: () => traced.stop().then(() => otlpSink.close()) });
    const { key: tracedKey } = await prepareGateway(traced.url, emulator.url, MODEL);
    placement.pinMeasured(traced.child.pid!);
    const untraced = await freshOrMain();
    placement.pinMeasured(gateway.child.pid!);
    return tracingCostRows(
      [
        { name: 'switchboard, tracing on (OTLP/HTTP to a local sink)', url: traced.url, key: tracedKey, pid: traced.child.pid! },
        { name: 'switchboard, tracing off', url: untraced.url, key: untraced.key, pid: untraced.child.pid! },
      ],
      otlpSink,
      { seconds: SECONDS, rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS, body: plainBody, combine: combineRuns },
    );
  };
  if (ONLY === 'tracing') {
    console.log(
      [
        `# Switchboard benchmark, tracing row only (${new Date().toISOString()}; CPU placement: ${placement.description})`,
        ...(await tracingRows()),
      ].join('\n'),
    );
    await Promise.all(started.map((part) => part.stop()));
    process.exit(0);
  }
  if (ONLY === 'metrics') {
    placement.pinMeasured(gateway.child.pid!);
    console.log(
      [
        `# Switchboard benchmark, metrics row only (${new Date().toISOString()}; CPU placement: ${placement.description})`,
        ...(await metricsRows()),
      ].join('\n'),
    );
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

  const bedrock = await startScript('bedrockEmulatorProcess', {});
  started.push(bedrock);
  await consoleCall(`${gateway.url}/api/channel/`, {
    method: 'POST',
    cookie,
    body: { name: 'bedrock emulator', type: 33, key: BEDROCK_KEY, base_url: bedrock.url, models: BEDROCK_MODEL },
  });
  await consoleCall(`${gateway.url}/api/channel/`, {
    method: 'POST',
    cookie,
    body: {
      name: 'bedrock emulator, API key',
      type: 33,
      key: BEDROCK_API_KEY_CHANNEL,
      base_url: bedrock.url,
      models: BEDROCK_UNSIGNED_MODEL,
    },
  });

  const realtimeEmulator = await startScript('realtimeEmulatorProcess', {});
  started.push(realtimeEmulator);
  const realtime = await realtimeTargets(gateway, cookie, gatewayKey, realtimeEmulator);

  const passthrough = await startScript('passthroughProcess', { UPSTREAM_URL: emulator.url, CLIENT_KEY: 'sk-bench' });
  started.push(passthrough);
  placement.pinMeasured(gateway.child.pid!);
  placement.pinMeasured(passthrough.child.pid!);
  if (ONLY === 'protocols') {
    const parts = { started, placement, gateway, gatewayKey, emulator, anthropic, bedrock, passthrough };
    const rows = await protocolRows(await protocolTargetsOf(parts));
    console.log(
      [`# Switchboard benchmark, protocol rows only (${new Date().toISOString()}; CPU placement: ${placement.description})`, ...rows].join(
        '\n',
      ),
    );
    await Promise.all(started.map((part) => part.stop()));
    process.exit(0);
  }
  /** The response cache row: turned on for it alone, so no other row meets the cache. */
  const cacheRows = async () => {
    await setResponseCache(gateway.url, cookie, true);
    const rows = await cacheHitRows(
      { name: 'switchboard, cache hit', url: gateway.url, key: gatewayKey, pid: gateway.child.pid! },
      { name: LEAN, url: passthrough.url, key: 'sk-bench', pid: passthrough.child.pid! },
      { seconds: SECONDS, rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS, plainBody, streamBody, combine: combineRuns },
    );
    await setResponseCache(gateway.url, cookie, false);
    return rows;
  };
  if (ONLY === 'cache') {
    console.log(
      [
        `# Switchboard benchmark, response cache row only (${new Date().toISOString()}; CPU placement: ${placement.description})`,
        ...(await cacheRows()),
      ].join('\n'),
    );
    await Promise.all(started.map((part) => part.stop()));
    process.exit(0);
  }

  const targets: MainTarget[] = [
    { name: 'direct', url: emulator.url, key: 'sk-good', pid: emulator.child.pid! },
    { name: LEAN, url: passthrough.url, key: 'sk-bench', pid: passthrough.child.pid! },
    { name: 'switchboard', url: gateway.url, key: gatewayKey, pid: gateway.child.pid! },
  ];
  /** A gateway of this or another checkout on a fresh database of DATABASE, joined to the targets. */
  const startOnDatabase = async (name: string, root?: string) => {
    const database = await createBenchDatabase(DATABASE!);
    databases.push(database);
    const onIt = await startScript('gatewayProcess', { SQL_DSN: database.dsn }, startFlags(), root);
    started.push(onIt);
    const { key } = await prepareGateway(onIt.url, emulator.url, MODEL);
    placement.pinMeasured(onIt.child.pid!);
    targets.push({ name, url: onIt.url, key, pid: onIt.child.pid!, database });
    return onIt;
  };
  const onDatabase = DATABASE === undefined ? undefined : `switchboard ${DATABASE_LABELS[DATABASE]}`;
  if (onDatabase !== undefined) await startOnDatabase(onDatabase);
  let baselinePid: number | undefined;
  if (BASELINE) {
    if (DATABASE !== undefined) baselinePid = (await startOnDatabase('baseline', BASELINE)).child.pid!;
    else {
      const baseline = await startScript('gatewayProcess', { SQL_DSN: '' }, startFlags(), BASELINE);
      started.push(baseline);
      const { key } = await prepareGateway(baseline.url, emulator.url, MODEL);
      baselinePid = baseline.child.pid!;
      placement.pinMeasured(baselinePid);
      targets.push({ name: 'baseline', url: baseline.url, key, pid: baselinePid });
    }
  }
  const scenarios = [
    { name: 'chat c=1', body: plainBody, connections: 1 },
    { name: 'chat c=16', body: plainBody, connections: 16 },
    { name: 'chat c=64', body: plainBody, connections: 64 },
    { name: 'stream(20) c=16', body: streamBody, connections: 16 },
    { name: `stream(${LONG_STREAM_CHUNKS}) c=16`, body: longStreamBody, connections: 16 },
  ];
  // Warm up first: the gateway has far more code than the lean relay for V8 to compile and optimise,
  // and what the targets are about is a serving process, not the first seconds after a start.
  for (const target of targets) {
    await runWrk({
      url: `${target.url}/v1/chat/completions`,
      apiKey: target.key,
      body: plainBody,
      connections: 16,
      durationSeconds: WARMUP_SECONDS,
    });
    await runWrk({
      url: `${target.url}/v1/chat/completions`,
      apiKey: target.key,
      body: streamBody,
      connections: 16,
      durationSeconds: WARMUP_SECONDS,
    });
  }
  const index = (name: string) => targets.findIndex((target) => target.name === name);
  const results: Record<string, Record<string, LoadResult>> = {};
  /** CPU time (all threads) the serving process spent per request, in µs: for direct, the emulator's. */
  const cpuPerRequest: Record<string, Record<string, number>> = {};
  /** The same, round by round, by target. */
  const cpuRoundsOf: Record<string, number[][]> = {};
  /** Each scenario's runs, by target and then round: runs of one round were back to back. */
  const roundsOf: Record<string, LoadResult[][]> = {};
  const runsOf = (scenario: string, target: string) => roundsOf[scenario][index(target)];
  /** Commits per relayed request of the gateways on a database server, by scenario and target: all of them, and less the idle rate. */
  const commitsPerRequest: Record<string, Record<string, { all: number; net: number; idlePerSecond: number; requests: number }>> = {};
  const counted = targets.filter((target) => target.database !== undefined);
  const commitWindows = new CommitWindows(targets.map((target) => target.database));
  await commitWindows.start();
  for (const scenario of scenarios) {
    const load = (target: MainTarget, durationSeconds: number) =>
      runWrk({
        url: `${target.url}/v1/chat/completions`,
        apiKey: target.key,
        body: scenario.body,
        connections: scenario.connections,
        durationSeconds,
      });
    // the targets take turns, ROUNDS short runs each, so a machine whose speed drifts
    // during the scenario (as shared virtual machines do) weighs on every target alike
    const runs = targets.map(() => [] as LoadResult[]);
    const cpuRounds = targets.map(() => [] as number[]);
    const served = targets.map(() => 0);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let turn = 0; turn < targets.length; turn += 1) {
        const which = (round + turn) % targets.length;
        const target = targets[which];
        await commitWindows.beforeRun(which);
        // a second of the same load first: a process that sat idle while the others ran is warm again
        served[which] += (await load(target, 1)).requests;
        const before = cpuMs(target.pid);
        const run = await load(target, Math.max(1, Math.round(SECONDS / ROUNDS)));
        cpuRounds[which].push(run.requests > 0 ? (1000 * (cpuMs(target.pid) - before)) / run.requests : Number.NaN);
        await commitWindows.afterRun(which);
        served[which] += run.requests;
        runs[which].push(run);
      }
    }
    const commits = await commitWindows.endScenario();
    roundsOf[scenario.name] = runs;
    cpuRoundsOf[scenario.name] = cpuRounds;
    const combined = runs.map(combineRuns);
    results[scenario.name] = Object.fromEntries(targets.map((target, which) => [target.name, combined[which]]));
    // CPU over all rounds: each round's µs per request weighed by its requests
    cpuPerRequest[scenario.name] = Object.fromEntries(
      targets.map((target, which) => [
        target.name,
        runs[which].reduce((sum, run, round) => sum + (run.requests > 0 ? run.requests * cpuRounds[which][round] : 0), 0) /
          combined[which].requests,
      ]),
    );
    commitsPerRequest[scenario.name] = Object.fromEntries(
      counted.map((target) => {
        const { commits: all, seconds, idlePerSecond } = commits[targets.indexOf(target)]!;
        const requests = served[targets.indexOf(target)];
        // the idle rate is taken off only where the counter is the database's own: a server-wide one's idle rate is other clients'
        return [
          target.name,
          {
            all: all / requests,
            net: target.database!.perDatabase ? (all - idlePerSecond * seconds) / requests : Number.NaN,
            idlePerSecond,
            requests,
          },
        ];
      }),
    );
  }

  const ttft = await timeToFirstToken(targets);
  const ttftOf = (name: string) => ttft[index(name)];

  const protocolLines = await protocolRows(
    await protocolTargetsOf({ started, placement, gateway, gatewayKey, emulator, anthropic, bedrock, passthrough }),
  );
  const realtimeLines = await realtimeRows(realtime, REALTIME_OPTIONS);
  const metricsLines = await metricsRows();
  const tracingLines = await tracingRows();
  const rss = rssMiB(gateway.child.pid!);
  const cacheLines = await cacheRows();
  const signingLines = await signingCostRows();

  const lines = [
    `Every ratio below is against the lean relay (bench/passthrough.ts): node:http, the body joined once, the bearer key looked up in a Map, one JSON.parse, an undici Pool, the answer relayed from 'data' events and its usage read from the last chunk.`,
    '',
    '| scenario | target | req/s | x lean relay (round by round) | p50 ms | p99 ms | errors | CPU µs/req (round by round) |',
    '|---|---|---:|---|---:|---:|---:|---|',
  ];
  const listed = (values: number[], digits = 2) => values.map((value) => value.toFixed(digits)).join(', ');
  /** This target's runs of a scenario over the lean relay's, round by round. */
  const shareRounds = (scenario: string, target: string) =>
    runsOf(scenario, target).map((run, round) => run.requestsPerSecond / runsOf(scenario, LEAN)[round].requestsPerSecond);
  for (const [scenario, byTarget] of Object.entries(results)) {
    for (const [target, result] of Object.entries(byTarget)) {
      const share =
        target === LEAN
          ? ''
          : `${(result.requestsPerSecond / byTarget[LEAN].requestsPerSecond).toFixed(2)} (${listed(shareRounds(scenario, target))})`;
      lines.push(
        `| ${scenario} | ${target} | ${result.requestsPerSecond.toFixed(0)} | ${share} | ${result.p50Ms.toFixed(2)} | ${result.p99Ms.toFixed(2)} | ${result.errors} | ${cpuPerRequest[scenario][target].toFixed(0)} (${listed(cpuRoundsOf[scenario][index(target)], 0)}) |`,
      );
    }
  }
  const c16 = results['chat c=16'];
  const streamed = 'stream(20) c=16';
  const leanStreamCpu = cpuPerRequest[streamed][LEAN];
  const gatewayStreamCpu = cpuPerRequest[streamed].switchboard;
  const streamCpuRounds = cpuRoundsOf[streamed][index('switchboard')].map((cpu, round) => cpu / cpuRoundsOf[streamed][index(LEAN)][round]);
  const ttftAdded = ttftOf('switchboard') - ttftOf(LEAN);
  // each further chunk: the long stream's CPU less the short one's, over the chunks it adds
  const longStreamed = `stream(${LONG_STREAM_CHUNKS}) c=16`;
  const addedChunks = LONG_STREAM_CHUNKS - STREAM_CHUNKS;
  const chunkCpu = (target: string, round?: number) =>
    round === undefined
      ? (cpuPerRequest[longStreamed][target] - cpuPerRequest[streamed][target]) / addedChunks
      : (cpuRoundsOf[longStreamed][index(target)][round] - cpuRoundsOf[streamed][index(target)][round]) / addedChunks;
  const chunkCpuRounds = cpuRoundsOf[streamed][0].map((_, round) => chunkCpu('switchboard', round) / chunkCpu(LEAN, round));
  lines.push(
    '',
    `The floor: the lean relay spent ${cpuPerRequest['chat c=16'][LEAN].toFixed(0)} µs of CPU per non-streamed request at c=16 (round by round ${listed(cpuRoundsOf['chat c=16'][index(LEAN)], 0)}) and ${leanStreamCpu.toFixed(0)} µs per stream of ${STREAM_CHUNKS} chunks (${(leanStreamCpu / STREAM_CHUNKS).toFixed(1)} µs per chunk).`,
  );
  const checks = [
    [
      `SQLite chat c=16 req/s >= 0.8 x lean relay`,
      `${c16.switchboard.requestsPerSecond.toFixed(0)} vs ${(0.8 * c16[LEAN].requestsPerSecond).toFixed(0)} (${(c16.switchboard.requestsPerSecond / c16[LEAN].requestsPerSecond).toFixed(2)} x; round by round ${listed(shareRounds('chat c=16', 'switchboard'))} x)`,
      c16.switchboard.requestsPerSecond >= 0.8 * c16[LEAN].requestsPerSecond,
    ],
    [
      `stream CPU <= 1.3 x lean relay's (per stream of ${STREAM_CHUNKS} chunks, c=16)`,
      `${gatewayStreamCpu.toFixed(0)} µs vs ${(1.3 * leanStreamCpu).toFixed(0)} µs; per chunk ${(gatewayStreamCpu / STREAM_CHUNKS).toFixed(1)} vs ${(leanStreamCpu / STREAM_CHUNKS).toFixed(1)} µs (${(gatewayStreamCpu / leanStreamCpu).toFixed(2)} x; round by round ${listed(streamCpuRounds)} x)`,
      gatewayStreamCpu <= 1.3 * leanStreamCpu,
    ],
    [
      `CPU per further chunk <= 1.3 x lean relay's (streams of ${LONG_STREAM_CHUNKS} against ${STREAM_CHUNKS} chunks, c=16)`,
      `${chunkCpu('switchboard').toFixed(2)} vs ${chunkCpu(LEAN).toFixed(2)} µs (${(chunkCpu('switchboard') / chunkCpu(LEAN)).toFixed(2)} x; round by round ${listed(chunkCpuRounds)} x)`,
      chunkCpu('switchboard') <= 1.3 * chunkCpu(LEAN),
    ],
    [
      `time to first token added <= 0.3 ms over the lean relay's`,
      `${ttftAdded.toFixed(3)} ms (median of 200 alternating samples each: lean relay ${ttftOf(LEAN).toFixed(3)}, gateway ${ttftOf('switchboard').toFixed(3)}, direct ${ttftOf('direct').toFixed(3)})`,
      ttftAdded <= 0.3,
    ],
    ['gateway RSS after the run < 150 MiB', `${rss.toFixed(1)} MiB`, rss < 150],
  ] as const;
  lines.push('', '| target | measured | met |', '|---|---|---|');
  for (const [name, measured, met] of checks) lines.push(`| ${name} | ${measured} | ${met ? 'yes' : 'NO'} |`);
  if (onDatabase !== undefined) {
    const label = DATABASE_LABELS[DATABASE!];
    const rounds = runsOf('chat c=16', onDatabase).map(
      (run, round) => run.requestsPerSecond / runsOf('chat c=16', 'switchboard')[round].requestsPerSecond,
    );
    lines.push(
      '',
      `${label} c=16 vs SQLite: ${(c16[onDatabase].requestsPerSecond / c16.switchboard.requestsPerSecond).toFixed(2)} x (round by round ${listed(rounds)} x); ${label} c=16 vs the lean relay: ${(c16[onDatabase].requestsPerSecond / c16[LEAN].requestsPerSecond).toFixed(2)} x.`,
    );
  }
  if (counted.length > 0) {
    lines.push(
      '',
      `Commits per relayed request, each counted over the gateway's own load (its warm-up seconds included), all of them and less what the gateway commits while idle (${counted.map((target) => `${target.name}: ${target.database!.counted}`).join('; ')}). wrk counts the requests it saw answered; those it left in flight at the end of a run were relayed too.`,
      '',
      `| scenario | ${counted.map((target) => `${target.name}: all | less idle`).join(' | ')} |`,
      `|---|${counted.map(() => '---:|---:').join('|')}|`,
      ...Object.entries(commitsPerRequest).map(
        ([scenario, byTarget]) =>
          `| ${scenario} | ${counted.map((target) => `${byTarget[target.name].all.toFixed(3)} (${byTarget[target.name].requests} answered) | ${Number.isNaN(byTarget[target.name].net) ? 'n/a (server-wide counter)' : byTarget[target.name].net.toFixed(3)}`).join(' | ')} |`,
      ),
    );
  }
  const mine = DATABASE === undefined ? 'switchboard' : onDatabase!;
  if (baselinePid !== undefined)
    lines.push(
      ...baselineLines(
        mine,
        results,
        runsOf,
        cpuPerRequest,
        ttftOf(mine) - ttftOf('baseline'),
        rssMiB(targets[index(mine)].pid),
        rssMiB(baselinePid),
      ),
    );
  // last, so the flood cannot weigh on the rows above
  const starvation = await starvationScenario({ gateway: gateway.url, rootCookie: cookie, floodKey: gatewayKey });
  // 1 and 2 workers on PostgreSQL, each a gateway of its own (the one measured above sits idle meanwhile)
  const workers = await workerRows({
    emulatorUrl: emulator.url,
    model: MODEL,
    body: plainBody,
    seconds: SECONDS,
    rounds: ROUNDS,
    warmupSeconds: WARMUP_SECONDS,
  });
  const report = [
    `# Switchboard benchmark (${new Date().toISOString()}, ${SECONDS}s per target and scenario in ${ROUNDS} alternating runs, wrk on loopback${onDatabase === undefined ? '' : `; BENCH_DB=${DATABASE}: the gateway on ${DATABASE_LABELS[DATABASE!]} beside the SQLite one`})`,
    '',
    `CPU placement: ${placement.description}. RSS after a million requests and RSS with 1,000 streams held open for five minutes are not measured here: BENCH_ONLY=rss and BENCH_ONLY=streams (a few minutes each).`,
    '',
    ...lines,
    ...protocolLines,
    ...realtimeLines,
    ...metricsLines,
    ...tracingLines,
    ...cacheLines,
    ...signingLines,
    '',
    ...starvation,
    ...workers,
  ].join('\n');
  writeReport(DATABASE === undefined ? 'latest.md' : `latest-${DATABASE}.md`, report);
} finally {
  await Promise.all(started.map((part) => part.stop()));
  await Promise.all(databases.map((database) => database.drop()));
}
