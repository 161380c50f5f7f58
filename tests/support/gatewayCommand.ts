// How the suites start the gateway as a process: the bundle this run's global setup built
// (tests/setup/gatewayBundle.ts), with source maps so a stack trace names our files.
import { existsSync } from 'node:fs';

export function gatewayCommand(): { command: string; args: string[] } {
  const bundle = process.env.SWITCHBOARD_TEST_GATEWAY;
  if (!bundle || !existsSync(bundle)) {
    throw new Error(`no gateway bundle for this run (SWITCHBOARD_TEST_GATEWAY=${bundle}): run the suites through vitest, whose global setup builds it`);
  }
  return { command: process.execPath, args: ['--enable-source-maps', bundle] };
}
