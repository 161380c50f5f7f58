// How the suites start the gateway as a process: the bundle this run's global setup built
// (tests/support/globalSetup.ts), with source maps so a stack trace names our files. Outside a Vitest run
// (`npm run bench:ratelimit` uses the same helpers) the sources run under tsx, as they always are current.
import { existsSync } from 'node:fs';

export function gatewayCommand(): { command: string; args: string[] } {
  const bundle = process.env.SWITCHBOARD_TEST_GATEWAY;
  if (bundle && existsSync(bundle)) return { command: process.execPath, args: ['--enable-source-maps', bundle] };
  return { command: process.execPath, args: ['--import', 'tsx', 'server/main.ts'] };
}

/**
 * What a spawned gateway inherits beside its own settings: on a second Node (CI's Node 24 pass), the better-sqlite3
 * addon built for that Node (server/db/sqliteAddon.ts).
 */
export function sqliteAddonEnv(): Record<string, string> {
  const addon = process.env.SWITCHBOARD_SQLITE_ADDON;
  return addon ? { SWITCHBOARD_SQLITE_ADDON: addon } : {};
}
