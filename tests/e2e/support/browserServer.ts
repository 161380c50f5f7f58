// Vitest's global setup for the e2e project: one Chromium for the whole run. Each file connects to it and works in
// contexts of its own (a context is a fresh profile: its own cookies, storage and cache), so a file pays for a
// context, not for a browser start. Without Chromium this does nothing and the files say they are left out.
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './browser';
import { existsSync } from 'node:fs';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync(CHROMIUM_PATH)) return undefined;
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  process.env.SWITCHBOARD_CHROMIUM_ENDPOINT = server.wsEndpoint();
  return () => server.close();
}
