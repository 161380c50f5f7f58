// Drives wrk (Debian's native load generator) and reads its latency
// distribution, so the measurement is not limited by a JavaScript client
// running on the same two cores as the gateway.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  /** How long the run lasted, by wrk's own clock. */
  seconds: number;
}

export interface LoadOptions {
  url: string;
  apiKey: string;
  body: unknown;
  connections: number;
  durationSeconds: number;
  headers?: Record<string, string>;
}

function toMs(value: string): number {
  const match = value.match(/^([\d.]+)(us|ms|s)$/);
  if (!match) return Number.NaN;
  const number = Number(match[1]);
  return match[2] === 'us' ? number / 1000 : match[2] === 's' ? number * 1000 : number;
}

const SECONDS_PER_UNIT: Record<string, number> = { us: 1e-6, ms: 1e-3, s: 1, m: 60 };

export function parseWrkOutput(output: string): LoadResult {
  const percentile = (label: string) => {
    const match = output.match(new RegExp(`^\\s*${label}%\\s+(\\S+)`, 'm'));
    return match ? toMs(match[1]) : Number.NaN;
  };
  const counted = output.match(/(\d+) requests in ([\d.]+)(us|ms|s|m)\b/);
  const requests = Number(counted?.[1] ?? 0);
  const seconds = counted ? Number(counted[2]) * SECONDS_PER_UNIT[counted[3]] : Number.NaN;
  const non2xx = Number(output.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const socketErrors = output.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((sum, value) => sum + Number(value), 0) : 0);
  return {
    requestsPerSecond: Number(output.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0),
    p50Ms: percentile('50'),
    p99Ms: percentile('99'),
    requests,
    errors,
    seconds,
  };
}

export async function runWrk(options: LoadOptions): Promise<LoadResult> {
  const scriptDir = mkdtempSync(join(tmpdir(), 'switchboard-wrk-'));
  const script = join(scriptDir, 'post.lua');
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${options.apiKey}`, ...options.headers };
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(JSON.stringify(options.body))}`,
      ...Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`),
    ].join('\n'),
  );
  try {
    const { stdout } = await run(
      'wrk',
      [
        `-t${Math.min(2, options.connections)}`,
        `-c${options.connections}`,
        `-d${options.durationSeconds}s`,
        '--latency',
        '-s',
        script,
        options.url,
      ],
      {
        maxBuffer: 1 << 20,
      },
    );
    return parseWrkOutput(stdout);
  } finally {
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One result of several runs: all their requests over all their time, and the median of their percentiles. */
export function combineRuns(runs: LoadResult[]): LoadResult {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  return {
    requestsPerSecond: requests / seconds,
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    requests,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    seconds,
  };
}
