// A quick A/B of the gateway's CPU per request: the emulator and one or more
// gateways (this checkout's and, with PROFILE_ROOTS, other checkouts'), each
// pinned like the benchmark pins them, driven by wrk in alternating rounds.
// Prints CPU µs per request (from /proc/<pid>/stat) and RSS per target.
//
//   node --import tsx bench/profile/cpu.ts
//   PROFILE_ROOTS=/work/wt-base,. PROFILE_SECONDS=5 PROFILE_ROUNDS=3 node --import tsx bench/profile/cpu.ts
//   PROFILE_CPU_PROF=1 writes a .cpuprofile per gateway into bench/profile/out/
//   PROFILE_REQUESTS=300000 drives that many requests (plain) before reading RSS.
//   PROFILE_TTFT=400 measures the time to a stream's first byte, alternating that many samples per target.
//   PROFILE_ENV_BY_ROOT='|METRICS_ENABLED=false' gives each gateway its own environment (`|` between roots).
//   PROFILE_SCENARIOS=plain16,stream16 by default; also plain1, stream16long (200 chunks) and hit16 (the same
//   request asked of the response cache, which is then turned on in every gateway).
import { resolve, join } from 'node:path';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cpuMs, placeProcesses, repoRoot, rssMiB, startFlags, startScript, type Started } from '../processes';
import { prepareGateway } from '../consoleApi';
import { setResponseCache } from '../cacheHits';
import { runWrk } from '../wrk';
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import { firstByte } from '../starvation';

/** A Chrome DevTools Protocol session on a process started with --inspect=<port>. */
async function devtools(port: number) {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise((resolveOpen) => socket.once('open', resolveOpen));
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  const chunks: string[] = [];
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { id?: number; result?: unknown; method?: string; params?: { chunk: string } };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
    else if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params!.chunk);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolveCall) => {
      const id = next++;
      waiting.set(id, resolveCall);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    call,
    async snapshot(path: string) {
      chunks.length = 0;
      await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      writeFileSync(path, chunks.join(''));
    },
    async memory(): Promise<string> {
      const result = (await call('Runtime.evaluate', {
        expression:
          'JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 1048576)])))',
      })) as {
        result: { value: string };
      };
      return result.result.value;
    },
    close: () => socket.close(),
  };
}

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 4);
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 2);
const ROOTS = (process.env.PROFILE_ROOTS ?? '.').split(',').map((root) => resolve(root));
const SCENARIOS = (process.env.PROFILE_SCENARIOS ?? 'plain16,stream16').split(',').filter(Boolean);
const MODEL = 'gpt-3.5-turbo';
const plainBody = { model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const streamBody = { ...plainBody, stream: true, emulator: { chunks: 20 } };
const scenarioOf: Record<string, { body: unknown; connections: number; headers?: Record<string, string>; cache?: boolean }> = {
  plain16: { body: plainBody, connections: 16 },
  // the same request every time, asked of the response cache (turned on for every gateway when a scenario asks it)
  hit16: { body: plainBody, connections: 16, headers: { 'x-switchboard-cache': 'on' }, cache: true },
  plain1: { body: plainBody, connections: 1 },
  stream16: { body: streamBody, connections: 16 },
  // a long stream: against stream16, what one more chunk costs
  stream16long: { body: { ...streamBody, emulator: { chunks: 200 } }, connections: 16 },
};

/** A process's CPU seconds by thread name (the main thread apart), from /proc. */
function threadSplit(pid: number): string {
  const byName = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const name = Number(task) === pid ? 'main' : readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
    byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
  }
  const total = [...byName.values()].reduce((sum, seconds) => sum + seconds, 0);
  return [...byName]
    .sort((left, right) => right[1] - left[1])
    .map(([name, seconds]) => `${name} ${seconds.toFixed(2)} s (${((100 * seconds) / total).toFixed(1)}%)`)
    .join(', ');
}

