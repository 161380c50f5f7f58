// The rate-limit accuracy run, shared by its test (tests/server/relay/
// twoNodeRateLimit.test.ts) and its bench (bench/rateLimitAccuracy.ts): two
// real gateway processes on one PostgreSQL database and one Redis, a key with
// a requests-per-minute limit, and an open-loop load alternating between the
// nodes at a fixed offered rate. What the limit should have admitted is
// computed from the limit and the elapsed time actually measured (a full
// bucket of one minute's worth, then limit/60 a second), not assumed from
// the wall clock, so a slow machine changes the figures but not the verdict.
// The time measured is the span over which the upstream received the
// admitted requests: on a loaded machine the nodes fall seconds behind the
// offered load and keep admitting (the bucket refilling) after the last
// request was sent, so the sender's own span would under-count it; the
// upstream sees each admitted request moments after its admission.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { rootConsole, spawnGatewayProcess, type GatewayProcess } from './gatewayProcess';
import { REDIS_URL, type TestDatabase } from './databases';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The upstream: answers every chat at once and notes when each arrived. */
async function startTimingUpstream(): Promise<{ baseUrl: string; arrivals: number[]; close(): Promise<void> }> {
  const arrivals: number[] = [];
  const answer = JSON.stringify({
    id: 'chatcmpl-accuracy',
    object: 'chat.completion',
    created: 0,
    model: 'gpt-3.5-turbo',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
  const server: Server = createServer((request, response) => {
    arrivals.push(performance.now());
    request.resume();
    request.on('end', () =>
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer),
    );
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

const ROOT_PASSWORD = 'rate-limit-accuracy-root-password';

export interface RateLimitRun {
  rpm: number;
  offeredPerSecond: number;
  /** Requests sent, and how they were answered. */
  sent: number;
  admitted: number;
  refused: number;
  /** Anything but 200 and 429 (none expected), by status; 0 for a failed connection. */
  others: Record<number, number>;
  admittedByNode: [number, number];
  /** From the first request sent to the last, in ms. */
  elapsedMs: number;
  /** From the first admitted request the upstream received to the last, in ms: the span the limit is measured over. */
  admittingMs: number;
  /** What the limit allows over elapsedMs from a full bucket. */
  expected: number;
  /** (admitted - expected) / expected, in percent. */
  errorPercent: number;
  /** Whether every refusal carried Retry-After and the x-ratelimit-* headers. */
  refusalsWellFormed: boolean;
  /** The slowest answer, in ms (how far behind the offered load the nodes fell). */
  slowestMs: number;
}

/** Starts the two nodes on `database` (PostgreSQL or MySQL), runs the load for `seconds`, stops everything it started. */
export async function runTwoNodeRateLimit(
  database: TestDatabase,
  options: { rpm: number; offeredPerSecond: number; seconds: number; redisTimeoutMs?: number },
): Promise<RateLimitRun> {
  if (database.config.dialect === 'sqlite') throw new Error('two nodes need a shared database server');
  const upstream = await startTimingUpstream();
  const consoleDir = mkdtempSync(join(tmpdir(), 'switchboard-rate-limit-'));
  const secret = randomBytes(32).toString('hex');
  const nodes: GatewayProcess[] = [];
  const agent = new Agent({ connections: 64, pipelining: 1 });
  try {
    const env = {
      SQL_DSN: database.config.connectionString,
      REDIS_CONN_STRING: REDIS_URL,
      // this run's buckets only, whatever else shares the Redis
      REDIS_KEY_PREFIX: `accuracy:${randomBytes(6).toString('hex')}:`,
      SESSION_SECRET: secret,
      CONSOLE_DIR: consoleDir,
      INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
      ...(process.env.ACCURACY_REDIS_TIMEOUT_MS || options.redisTimeoutMs
        ? { REDIS_COMMAND_TIMEOUT_MS: process.env.ACCURACY_REDIS_TIMEOUT_MS ?? String(options.redisTimeoutMs) }
        : {}),
    };
    // one after the other: both would otherwise race to create the schema
    nodes.push(await spawnGatewayProcess(env, 60_000));
    nodes.push(await spawnGatewayProcess(env, 60_000));

    const admin = await rootConsole(nodes[0].baseUrl, ROOT_PASSWORD);
    await admin('/api/channel/', { name: 'emulator', type: 8, key: 'sk-good', base_url: upstream.baseUrl, models: 'gpt-3.5-turbo' });
    const token = await admin('/api/token/', { name: 'limited', unlimited_quota: true, rpm_limit: options.rpm });
    const body = JSON.stringify({ model: 'gpt-3.5-turbo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const headers = { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` };

    // both nodes warm (a first request compiles and connects), on another key: the limited one starts full
    const warm = await admin('/api/token/', { name: 'warm-up', unlimited_quota: true });
    for (const node of nodes) {
      const response = await request(`${node.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer sk-${warm.key}` },
        body,
        dispatcher: agent,
      });
      await response.body.text();
    }

    upstream.arrivals.length = 0;
    const run: RateLimitRun = {
      rpm: options.rpm,
      offeredPerSecond: options.offeredPerSecond,
      sent: 0,
      admitted: 0,
      refused: 0,
      others: {},
      admittedByNode: [0, 0],
      elapsedMs: 0,
      admittingMs: 0,
      expected: 0,
      errorPercent: 0,
      refusalsWellFormed: true,
      slowestMs: 0,
    };
    const pending: Array<Promise<void>> = [];
    const send = (index: number) => {
      const node = index % 2;
      run.sent += 1;
      const sentAt = performance.now();
      pending.push(
        request(`${nodes[node].baseUrl}/v1/chat/completions`, { method: 'POST', headers, body, dispatcher: agent })
          .then(async (response) => {
            await response.body.text();
            run.slowestMs = Math.max(run.slowestMs, performance.now() - sentAt);
            if (response.statusCode === 200) {
              run.admitted += 1;
              run.admittedByNode[node] += 1;
            } else if (response.statusCode === 429) {
              run.refused += 1;
              const header = (name: string) => response.headers[name];
              if (!header('retry-after') || !header('x-ratelimit-limit-requests') || header('x-ratelimit-remaining-requests') === undefined)
                run.refusalsWellFormed = false;
            } else {
              run.others[response.statusCode] = (run.others[response.statusCode] ?? 0) + 1;
            }
          })
          .catch(() => {
            run.others[0] = (run.others[0] ?? 0) + 1;
          }),
      );
    };

    // open loop: every request goes out at its due time, whether or not earlier ones were answered
    const interval = 1000 / options.offeredPerSecond;
    const total = Math.round(options.seconds * options.offeredPerSecond);
    const startedAt = performance.now();
    let lastSentAt = startedAt;
    let next = 0;
    while (next < total) {
      const now = performance.now();
      while (next < total && startedAt + next * interval <= now) {
        send(next);
        next += 1;
        lastSentAt = performance.now();
      }
      await new Promise((wake) => setTimeout(wake, 2));
    }
    await Promise.all(pending);
    run.elapsedMs = lastSentAt - startedAt;
    const { arrivals } = upstream;
    run.admittingMs = arrivals.length > 1 ? arrivals[arrivals.length - 1] - arrivals[0] : 0;
    // a full bucket (one minute's worth), then the limit per minute for the time the nodes were admitting
    run.expected = options.rpm + (options.rpm * run.admittingMs) / 60_000;
    run.errorPercent = ((run.admitted - run.expected) / run.expected) * 100;
    return run;
  } finally {
    await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
    await agent.close();
    await upstream.close();
    rmSync(consoleDir, { recursive: true, force: true });
  }
}

/** One line for logs and the bench table. */
export function describeRun(run: RateLimitRun): string {
  const offered = (run.sent / Math.max(run.elapsedMs / 1000, 0.001)).toFixed(0);
  return (
    `rate limit accuracy, two nodes + PostgreSQL + Redis: rpm ${run.rpm}, ${run.sent} requests in ${(run.elapsedMs / 1000).toFixed(2)} s (${offered}/s offered), ` +
    `admitting for ${(run.admittingMs / 1000).toFixed(2)} s, admitted ${run.admitted} (node 1: ${run.admittedByNode[0]}, node 2: ${run.admittedByNode[1]}), expected ${run.expected.toFixed(1)}, ` +
    `error ${run.errorPercent >= 0 ? '+' : ''}${run.errorPercent.toFixed(2)}%, refused ${run.refused}, other ${JSON.stringify(run.others)}, slowest answer ${run.slowestMs.toFixed(0)} ms`
  );
}
