import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { precompress } from './scripts/precompress.ts';
import LongestFirstSequencer from './tests/support/sequencer.ts';

const gateway = process.env.SWITCHBOARD_DEV_GATEWAY ?? 'http://127.0.0.1:3000';

const testWorkers = Number(process.env.SWITCHBOARD_TEST_WORKERS) || 3;

/** Test files that run alone (the serial project): they spawn gateways or database servers and kill them. */
const serialFiles = [
  'tests/server/faults/**/*.test.ts',
  'tests/server/relay/{batchKill,crashRecovery,gracefulShutdown,leaseKill,sharedConcurrencyLimit,taskKill,twoNodeMoney,twoNodeRateLimit}.test.ts',
  'tests/server/{deployment,health,webhooksTwoNodes,workers}.test.ts',
];

export default defineConfig({
  plugins: [react(), precompress()],
  resolve: {
    alias: { 'object.entries': fileURLToPath(new URL('./src/shims/objectEntries.cjs', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    rolldownOptions: {
      output: {
        // React's renderer changes only with React: its own long-cached file, and no chunk past Vite's size warning
        codeSplitting: { groups: [{ name: 'react-dom', test: /node_modules[\\/](?:react-dom|scheduler)[\\/]/ }] },
      },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/api': gateway,
      '/v1': gateway,
    },
  },
  test: {
    // The suites mostly wait on loopback sockets and databases, so a 2-core machine runs several files at once (Vitest's
    // default, cores - 1, ran one at a time). SWITCHBOARD_TEST_WORKERS sets the count (1 runs every file in turn).
    maxWorkers: testWorkers,
    // the closing lines of every run: each project's wall time and the ten slowest files (test-results/timings.json)
    reporters: ['default', './tests/support/timingReporter.ts'],
    // longest files first within each group (tests/support/sequencer.ts). Each project is a group of its own, run one
    // after another (console, e2e, server, serial): run together, jsdom, Chromium and the gateways fought for the two
    // cores and the tests took 1,464 s; one project at a time they take 670 s on the same kind of machine.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'console',
          environment: 'jsdom',
          include: ['tests/console/**/*.test.{ts,tsx}'],
          setupFiles: ['tests/console/setup.ts'],
          // a react-admin screen rendered in jsdom takes seconds on a busy 2-core machine: the settings page's tests took
          // up to 22 s beside the other suites one day and 71 s another (the same commit, the machine's CPU slower), and
          // 45 s under stress-ng besides; no test sets a shorter limit of its own. A hang still fails.
          testTimeout: 180_000,
          // expect.poll waits up to 15 s (Vitest's default, 1 s, is a flake on a loaded machine; a pass is no slower)
          expect: { poll: { timeout: 15_000 } },
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'server',
          environment: 'node',
          include: ['tests/server/**/*.test.ts'],
          exclude: serialFiles,
          // mostly waiting on sockets and databases: more files at once than the other projects
          maxWorkers: Math.max(testWorkers, Number(process.env.SWITCHBOARD_SERVER_TEST_WORKERS) || 5),
          // every file builds its own apps, databases and emulators, so the files of a worker share its module registry:
          // the gateway's modules load once per worker instead of once per file (about half the project's time). What a
          // file could leave to the next: Redis keys (each file has its own prefix, tests/support/databases.ts), mocked
          // modules (the one file that mocks reloads them, optionStore.test.ts). SWITCHBOARD_SERVER_ISOLATE=1 isolates.
          isolate: process.env.SWITCHBOARD_SERVER_ISOLATE === '1',
          // a limit that catches a hang, not one that times work. moneyFuzz's 200 chat bodies took 17-25 s in green
          // clean-clone runs beside the other projects, against the 30 s this was; a red run of the same commit ran its
          // files at about twice the green runs' times. Tests and hooks that need more still say so themselves
          testTimeout: 90_000,
          hookTimeout: 90_000,
          sequence: { groupOrder: 2 },
        },
      },
      {
        // files that start, kill and restart gateway processes or database servers, or time what a process does:
        // one at a time, after the parallel groups, so no other file's load decides when a node dies
        test: {
          name: 'serial',
          environment: 'node',
          include: serialFiles,
          globalSetup: ['tests/support/globalSetup.ts'],
          // deployment's workers-that-cannot-start test took 28 s in a green clean-clone run: twice that must still pass
          testTimeout: 120_000,
          hookTimeout: 180_000,
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['tests/e2e/**/*.e2e.ts'],
          globalSetup: ['tests/support/globalSetup.ts', 'tests/e2e/support/browserServer.ts'],
          // for hangs: a red clean-clone run ran its e2e files at about twice the green runs' times (the tour 538 s
          // against 258-299), where foundation's sign-in test, 47-51 s in the green runs, would pass 120 s. The tour
          // and the accessibility pass set longer limits of their own
          testTimeout: 240_000,
          hookTimeout: 300_000,
          // a page's state polled for up to 30 s, Playwright's own wait for an action: Vitest's default of 1 s failed the
          // console tour once under load, and the waits of 10-15 s the files set were under what a red run's load asks
          expect: { poll: { timeout: 30_000 } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
