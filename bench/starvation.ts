// The starvation scenario: while one token holds 1,000
// slow streams, how soon does an ordinary streamed request of another user get
// its first byte? Measured on a running gateway: the other user's time to
// first byte before the flood and during it, how many of the 1,000 the
// gateway admitted (TokenConcurrencyLimit / UserConcurrencyLimit) and how many
// it refused at once with 429. Before the limits, 1,000 streams of one token
// took every upstream connection and the other user waited 86 s.
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';
import { consoleCall } from './consoleApi';

const MODEL = 'gpt-3.5-turbo';
const FLOOD = Number(process.env.BENCH_STARVATION_STREAMS ?? 1000);
const SAMPLES = Number(process.env.BENCH_STARVATION_SAMPLES ?? 200);
/** A flood stream: 120 events 250 ms apart, 30 s, longer than the measurement under it. */
const slowBody = {
  model: MODEL,
  stream: true,
  emulator: { chunks: 120, delay_ms: 250 },
  messages: [{ role: 'user', content: 'a long, slow answer' }],
};
const ordinaryBody = {
  model: MODEL,
  stream: true,
  emulator: { chunks: 20 },
  messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
};

/** Time to the first body chunk of one streamed answer, in ms, and its status. */
export async function firstByte(base: string, key: string, body: unknown = ordinaryBody): Promise<{ ms: number; status: number }> {
  const started = process.hrtime.bigint();
  const response = await request(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  let ms = Number.NaN;
  for await (const _ of response.body) {
    ms = Number(process.hrtime.bigint() - started) / 1e6;
    break;
  }
  await response.body.dump();
  return { ms, status: response.statusCode };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

interface Sampled {
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
  failed: number;
}

async function sample(base: string, key: string, count: number): Promise<Sampled> {
  const times: number[] = [];
  let failed = 0;
  for (let index = 0; index < count; index += 1) {
    const { ms, status } = await firstByte(base, key);
    if (status !== 200) failed += 1;
    times.push(ms);
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p90: percentile(times, 90),
    p99: percentile(times, 99),
    min: times[0],
    max: times[times.length - 1],
    failed,
  };
}

/** A second user with a key of its own and quota to spend: the bystander. */
async function bystanderKey(gateway: string, rootCookie: string): Promise<string> {
  const username = `other${Date.now() % 100000}`;
  const password = 'bystander-password-1';
  await consoleCall(`${gateway}/api/user/`, { method: 'POST', cookie: rootCookie, body: { username, password } });
  const found = await consoleCall(`${gateway}/api/user/search?keyword=${username}`, { cookie: rootCookie });
  const id = (found.body.data as Array<{ id: number; username: string }>).find((user) => user.username === username)!.id;
  await consoleCall(`${gateway}/api/user/`, { method: 'PUT', cookie: rootCookie, body: { id, quota: 1_000_000_000 } });
  const signIn = await consoleCall(`${gateway}/api/user/login`, { method: 'POST', body: { username, password } });
  const { cookie } = signIn;
  const token = await consoleCall<{ key: string }>(`${gateway}/api/token/`, {
    method: 'POST',
    cookie,
    body: { name: 'bystander', unlimited_quota: true },
  });
  return `sk-${token.body.data.key}`;
}

/** Opens the flood; resolves once every stream was answered (admitted streams keep running until stop()). */
async function flood(gateway: string, key: string, count: number) {
  const agent = new Agent({ connections: count + 10, pipelining: 1 });
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const statuses = new Map<number | string, number>();
  const note = (status: number | string) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const running: Array<Promise<void>> = [];
  await Promise.all(
    Array.from({ length: count }, async () => {
      try {
        const response = await request(`${gateway}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: agent,
          signal: controller.signal,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify(slowBody),
        });
        note(response.statusCode);
        if (response.statusCode !== 200) return void (await response.body.dump());
        // read the stream to its end (or the stop) in the background, as a client would
        running.push(
          new Promise<void>((resolve) => {
            response.body.on('data', () => undefined);
            response.body.once('end', resolve);
            response.body.once('error', () => resolve());
          }),
        );
      } catch (error) {
        note((error as { code?: string }).code ?? 'error');
      }
    }),
  );
  return {
    statuses,
    async stop() {
      controller.abort();
      await Promise.all(running);
      await agent.close().catch(() => undefined);
    },
  };
}

export interface StarvationOptions {
  gateway: string;
  rootCookie: string;
  /** The flooding token (root's). */
  floodKey: string;
}

/** Runs the scenario against a gateway whose channel for MODEL is set up; returns Markdown lines for the report. */
export async function starvationScenario({ gateway, rootCookie, floodKey }: StarvationOptions): Promise<string[]> {
  const bystander = await bystanderKey(gateway, rootCookie);
  const setOption = (key: string, value: string) =>
    consoleCall(`${gateway}/api/option/`, { method: 'PUT', cookie: rootCookie, body: { key, value } });
  // warm both paths up, so the first samples measure serving, not compiling
  await sample(gateway, bystander, 50);
  const before = await sample(gateway, bystander, SAMPLES);

  const limited = await flood(gateway, floodKey, FLOOD);
  const during = await sample(gateway, bystander, SAMPLES);
  await limited.stop();
  const after = await sample(gateway, bystander, SAMPLES);

  // the same flood with the per-token and per-user limits off: only the bounded wait for an upstream connection is left
  await setOption('TokenConcurrencyLimit', '0');
  await setOption('UserConcurrencyLimit', '0');
  const unlimited = await flood(gateway, floodKey, FLOOD);
  const duringUnlimited = await sample(gateway, bystander, Math.min(SAMPLES, 20));
  await unlimited.stop();
  await setOption('TokenConcurrencyLimit', '64');
  await setOption('UserConcurrencyLimit', '128');

  const counted = (statuses: Map<number | string, number>) => {
    const other = [...statuses.entries()].filter(([status]) => status !== 200 && status !== 429);
    return `${statuses.get(200) ?? 0} admitted, ${statuses.get(429) ?? 0} refused with 429 too_many_concurrent_requests${other.length ? `, other: ${other.map(([status, count]) => `${status} x ${count}`).join(', ')}` : ''}`;
  };
  const row = (name: string, s: Sampled) =>
    `| ${name} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.min.toFixed(2)} to ${s.max.toFixed(2)} | ${s.failed} |`;
  return [
    `## Starvation: another user's time to first byte while one token holds ${FLOOD} slow streams`,
    '',
    `${SAMPLES} streamed requests of a second user, one after another, before, during and after the flood (each flood stream: ${slowBody.emulator.chunks} events ${slowBody.emulator.delay_ms} ms apart); then ${Math.min(SAMPLES, 20)} more during the same flood with the concurrency limits off.`,
    '',
    '| other user | p50 ms | p90 ms | p99 ms | range ms | not 200 |',
    '|---|---:|---:|---:|---:|---:|',
    row('alone, before', before),
    row(`during ${FLOOD} streams (limits 64 / 128)`, during),
    row('alone, after', after),
    row(`during ${FLOOD} streams, limits off`, duringUnlimited),
    '',
    `Flood with the default limits: ${counted(limited.statuses)}. With the limits off: ${counted(unlimited.statuses)}.`,
    '',
  ];
}
