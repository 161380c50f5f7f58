// The batch row (BENCH_ONLY=batch, or npm run bench:batch): does a batch the
// gateway runs itself slow other users down? On a gateway and an emulator of
// their own, another user's ordinary chat requests are timed (one after
// another, BENCH_BATCH_ROUNDS rounds of BENCH_BATCH_SAMPLES) before any batch,
// then while a BENCH_BATCH_LINES-line batch (default 10,000) runs, then again
// once the batch has ended: the rounds without a batch bracket those with it,
// so a machine whose speed drifts shows as a difference between the two
// brackets. While the other user's calls run, the batch keeps to the busy pace
// (BatchBusyLinesPerSecond, one line at a time); between the rounds and after
// them it runs at BatchConcurrency. The median, p95 and p99 of each round and
// over all rounds, and the batch's lines per second at each pace.
import { request } from 'undici';
import { consoleCall, prepareGateway } from './consoleApi';
import { placeProcesses, startEmulatorAndGateway, type Started } from './processes';

const MODEL = 'gpt-3.5-turbo';
const LINES = Number(process.env.BENCH_BATCH_LINES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? 5);
const SAMPLES = Number(process.env.BENCH_BATCH_SAMPLES ?? 200);
const chatBody = (content: string) => ({ model: MODEL, messages: [{ role: 'user', content }], max_tokens: 16 });

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** One chat request of the other user's, in ms. */
async function timed(base: string, key: string): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await request(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(chatBody('Say hello to the benchmark.')),
  });
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`the interactive request answered ${response.statusCode}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Rounds of sequential requests: each round's samples. */
async function measure(base: string, key: string, stillRunning: () => Promise<boolean> = () => Promise.resolve(true)): Promise<number[][]> {
  const rounds: number[][] = [];
  for (let round = 0; round < ROUNDS && (await stillRunning()); round += 1) {
    const samples: number[] = [];
    for (let index = 0; index < SAMPLES; index += 1) samples.push(await timed(base, key));
    rounds.push(samples);
  }
  return rounds;
}

const describeRounds = (label: string, rounds: number[][]) => {
  const all = rounds.flat();
  const perRound = rounds.map((samples) => `${percentile(samples, 50).toFixed(2)}/${percentile(samples, 95).toFixed(2)}`).join(', ');
  const at = (p: number) => `${percentile(all, p).toFixed(2)} ms`;
  return `| ${label} | ${rounds.length} × ${SAMPLES} | ${at(50)} | ${at(95)} | ${at(99)} | ${perRound} |`;
};

/** Another user with an unlimited key of their own: the one whose latency is measured. */
async function otherUserKey(gateway: string, rootCookie: string): Promise<string> {
  const password = 'bench-interactive-1';
  await consoleCall(`${gateway}/api/user/`, {
    method: 'POST',
    cookie: rootCookie,
    body: { username: 'interactive', password, quota: 1_000_000_000_000 },
  });
  const { cookie } = await consoleCall(`${gateway}/api/user/login`, { method: 'POST', body: { username: 'interactive', password } });
  const token = await consoleCall<{ key: string }>(`${gateway}/api/token/`, {
    method: 'POST',
    cookie,
    body: { name: 'other', unlimited_quota: true },
  });
  return `sk-${token.body.data.key}`;
}

/** Uploads the batch's input and creates it; its id. */
async function startBatch(gateway: string, key: string): Promise<string> {
  const lines = Array.from({ length: LINES }, (_, index) =>
    JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/chat/completions', body: chatBody(`batch line ${index}`) }),
  );
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([lines.join('\n')]), 'bench.jsonl');
  const uploaded = await fetch(`${gateway}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const file = (await uploaded.json()) as { id: string };
  const created = await fetch(`${gateway}/v1/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  const batch = (await created.json()) as { id?: string; error?: { message: string } };
  if (!batch.id) throw new Error(`the batch was refused: ${batch.error?.message}`);
  return batch.id;
}

const batchOf = async (gateway: string, key: string, id: string) =>
  (await (await fetch(`${gateway}/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
    status: string;
    request_counts: { completed: number; failed: number };
  };

const ENDED = ['completed', 'failed', 'cancelled', 'expired'];

/** The batch row's lines: the interactive latency without and with a gateway-run batch, and the batch's pace. */
export async function batchFairnessReport(): Promise<string[]> {
  const placement = placeProcesses();
  const started: Started[] = [];
  try {
    const { emulator, gateway } = await startEmulatorAndGateway(started, placement);
    const { rootCookie, key } = await prepareGateway(gateway.url, emulator.url, MODEL);
    const other = await otherUserKey(gateway.url, rootCookie);
    for (let index = 0; index < 500; index += 1) await timed(gateway.url, other);

    const before = await measure(gateway.url, other);
    const batchStarted = Date.now();
    const id = await startBatch(gateway.url, key);
    const running = async () => !ENDED.includes((await batchOf(gateway.url, key, id)).status);
    const busyFrom = await batchOf(gateway.url, key, id);
    const busyStarted = Date.now();
    const withBatch = await measure(gateway.url, other, running);
    let batch = await batchOf(gateway.url, key, id);
    const busyLines =
      batch.request_counts.completed + batch.request_counts.failed - busyFrom.request_counts.completed - busyFrom.request_counts.failed;
    const busySeconds = (Date.now() - busyStarted) / 1000;
    while (!ENDED.includes(batch.status)) {
      await new Promise((wake) => setTimeout(wake, 500));
      batch = await batchOf(gateway.url, key, id);
    }
    const seconds = (Date.now() - batchStarted) / 1000;
    const after = await measure(gateway.url, other);
    return [
      `# Switchboard batch fairness (${new Date().toISOString()})`,
      '',
      `CPU placement: ${placement.description}. Another user's non-streamed chat requests, one after another, on the SQLite gateway.`,
      '',
      '| interactive requests | rounds | median | p95 | p99 | per round (median/p95 ms) |',
      '|---|---|---|---|---|---|',
      describeRounds('before the batch', before),
      describeRounds(`while a ${LINES}-line batch runs`, withBatch),
      describeRounds('after the batch', after),
      '',
      `The batch: ${batch.status}, ${batch.request_counts.completed} lines answered, ${batch.request_counts.failed} failed, in ${seconds.toFixed(1)} s (${(LINES / seconds).toFixed(0)} lines/s); ${busyLines} of them in the ${busySeconds.toFixed(1)} s the other user's rounds ran (${(busyLines / busySeconds).toFixed(1)} lines/s at the busy pace).`,
      ...(withBatch.length < ROUNDS
        ? [`(the batch ended after ${withBatch.length} of ${ROUNDS} rounds: raise BENCH_BATCH_LINES for more)`]
        : []),
    ];
  } finally {
    await Promise.all(started.map((part) => part.stop()));
  }
}
