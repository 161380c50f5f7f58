// `npm start`: make sure dependencies and the built console exist, then run
// the gateway in this very process (so SIGTERM reaches it directly).
// The server is bundled to build/gateway.mjs first when missing or stale.
// Each phase prints one line when it begins and one with its time when it ends;
// the tools' own output is kept back and shown only when a phase fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const say = (line) => console.log(`[switchboard] ${line}`);
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(0)} s`;

/** Runs a command with its output held back; on failure prints that output and stops. */
function phase(command, args, begin, end) {
  say(begin);
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    console.error(`[switchboard] ${command} ${args.join(' ')} failed (exit ${result.status ?? result.error?.message})`);
    process.exit(result.status || 1);
  }
  say(`${end} in ${seconds(started)}`);
}

function newestSourceTime(paths) {
  let newest = 0;
  const visit = (path) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      // test fixtures kept beside their code (server/protocols/upstream/<vendor>/__fixtures__) are not built
      for (const entry of readdirSync(path)) if (entry !== '__fixtures__') visit(join(path, entry));
    } else if (stat.mtimeMs > newest) {
      newest = stat.mtimeMs;
    }
  };
  for (const path of paths) visit(join(root, path));
  return newest;
}

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  const install = existsSync(join(root, 'package-lock.json')) ? 'ci' : 'install';
  phase(
    npm,
    [install, '--no-audit', '--no-fund', '--loglevel=error'],
    `installing dependencies (npm ${install}; 1 to 3 minutes the first time, better-sqlite3 compiles from source)`,
    'dependencies installed',
  );
}

const builtIndex = join(root, 'dist', 'index.html');
const consoleSources = ['src', 'common', 'public', 'index.html', 'vite.config.ts'];
if (!existsSync(builtIndex) || statSync(builtIndex).mtimeMs < newestSourceTime(consoleSources)) {
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const why = existsSync(builtIndex) ? 'console sources changed, rebuilding the console' : 'building the console';
  phase(process.execPath, [vite, 'build', '--logLevel', 'warn'], `${why} (vite build)`, 'console built');
}

// the gateway runs as one bundled ES module (scripts/buildServer.mjs), rebuilt when its sources changed
const gateway = join(root, 'build', 'gateway.mjs');
if (!existsSync(gateway) || statSync(gateway).mtimeMs < newestSourceTime(['server', 'common'])) {
  say(existsSync(gateway) ? 'server sources changed, rebundling the gateway' : 'bundling the gateway');
  const started = Date.now();
  const { bundle } = await import('./buildServer.mjs');
  await bundle('server/main.ts', 'gateway');
  say(`gateway bundled in ${seconds(started)}`);
}
say('starting the gateway');
process.setSourceMapsEnabled(true);
await import(pathToFileURL(gateway).href);
