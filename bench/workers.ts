// The workers rows of `npm run bench`: plain chat at c=64 through
// the gateway started as `npm start` starts it (the bundled server/main.ts),
// with WORKERS=1 and WORKERS=2, each on a fresh PostgreSQL database of its
// own, the two taking turns round by round. The workers are not pinned to a
// core (two workers on one core would measure nothing): on a two-core machine
// they share both cores with wrk, the emulator and PostgreSQL. Each also
// tells the commits its database counted per request it relayed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../tests/e2e/support/gateway';
import { BENCH_ROOT_PASSWORD, consoleCall, prepareGateway } from './consoleApi';
import { repoRoot, startFlags, startScript } from './processes';
import { combineRuns, runWrk, type LoadResult } from './wrk';
import { createBenchDatabase, sleep, type BenchDatabase } from './databases';

interface WorkersGateway {
  workers: number;
  url: string;
  key: string;
  database: BenchDatabase;
  stop(): Promise<void>;
}

/** The bundled gateway with WORKERS=`workers` on a database of its own, ready with a key whose channel is the emulator. */
async function startWorkersGateway(script: string, workers: number, emulatorUrl: string, model: string): Promise<WorkersGateway> {
  const database = await createBenchDatabase('postgres');
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-workers-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [...startFlags(), '--enable-source-maps', script], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      SQL_DSN: database.dsn,
      WORKERS: String(workers),
      DATA_DIR: dataDir,
      CONSOLE_DIR: dataDir,
      INITIAL_ROOT_PASSWORD: BENCH_ROOT_PASSWORD,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'error',
      CHANNEL_RETEST_INTERVAL: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  await new Promise<void>((ready, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway with ${workers} worker(s) did not start:\n${output}`)), 90_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('gateway and console on')) {
        clearTimeout(timer);
        ready();
      }
    });
    child.once('exit', (code) => reject(new Error(`the gateway with ${workers} worker(s) exited with ${code}:\n${output}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const { rootCookie } = await prepareGateway(url, emulatorUrl, model);
  // the per-key limit of requests in flight (64 by default) is counted per worker: no limit, so c=64 measures throughput, not refusals
  const token = await consoleCall<{ key: string }>(`${url}/api/token/`, {
    method: 'POST',
    cookie: rootCookie,
    body: { name: 'bench workers', unlimited_quota: true, concurrency_limit: -1 },
  });
  const key = `sk-${token.body.data.key}`;
  return {
    workers,
    url,
    key,
    database,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((stopped) => {
          child.once('exit', () => stopped());
          child.kill('SIGTERM');
        });
      }
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    },
  };
}

/** The table lines: c=64 req/s, latency and errors for 1 and 2 workers, with the ratio round by round. */
export async function workerRows(options: {
  emulatorUrl: string;
  model: string;
  body: unknown;
  seconds: number;
  rounds: number;
  warmupSeconds: number;
}): Promise<string[]> {
  // @ts-expect-error: a plain ES module of the build scripts, without type declarations
  const { bundle } = (await import('../scripts/buildServer.mjs')) as { bundle: (entry: string, name: string) => Promise<string> };
  const script = await bundle('server/main.ts', 'bench-workers-gateway');
  const gateways: WorkersGateway[] = [];
  try {
    for (const workers of [1, 2]) gateways.push(await startWorkersGateway(script, workers, options.emulatorUrl, options.model));
    const load = (gateway: WorkersGateway, durationSeconds: number) =>
      runWrk({ url: `${gateway.url}/v1/chat/completions`, apiKey: gateway.key, body: options.body, connections: 64, durationSeconds });
    for (const gateway of gateways) await load(gateway, options.warmupSeconds);
    // each database's commits over all the load its gateway relayed in the rounds, the warm-up seconds included,
    // read once the gateways sat idle long enough for PostgreSQL to have counted all of them
    const settled = async () => {
      await sleep(gateways[0].database.settleMs);
      return Promise.all(gateways.map((gateway) => gateway.database.commits()));
    };
    const commitsBefore = await settled();
    const runs = gateways.map(() => [] as LoadResult[]);
    const served = gateways.map(() => 0);
    for (let round = 0; round < options.rounds; round += 1) {
      for (let turn = 0; turn < gateways.length; turn += 1) {
        const which = (round + turn) % gateways.length;
        served[which] += (await load(gateways[which], 1)).requests;
        const run = await load(gateways[which], Math.max(1, Math.round(options.seconds / options.rounds)));
        served[which] += run.requests;
        runs[which].push(run);
      }
    }
    const commitsAfter = await settled();
    // with the count of answers it stands on: a run whose answers are slow leaves many relayed but unseen by wrk
    const [oneCommits, twoCommits] = gateways.map(
      (_, which) => `${((commitsAfter[which] - commitsBefore[which]) / served[which]).toFixed(3)} (${served[which]} answered)`,
    );
    const [one, two] = runs.map(combineRuns);
    const ratios = runs[1].map((run, round) => (run.requestsPerSecond / runs[0][round].requestsPerSecond).toFixed(2)).join(', ');
    return [
      '',
      `Workers (WORKERS=1 and 2, the bundled server/main.ts on PostgreSQL), chat c=64, ${options.rounds} alternating rounds; the workers are not pinned; commits: ${gateways[0].database.counted}, over all the requests of the rounds`,
      '',
      '| scenario | workers | req/s | x 1 worker (round by round) | p50 ms | p99 ms | errors | commits per request |',
      '|---|---:|---:|---|---:|---:|---:|---:|',
      `| chat c=64, PostgreSQL | 1 | ${one.requestsPerSecond.toFixed(0)} | | ${one.p50Ms.toFixed(2)} | ${one.p99Ms.toFixed(2)} | ${one.errors} | ${oneCommits} |`,
      `| chat c=64, PostgreSQL | 2 | ${two.requestsPerSecond.toFixed(0)} | ${(two.requestsPerSecond / one.requestsPerSecond).toFixed(2)} (${ratios}) | ${two.p50Ms.toFixed(2)} | ${two.p99Ms.toFixed(2)} | ${two.errors} | ${twoCommits} |`,
    ];
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
  }
}

/** BENCH_ONLY=workers: these rows alone, against an emulator of their own; written to bench/results/workers.md. */
export async function workersOnlyReport(options: {
  model: string;
  body: unknown;
  seconds: number;
  rounds: number;
  warmupSeconds: number;
}): Promise<void> {
  const emulator = await startScript('emulatorProcess', {});
  try {
    const lines = await workerRows({ ...options, emulatorUrl: emulator.url });
    const report = [
      `# Switchboard benchmark, workers rows only (${new Date().toISOString()}, ${options.seconds}s per target in ${options.rounds} alternating runs, wrk on loopback)`,
      ...lines,
    ].join('\n');
    console.log(report);
    const resultsDir = join(repoRoot, 'bench', 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, 'workers.md'), report);
    console.log('written to bench/results/workers.md');
  } finally {
    await emulator.stop();
  }
}