const placement = placeProcesses();
const started: Started[] = [];
try {
  const emulator = await startScript('emulatorProcess', {});
  started.push(emulator);
  const outDir = join(repoRoot, 'bench', 'profile', 'out');
  mkdirSync(outDir, { recursive: true });
  const targets: { name: string; url: string; key: string; pid: number }[] = [];
  for (const [index, root] of ROOTS.entries()) {
    const byRoot = process.env.PROFILE_FLAGS_BY_ROOT?.split('|')[index] ?? '';
    const flags = [
      ...startFlags(),
      ...(process.env.PROFILE_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      ...byRoot.split(' ').filter(Boolean),
    ];
    if (process.env.PROFILE_CPU_PROF)
      flags.push('--cpu-prof', `--cpu-prof-dir=${outDir}`, `--cpu-prof-name=gw${index}-${Date.now()}.cpuprofile`);
    if (process.env.PROFILE_CDP) flags.push(`--inspect=127.0.0.1:${9400 + index}`);
    // PROFILE_ENV_BY_ROOT: each gateway's environment, `|`-separated like the flags (`METRICS_ENABLED=false`)
    const env = Object.fromEntries(
      (process.env.PROFILE_ENV_BY_ROOT?.split('|')[index] ?? '')
        .split(' ')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    const gateway = await startScript('gatewayProcess', env, flags, root);
    started.push(gateway);
    const { key, rootCookie } = await prepareGateway(gateway.url, emulator.url, MODEL);
    if (SCENARIOS.some((scenario) => scenarioOf[scenario].cache)) await setResponseCache(gateway.url, rootCookie, true);
    placement.pinMeasured(gateway.child.pid!);
    targets.push({ name: `${index}:${root}`, url: gateway.url, key, pid: gateway.child.pid! });
    console.log(`${targets.at(-1)!.name} pid ${gateway.child.pid} rss at start ${rssMiB(gateway.child.pid!).toFixed(1)} MiB`);
  }
  if (process.env.PASSTHROUGH) {
    const passthrough = await startScript('passthroughProcess', { UPSTREAM_URL: emulator.url, CLIENT_KEY: 'sk-bench' });
    started.push(passthrough);
    placement.pinMeasured(passthrough.child.pid!);
    targets.push({ name: 'pass-through', url: passthrough.url, key: 'sk-bench', pid: passthrough.child.pid! });
  }
  const ttftSamples = Number(process.env.PROFILE_TTFT ?? 0);
  if (ttftSamples > 0) {
    const times = targets.map(() => [] as number[]);
    for (let index = 0; index < ttftSamples; index += 1) {
      for (let turn = 0; turn < targets.length; turn += 1) {
        const which = (index + turn) % targets.length;
        times[which].push((await firstByte(targets[which].url, targets[which].key, streamBody)).ms);
      }
    }
    for (const [index, target] of targets.entries()) {
      const sorted = times[index].sort((left, right) => left - right);
      const at = (share: number) => sorted[Math.floor(share * (sorted.length - 1))].toFixed(3);
      console.log(`first byte ${target.name}: median ${at(0.5)} ms (p25 ${at(0.25)}, p75 ${at(0.75)}) of ${sorted.length}`);
    }
  }
  const requests = Number(process.env.PROFILE_REQUESTS ?? 0);
  const early = process.env.PROFILE_CDP ? await Promise.all(ROOTS.map((_, index) => devtools(9400 + index))) : [];
  for (const [index, session] of early.entries()) {
    console.log(`memory at start ${index}: ${await session.memory()}`);
    session.close();
  }
  for (const target of targets) {
    if (process.env.PROFILE_NO_WARMUP) break;
    await runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: plainBody, connections: 16, durationSeconds: 2 });
    await runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body: streamBody, connections: 16, durationSeconds: 2 });
  }
  const sessions = process.env.PROFILE_CDP ? await Promise.all(ROOTS.map((_, index) => devtools(9400 + index))) : [];
  for (const [index, session] of sessions.entries()) console.log(`memory after warm-up ${index}: ${await session.memory()}`);
  for (const session of sessions)
    if (process.env.PROFILE_ALLOC)
      await session.call('HeapProfiler.startSampling', {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: process.env.PROFILE_ALLOC !== 'promoted',
      });
  for (const session of sessions) {
    if (process.env.PROFILE_NO_CPU) break;
    await session.call('Profiler.enable');
    await session.call('Profiler.setSamplingInterval', { interval: 200 });
    await session.call('Profiler.start');
  }
  for (const scenario of SCENARIOS) {
    const { body, connections, headers } = scenarioOf[scenario];
    const cpu = targets.map(() => 0);
    const count = targets.map(() => 0);
    const rounds: string[][] = targets.map(() => []);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let turn = 0; turn < targets.length; turn += 1) {
        const which = (round + turn) % targets.length;
        const target = targets[which];
        await runWrk({ url: `${target.url}/v1/chat/completions`, apiKey: target.key, body, headers, connections, durationSeconds: 1 });
        const tracer = process.env.PROFILE_STRACE
          ? spawn('strace', ['-c', '-f', '-p', String(target.pid)], { stdio: ['ignore', 'ignore', 'pipe'] })
          : undefined;
        let traced = '';
        tracer?.stderr!.on('data', (data: Buffer) => (traced += data.toString()));
        if (tracer) await new Promise((resolveWait) => setTimeout(resolveWait, 1000));
        const before = cpuMs(target.pid);
        const run = await runWrk({
          url: `${target.url}/v1/chat/completions`,
          apiKey: target.key,
          body,
          headers,
          connections,
          durationSeconds: SECONDS,
        });
        const used = cpuMs(target.pid) - before;
        if (tracer) {
          tracer.kill('SIGINT');
          await new Promise((resolveExit) => tracer.once('exit', resolveExit));
          console.log(`${target.name}: ${run.requests} requests\n${traced}`);
        }
        cpu[which] += used;
        count[which] += run.requests;
        rounds[which].push(((1000 * used) / run.requests).toFixed(0));
        if (run.errors) console.log(`${target.name}: ${run.errors} errors`);
      }
    }
    for (const [index, target] of targets.entries()) {
      console.log(
        `${scenario} ${target.name}: ${((1000 * cpu[index]) / count[index]).toFixed(1)} µs/req (rounds ${rounds[index].join(', ')}), ${count[index]} req, rss ${rssMiB(target.pid).toFixed(1)} MiB`,
      );
    }
  }
  for (const [index, session] of sessions.entries()) {
    if (!process.env.PROFILE_ALLOC) break;
    const { profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: unknown };
    const path = join(outDir, `alloc${index}-${process.env.PROFILE_TAG ?? ''}${Date.now()}.heapprofile`);
    writeFileSync(path, JSON.stringify(profile));
    console.log(`allocation profile: ${path}`);
  }
  for (const [index, session] of sessions.entries()) {
    if (process.env.PROFILE_NO_CPU) break;
    const { profile } = (await session.call('Profiler.stop')) as { profile: unknown };
    const path = join(outDir, `cdp${index}-${process.env.PROFILE_TAG ?? ''}${Date.now()}.cpuprofile`);
    writeFileSync(path, JSON.stringify(profile));
    console.log(`profile: ${path}`);
  }
  if (requests > 0) {
    for (const target of targets) {
      let done = 0;
      while (done < requests) {
        const run = await runWrk({
          url: `${target.url}/v1/chat/completions`,
          apiKey: target.key,
          body: plainBody,
          connections: 16,
          durationSeconds: 10,
        });
        done += run.requests;
        console.log(`${target.name}: ${done} requests, rss ${rssMiB(target.pid).toFixed(1)} MiB`);
      }
    }
  }
  // each process's CPU by thread since its start (warm-up included): the main thread, V8's helpers, SQLite's checkpointer
  for (const target of targets) console.log(`threads ${target.name}: ${threadSplit(target.pid)}`);
  if (process.env.PROFILE_SIGNAL_END) for (const target of targets) process.kill(target.pid, process.env.PROFILE_SIGNAL_END);
  await new Promise((resolveWait) => setTimeout(resolveWait, 500));
  for (const [index, session] of sessions.entries()) console.log(`memory at the end ${index}: ${await session.memory()}`);
  for (const [index, session] of sessions.entries()) {
    if (!process.env.PROFILE_HEAP) break;
    const path = join(outDir, `heap${index}-${process.env.PROFILE_TAG ?? ''}${Date.now()}.heapsnapshot`);
    await session.snapshot(path);
    console.log(`heap snapshot: ${path}, rss after ${rssMiB(targets[index].pid).toFixed(1)} MiB`);
  }
  for (const session of sessions) session.close();
} finally {
  await Promise.all(started.map((part) => part.stop()));
}
