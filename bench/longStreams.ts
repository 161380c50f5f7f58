// The long-stream row (BENCH_ONLY=streams alone): the SQLite gateway holds
// BENCH_STREAMS (1,000) chat streams open at once for BENCH_STREAM_MINUTES (5),
// each sending a chunk a second (the OpenAI emulator's `delay_ms: 1000`), and
// its resident memory is read every few seconds. The table gives RSS at each
// minute, what each open stream costs above the idle gateway, and whether RSS
// grew from the second minute to the last (a gateway that keeps something per
// chunk grows; one that keeps a fixed state per stream stays flat).
import { Agent, request } from 'undici';
import { consoleCall, prepareGateway } from './consoleApi';
import { placeProcesses, rssMiB, startEmulatorAndGateway, type Started } from './processes';

/** Growth from the second minute to the last still called flat, in MiB: heaps of this size move about that much between collections. */
const FLAT_MIB = 10;

interface StreamTally {
  open: number;
  ended: number;
  failed: number;
  chunks: number;
  /** Why streams failed: the status, or the error's name. */
  failures: Record<string, number>;
}

const failed = (tally: StreamTally, why: string) => {
  tally.failed += 1;
  tally.failures[why] = (tally.failures[why] ?? 0) + 1;
};

/** One stream read to its end, counting its chunks (each `data:` frame). */
async function holdStream(url: string, key: string, body: string, agent: Agent, tally: StreamTally): Promise<void> {
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body,
      dispatcher: agent,
    });
    if (response.statusCode !== 200) {
      failed(tally, String(response.statusCode));
      await response.body.text();
      return;
    }
    tally.open += 1;
    for await (const piece of response.body) tally.chunks += String(piece).split('data: ').length - 1;
    tally.open -= 1;
    tally.ended += 1;
  } catch (error) {
    failed(tally, error instanceof Error ? error.name : 'error');
  }
}

export async function longStreamReport(model: string): Promise<string[]> {
  const streams = Number(process.env.BENCH_STREAMS ?? 1000);
  const minutes = Number(process.env.BENCH_STREAM_MINUTES ?? 5);
  const placement = placeProcesses();
  const started: Started[] = [];
  const agent = new Agent({ connections: streams + 16, headersTimeout: 60_000, bodyTimeout: 60_000 });
  try {
    // room upstream for every stream at once (256 connections per origin by default)
    const { emulator, gateway } = await startEmulatorAndGateway(started, placement, { UPSTREAM_MAX_CONNECTIONS: String(streams + 64) });
    const pid = gateway.child.pid!;
    const { key, rootCookie } = await prepareGateway(gateway.url, emulator.url, model);
    // one key holds every stream: the default limits on requests in flight (128 a key, 256 an account) are lifted
    for (const option of ['TokenConcurrencyLimit', 'UserConcurrencyLimit'])
      await consoleCall(`${gateway.url}/api/option/`, { method: 'PUT', cookie: rootCookie, body: { key: option, value: '0' } });
    const idle = rssMiB(pid);
    const body = JSON.stringify({
      model,
      stream: true,
      emulator: { chunks: minutes * 60 + 15, delay_ms: 1000 },
      messages: [{ role: 'user', content: 'Stream for a long while.' }],
    });
    const tally: StreamTally = { open: 0, ended: 0, failed: 0, chunks: 0, failures: {} };
    const running: Array<Promise<void>> = [];
    // opened over about five seconds, as clients arrive, not in one burst
    for (let index = 0; index < streams; index += 1) {
      running.push(holdStream(`${gateway.url}/v1/chat/completions`, key, body, agent, tally));
      if (index % 200 === 199) await new Promise((wake) => setTimeout(wake, 1000));
    }
    const openedAt = Date.now();
    const marks: Array<{ minute: number; open: number; rss: number }> = [];
    for (let minute = 1; minute <= minutes; minute += 1) {
      // the reading just before each minute ends: every stream is still open then
      await new Promise((wake) => setTimeout(wake, Math.max(0, openedAt + minute * 60_000 - 5_000 - Date.now())));
      marks.push({ minute, open: tally.open, rss: rssMiB(pid) });
    }
    await Promise.all(running);
    const second = marks.find((mark) => mark.minute === 2) ?? marks[0];
    const last = marks[marks.length - 1];
    const growth = last.rss - second.rss;
    return [
      '',
      `Long streams: ${streams} chat streams held open at once through the SQLite gateway for ${minutes} minute${minutes === 1 ? '' : 's'}, a chunk a second each (CPU placement: ${placement.description}); idle gateway ${idle.toFixed(1)} MiB RSS; ${tally.ended} streams read to their end, ${tally.failed} failed${tally.failed > 0 ? ` (${JSON.stringify(tally.failures)})` : ''}, ${tally.chunks.toLocaleString('en')} chunks relayed.`,
      '',
      '| minute | streams open | RSS MiB | KiB per open stream above idle |',
      '|---:|---:|---:|---:|',
      ...marks.map(
        (mark) =>
          `| ${mark.minute} | ${mark.open} | ${mark.rss.toFixed(1)} | ${mark.open > 0 ? (((mark.rss - idle) * 1024) / mark.open).toFixed(1) : '-'} |`,
      ),
      ...(minutes < 3 ? [] : ['']),
      ...(minutes < 3
        ? []
        : [
            `RSS from minute 2 to minute ${last.minute}: ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MiB (${Math.abs(growth) <= FLAT_MIB ? 'flat' : 'NOT flat'}: within ${FLAT_MIB} MiB).`,
          ]),
    ];
  } finally {
    await agent.close();
    await Promise.all(started.map((part) => part.stop()));
  }
}
