// BENCH_ONLY=rss: the SQLite gateway's resident memory over a million relayed requests (BENCH_RSS_REQUESTS),
// plain chat at c=16 through the OpenAI emulator. wrk runs back to back, each sized from the rate of the run
// before it to end near the next tenth of the total, and the gateway's RSS is read after each; the table keeps
// the first reading at or past each tenth. A gateway that keeps something per request grows between the
// second and the third tenth (200k and 300k requests by default), when start-up and warm-up are long over.
import { prepareGateway } from './consoleApi';
import { placeProcesses, rssMiB, startEmulatorAndGateway, type Started } from './processes';
import { runWrk } from './wrk';

/** Growth between the second and third tenth still called flat, in MiB: about what the heap's size moves by from one garbage collection to the next. */
const FLAT_MIB = 5;

export async function rssReport(options: { model: string; body: unknown }): Promise<string> {
  const total = Number(process.env.BENCH_RSS_REQUESTS ?? 1_000_000);
  const step = total / 10;
  const placement = placeProcesses();
  const started: Started[] = [];
  try {
    const { emulator, gateway } = await startEmulatorAndGateway(started, placement);
    const pid = gateway.child.pid!;
    const { key } = await prepareGateway(gateway.url, emulator.url, options.model);
    const startedAt = Date.now();
    const rows = [{ requests: 0, rss: rssMiB(pid), seconds: 0 }];
    let served = 0;
    let errors = 0;
    let rate: number | undefined;
    let seconds = 0;
    while (served < total) {
      const mark = Math.min(total, (Math.floor(served / step) + 1) * step);
      // each run is sized to reach the next tenth at the rate of the run before, but at most twice as long as
      // that run: a gateway fresh from its start serves its first seconds far slower than the rest
      seconds = rate === undefined ? 2 : Math.max(1, Math.min(2 * seconds, Math.ceil((mark - served) / rate)));
      const run = await runWrk({
        url: `${gateway.url}/v1/chat/completions`,
        apiKey: key,
        body: options.body,
        connections: 16,
        durationSeconds: seconds,
      });
      if (run.requests === 0) throw new Error('the gateway served no request in a whole run');
      served += run.requests;
      errors += run.errors;
      rate = run.requestsPerSecond;
      if (served >= mark) rows.push({ requests: served, rss: rssMiB(pid), seconds: (Date.now() - startedAt) / 1000 });
    }
    const second = rows.find((row) => row.requests >= 2 * step)!;
    const third = rows.find((row) => row.requests >= 3 * step)!;
    const growth = third.rss - second.rss;
    const last = rows[rows.length - 1];
    return [
      `# Switchboard benchmark, RSS of the SQLite gateway over ${total.toLocaleString('en')} relayed requests (${new Date().toISOString()})`,
      '',
      `Plain chat at c=16 through the OpenAI emulator, wrk on loopback; CPU placement: ${placement.description}. ${served.toLocaleString('en')} requests in ${last.seconds.toFixed(0)} s (${(served / last.seconds).toFixed(0)} req/s), ${errors} errors.`,
      '',
      '| requests | RSS MiB | seconds |',
      '|---:|---:|---:|',
      ...rows.map((row) => `| ${row.requests.toLocaleString('en')} | ${row.rss.toFixed(1)} | ${row.seconds.toFixed(0)} |`),
      '',
      '| target | measured | met |',
      '|---|---|---|',
      `| RSS flat from ${second.requests.toLocaleString('en')} to ${third.requests.toLocaleString('en')} requests (grows <= ${FLAT_MIB} MiB) | ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MiB (${second.rss.toFixed(1)} -> ${third.rss.toFixed(1)}); at the end ${last.rss.toFixed(1)} MiB | ${growth <= FLAT_MIB ? 'yes' : 'NO'} |`,
      `| RSS after ${last.requests.toLocaleString('en')} requests < 150 MiB | ${last.rss.toFixed(1)} MiB | ${last.rss < 150 ? 'yes' : 'NO'} |`,
    ].join('\n');
  } finally {
    await Promise.all(started.map((part) => part.stop()));
  }
}
