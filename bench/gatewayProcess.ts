// The gateway for the benchmark: a fresh SQLite file, started like `npm start`
// does (without building the console), printing its address when ready.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../server/app';
import { loadConfig } from '../server/config';
import { BENCH_ROOT_PASSWORD } from './consoleApi';

const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
const config = loadConfig({
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  SQLITE_PATH: join(dataDir, 'bench.db'),
  INITIAL_ROOT_PASSWORD: BENCH_ROOT_PASSWORD,
  LOG_LEVEL: 'error',
});
const app = await buildApp(config, { logger: { level: 'error' } });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`LISTENING http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
// the database is the run's alone: a benchmark leaves nothing behind in the temporary directory
process.on(
  'SIGTERM',
  () =>
    void app.close().then(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    }),
);
