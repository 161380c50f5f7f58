// `npm start`: make sure dependencies and the built console exist, then run
// the gateway in this very process (so SIGTERM reaches it directly).
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
      for (const entry of readdirSync(path)) visit(join(path, entry));
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

const { register } = await import('tsx/esm/api');
register();
await import(pathToFileURL(join(root, 'server', 'main.ts')).href);
