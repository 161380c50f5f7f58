// Vitest's global setup for the suites that start the gateway as a process: the server is bundled once per run
// (esbuild, about a second) and every spawned gateway runs that bundle, as `npm start` does, instead of each
// process transpiling the sources with tsx again (1.7 s of CPU a start). The bundle is built from the working
// tree at the start of every run, so it is never older than the code under test.
import { rmSync } from 'node:fs';

export default async function setup(): Promise<() => void> {
  // every project that starts gateways names this setup; the first to run builds the bundle for the whole run
  if (process.env.SWITCHBOARD_TEST_GATEWAY) return () => undefined;
  // @ts-expect-error: a plain ES module of the build scripts, without type declarations
  const { bundle } = (await import('../../scripts/buildServer.mjs')) as { bundle: (entry: string, name: string) => Promise<string> };
  // a file of this run's own: two runs at once (two checkouts, two terminals) never share one
  const path = await bundle('server/main.ts', `gateway-test-${process.pid}`);
  process.env.SWITCHBOARD_TEST_GATEWAY = path;
  return () => {
    rmSync(path, { force: true });
    rmSync(`${path}.map`, { force: true });
  };
}
