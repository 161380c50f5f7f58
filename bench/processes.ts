// Child processes for the benchmark, each on its own event loop so that no
// two measured parts share one: the upstream emulator, the lean relay (the floor)
// and the gateway.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface Started {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * Bundles a bench process (bench/<name>.ts) the way `npm start` bundles the
 * gateway, runs it with plain node, and waits for it to print `LISTENING <url>`.
 * Every measured process runs as bundled JavaScript, so none pays for a
 * TypeScript loader the others do not.
 */
/**
 * The Node flags `npm start` gives the gateway (package.json's start script),
 * so the benchmark measures the gateway as it runs in production.
 */
export function startFlags(): string[] {
  const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts.start.split(/\s+/);
  const extra = (process.env.BENCH_GATEWAY_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const started = words.slice(
    1,
    words.findIndex((word) => word.endsWith('start.mjs')),
  );
  return [...started.filter((word) => word.startsWith('--')), ...extra];
}

/** `root`: another checkout of the project (BENCH_BASELINE), bundled and run from its own tree. */
export async function startScript(name: string, env: Record<string, string>, nodeFlags: string[] = [], root = repoRoot): Promise<Started> {
  const buildScript = pathToFileURL(join(root, 'scripts', 'buildServer.mjs')).href;
  const { bundle } = (await import(buildScript)) as { bundle: (entry: string, name: string) => Promise<string> };
  const script = await bundle(`bench/${name}.ts`, `bench-${name}`);
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeFlags, script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start:\n${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(/LISTENING (\S+)/);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)));
  });
  return {
    child,
    url,
    stop: () =>
      new Promise<void>((resolveStop) => {
        if (child.exitCode !== null) return resolveStop();
        child.once('exit', () => resolveStop());
        child.kill('SIGTERM');
      }),
  };
}

/** Resident set size of a process, in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
  return kib / 1024;
}

/** CPU time a process has used so far (user and system, all threads), in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, the 14th and 15th fields, in clock ticks (100 per second on Linux)
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU placement for the measurement: the process under load (the gateway or the
 * lean relay, never two at once) gets a core of its own, and everything that
 * drives it (this process, wrk, the emulator) shares the other. Left to the
 * scheduler, the same build measured minutes apart differed by up to 15% on
 * these two-core machines, as processes moved between cores and onto wrk's.
 * Off with BENCH_PIN=0, or where there are fewer than two cores or no taskset.
 */
export interface Placement {
  /** Pins a measured process (all its threads) to the measured core. */
  pinMeasured(pid: number): void;
  description: string;
}

export function placeProcesses(): Placement {
  const off = { pinMeasured: () => {}, description: 'not pinned (the scheduler places every process)' };
  if (process.env.BENCH_PIN === '0') return off;
  if (availableParallelism() < 2 || spawnSync('taskset', ['--version']).error !== undefined) return off;
  const pin = (cpu: number, pid: number) => spawnSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' }).status === 0;
  // this process first: wrk and the emulator, started from here, inherit CPU 0
  if (!pin(0, process.pid)) return off;
  return {
    pinMeasured: (pid) => void pin(1, pid),
    description: 'the measured process alone on CPU 1; wrk, the emulator and the bench on CPU 0',
  };
}

/**
 * The OpenAI emulator and the SQLite gateway in front of it (SQL_DSN emptied, whatever the shell has set), both
 * added to `started` for the caller to stop, the gateway pinned where the measured process runs.
 */
export async function startEmulatorAndGateway(
  started: Started[],
  placement: Placement,
  gatewayEnv: Record<string, string> = {},
): Promise<{ emulator: Started; gateway: Started }> {
  const emulator = await startScript('emulatorProcess', {});
  started.push(emulator);
  const gateway = await startScript('gatewayProcess', { SQL_DSN: '', ...gatewayEnv }, startFlags());
  started.push(gateway);
  placement.pinMeasured(gateway.child.pid!);
  return { emulator, gateway };
}
