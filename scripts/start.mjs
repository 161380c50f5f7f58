// `npm start`: make sure dependencies and the built console exist, then run
// the gateway in this very process (so SIGTERM reaches it directly).
// The server is bundled to build/gateway.mjs first when missing or stale.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(args, why) {
  console.log(`[switchboard] ${why}: npm ${args.join(' ')}`);
  const result = spawnSync(npm, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`[switchboard] npm ${args.join(' ')} failed (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
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
  run([existsSync(join(root, 'package-lock.json')) ? 'ci' : 'install'], 'installing dependencies');
}

const builtIndex = join(root, 'dist', 'index.html');
const consoleSources = ['src', 'common', 'public', 'index.html', 'vite.config.ts'];
if (!existsSync(builtIndex) || statSync(builtIndex).mtimeMs < newestSourceTime(consoleSources)) {
  run(['run', 'build'], existsSync(builtIndex) ? 'console sources changed, rebuilding' : 'building the console');
}

// the gateway runs as one bundled ES module (scripts/buildServer.mjs), rebuilt when its sources changed
const gateway = join(root, 'build', 'gateway.mjs');
if (!existsSync(gateway) || statSync(gateway).mtimeMs < newestSourceTime(['server', 'common'])) {
  console.log(`[switchboard] ${existsSync(gateway) ? 'server sources changed, rebundling' : 'bundling the gateway'}`);
  const { bundle } = await import('./buildServer.mjs');
  await bundle('server/main.ts', 'gateway');
}
process.setSourceMapsEnabled(true);
await import(pathToFileURL(gateway).href);
