// The console's import in real Chromium against a real gateway process: root
// runs a dry run of a one-api database from Other settings and reads its
// report, then imports it; the import gives this fresh install's root account
// to the source's, so root signs in again with the old one-api password and
// finds the import's report, and an old user signs in with hers.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../server/import/__fixtures__/build';
import { FIXTURE_PASSWORDS } from '../server/import/__fixtures__/values';
import { chromiumAvailable, launchBrowser, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'import-root-pass';

describe.runIf(enabled)('import from one-api in the console', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let page: Page;
  let source: string;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    source = join(gateway.dataDir, 'one-api.db');
    copyFileSync(fixturePath('one-api-v0.5.3'), source);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' })).newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const importer = () => page.getByRole('region', { name: 'Move from one-api or new-api' });
  const openOther = async () => {
    await page.goto(`${gateway.baseUrl}/setting`);
    await page.getByRole('tab', { name: 'Other' }).click();
  };

  it('dry run, import, and the old accounts sign in', async () => {
    await openOther();
    await importer().getByRole('textbox', { name: 'Source database' }).fill(source);
    await importer().getByRole('button', { name: 'Run a dry run' }).click();
    const report = importer().getByLabel('Import report');
    await report.waitFor({ timeout: 20_000 });
    expect(await report.textContent()).toContain('looks like: one-api v0.5.3 or earlier');
    expect(await report.textContent()).toContain('DRY RUN');

    await importer().getByRole('checkbox', { name: 'Import (not a dry run)' }).check();
    await importer().getByRole('button', { name: 'Import' }).click();
    // this install's root gave way to one-api's: its session ended
    await page.waitForURL(/\/login/, { timeout: 20_000 });
    await signInThroughConsole(page, gateway.baseUrl, 'root', FIXTURE_PASSWORDS.root);
    await openOther();
    await expect
      .poll(async () => (await importer().getByLabel('Import report').textContent({ timeout: 20_000 })) ?? '', { timeout: 20_000 })
      .toContain('Switchboard import: IMPORT');
    const text = (await importer().getByLabel('Import report').textContent()) ?? '';
    expect(text).toMatch(/users\s+4\s+4\s+0/);
    expect(text).not.toContain('sk-good');

    const context = await browser.newContext({ locale: 'en-US' });
    await signInThroughConsole(await context.newPage(), gateway.baseUrl, 'alice', FIXTURE_PASSWORDS.alice);
    await context.close();
  });
});
