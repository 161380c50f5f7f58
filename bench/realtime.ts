// The realtime row of `npm run bench` (alone: BENCH_ONLY=realtime): OpenAI's Realtime API, GET /v1/realtime
// upgraded to a WebSocket, through the gateway against the realtime emulator called directly, one WebSocket per
// connection. Three measures, the targets taking turns round by round so a machine whose speed drifts weighs on
// both alike: responses per second over open sessions (each connection asks its next text response once the last
// one's response.done came; the gateway holds, settles and logs every one), sessions per second (open, wait for
// session.created, close, over and over), and the time from a response.create to the response's first delta
// (alternating samples), the gateway's minus direct's. wrk speaks no WebSocket: the load is driven from this
// process with `ws`, for both targets alike.
import { performance } from 'node:perf_hooks';
import WebSocket, { type RawData } from 'ws';
import { cpuMs } from './processes';
import { median } from './wrk';

export const REALTIME_MODEL = 'gpt-4o-realtime-preview';

/** Where a realtime session opens: the ws:// URL with its model, and the headers that carry the key. */
export interface RealtimeTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The serving process, for its CPU time. */
  pid: number;
}

export interface RealtimeRowOptions {
  connections: number;
  rounds: number;
  /** Measured seconds per target, round and measure. */
  seconds: number;
  /** Unmeasured load on each target before anything is measured, in seconds. */
  warmupSeconds: number;
}

/** The user's turn and its response.create: the emulator answers with the words "Hello from realtime, you said: say hello". */
const USER_TURN = JSON.stringify({
  type: 'conversation.item.create',
  item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'say hello' }] },
});
const RESPONSE_CREATE = JSON.stringify({ type: 'response.create', response: { modalities: ['text'] } });
/** A response that takes longer than this failed (the run counts it as an error and drops its connection). */
const RESPONSE_TIMEOUT_MS = 10_000;

/** Opens a session; resolves once session.created came, with the time it took. */
function openSession(target: RealtimeTarget): Promise<{ socket: WebSocket; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(target.url, { headers: target.headers, perMessageDeflate: false });
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`${target.name}: no session.created`));
    }, RESPONSE_TIMEOUT_MS);
    socket.once('unexpected-response', (_request, response) => {
      clearTimeout(timer);
      reject(new Error(`${target.name}: the upgrade was refused with HTTP ${response.statusCode}`));
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('message', (data: RawData) => {
      clearTimeout(timer);
      if ((data as Buffer).includes('"session.created"')) resolve({ socket, ms: performance.now() - started });
      else reject(new Error(`${target.name}: the first event was not session.created`));
    });
  });
}

/** Closes a session and waits for the close to complete. */
function closeSession(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.close(1000);
  });
}

/** One turn: the user's item and a response.create; resolves at response.done with the time to its first delta and to its end. */
function oneResponse(socket: WebSocket): Promise<{ firstDeltaMs: number; doneMs: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let firstDeltaMs = Number.NaN;
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('close', onClose);
      if (error) reject(error);
      else resolve({ firstDeltaMs, doneMs: performance.now() - started });
    };
    const onMessage = (data: RawData) => {
      const frame = data as Buffer;
      if (Number.isNaN(firstDeltaMs) && frame.includes('"response.text.delta"')) firstDeltaMs = performance.now() - started;
      else if (frame.includes('"response.done"')) finish();
      else if (frame.includes('"type":"error"')) finish(new Error(`an error event: ${frame.toString()}`));
    };
    const onClose = (code: number) => finish(new Error(`the session closed with ${code}`));
    const timer = setTimeout(() => finish(new Error('no response.done')), RESPONSE_TIMEOUT_MS);
    socket.on('message', onMessage);
    socket.once('close', onClose);
    socket.send(USER_TURN);
    socket.send(RESPONSE_CREATE);
  });
}

interface RunResult {
  count: number;
  seconds: number;
  latencies: number[];
  errors: number;
  cpuMs: number;
}

/** `connections` open sessions, each asking for response after response until the deadline. */
async function responsesRun(target: RealtimeTarget, connections: number, warmupMs: number, measuredMs: number): Promise<RunResult> {
  const sockets = (await Promise.all(Array.from({ length: connections }, () => openSession(target)))).map((opened) => opened.socket);
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  const warmUntil = performance.now() + warmupMs;
  const until = warmUntil + measuredMs;
  let cpuBefore = 0;
  setTimeout(() => {
    measuring = true;
    cpuBefore = cpuMs(target.pid);
  }, warmupMs);
  await Promise.all(
    sockets.map(async (socket) => {
      while (performance.now() < until) {
        try {
          const { doneMs } = await oneResponse(socket);
          if (measuring && performance.now() <= until) latencies.push(doneMs);
        } catch {
          errors += 1;
          return;
        }
      }
    }),
  );
  const cpu = cpuMs(target.pid) - cpuBefore;
  await Promise.all(sockets.map(closeSession));
  return { count: latencies.length, seconds: measuredMs / 1000, latencies, errors, cpuMs: cpu };
}

/** `connections` loops of open (to session.created) and close, until the deadline. */
async function sessionsRun(target: RealtimeTarget, connections: number, warmupMs: number, measuredMs: number): Promise<RunResult> {
  const latencies: number[] = [];
  let errors = 0;
  const warmUntil = performance.now() + warmupMs;
  const until = warmUntil + measuredMs;
  let cpuBefore = 0;
  setTimeout(() => (cpuBefore = cpuMs(target.pid)), warmupMs);
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        try {
          const startedAt = performance.now();
          const { socket, ms } = await openSession(target);
          await closeSession(socket);
          if (startedAt >= warmUntil && performance.now() <= until) latencies.push(ms);
        } catch {
          errors += 1;
          return;
        }
      }
    }),
  );
  return { count: latencies.length, seconds: measuredMs / 1000, latencies, errors, cpuMs: cpuMs(target.pid) - cpuBefore };
}

const percentile = (values: number[], share: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
};

/** The median time from a response.create to its first delta, in alternating samples on one open session per target. */
async function firstDeltas(targets: readonly RealtimeTarget[], samples: number): Promise<number[]> {
  const sockets = await Promise.all(targets.map(async (target) => (await openSession(target)).socket));
  const times = targets.map(() => [] as number[]);
  for (let index = 0; index < samples; index += 1) {
    for (let turn = 0; turn < targets.length; turn += 1) {
      const which = (index + turn) % targets.length;
      times[which].push((await oneResponse(sockets[which])).firstDeltaMs);
    }
  }
  await Promise.all(sockets.map(closeSession));
  return times.map(median);
}

/**
 * The realtime rows: `targets[0]` is the emulator direct, the others are measured against it. Returns the
 * report's lines.
 */
export async function realtimeRows(targets: readonly RealtimeTarget[], options: RealtimeRowOptions): Promise<string[]> {
  const { connections, rounds, seconds, warmupSeconds } = options;
  const measuredMs = Math.max(250, Math.round((1000 * seconds) / rounds));
  // BENCH_REALTIME_ONLY=sessions or responses: that measure alone (to profile it), without the first deltas
  const only = process.env.BENCH_REALTIME_ONLY?.trim();
  const warmUp = only === 'sessions' ? sessionsRun : responsesRun;
  for (const target of targets) await warmUp(target, connections, 0, warmupSeconds * 1000);
  const measures = [
    { name: 'responses over open sessions', key: 'responses', run: responsesRun },
    { name: 'sessions (open to session.created, close)', key: 'sessions', run: sessionsRun },
  ].filter((measure) => !only || measure.key === only);
  const lines = [
    '',
    `Realtime: GET /v1/realtime, one WebSocket per connection, ${REALTIME_MODEL} on the realtime emulator (a text response of 7 deltas back to back, each asked with one user item), c=${connections}, ${rounds} alternating rounds of ${(measuredMs / 1000).toFixed(2)} s, driven from the bench process with ws (on the emulator's CPU)`,
    '',
    '| measure | target | per second | x direct (round by round) | p50 ms | p99 ms | errors | CPU µs per response or session |',
    '|---|---|---:|---|---:|---:|---:|---:|',
  ];
  for (const measure of measures) {
    const runs = targets.map(() => [] as RunResult[]);
    for (let round = 0; round < rounds; round += 1) {
      for (let turn = 0; turn < targets.length; turn += 1) {
        const which = (round + turn) % targets.length;
        runs[which].push(await measure.run(targets[which], connections, 250, measuredMs));
      }
    }
    const rate = (run: RunResult) => run.count / run.seconds;
    targets.forEach((target, which) => {
      const all = runs[which];
      const count = all.reduce((sum, run) => sum + run.count, 0);
      const perSecond = count / all.reduce((sum, run) => sum + run.seconds, 0);
      const directPerSecond = runs[0].reduce((sum, run) => sum + run.count, 0) / runs[0].reduce((sum, run) => sum + run.seconds, 0);
      const share =
        which === 0
          ? ''
          : `${(perSecond / directPerSecond).toFixed(2)} (${all.map((run, round) => (rate(run) / rate(runs[0][round])).toFixed(2)).join(', ')})`;
      const latencies = all.flatMap((run) => run.latencies);
      const cpu = (1000 * all.reduce((sum, run) => sum + run.cpuMs, 0)) / Math.max(1, count);
      lines.push(
        `| ${measure.name} | ${target.name} | ${perSecond.toFixed(0)} | ${share} | ${percentile(latencies, 0.5).toFixed(2)} | ${percentile(latencies, 0.99).toFixed(2)} | ${all.reduce((sum, run) => sum + run.errors, 0)} | ${cpu.toFixed(0)} |`,
      );
    });
  }
  if (only) return lines;
  const first = await firstDeltas(targets, 100);
  lines.push(
    '',
    `Time from a response.create to the response's first delta (median of 100 alternating samples on one open session each): ${targets.map((target, which) => `${target.name} ${first[which].toFixed(3)} ms`).join(', ')}; added by the gateway: ${targets
      .slice(1)
      .map((target, which) => `${target.name} ${(first[which + 1] - first[0]).toFixed(3)} ms`)
      .join(', ')}. The added time to session.created is the p50 of the sessions row, the gateway's minus direct's.`,
  );
  return lines;
}
