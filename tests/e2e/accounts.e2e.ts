// Admin work in the console: create redemption codes (downloaded as a file), a
// user redeems one (quota rises, a top-up log appears), then the admin
// promotes, bans and deletes that user and the table follows.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser, screenshotDir } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'accounts-root-pass';

async function signIn(page: Page, baseUrl: string, username: string, password: string) {
  await page.goto(`${baseUrl}/login`);
  await page.getByRole('heading', { name: /log in to your account/i }).waitFor();
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole('button', { name: /^log in$/i }).click();
  await page.waitForURL(`${baseUrl}/`);
}

describe.runIf(enabled)('accounts: redemption codes, top-up and user management', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let adminContext: BrowserContext;
  let userContext: BrowserContext;
  let admin: Page;
  let user: Page;
  let keys: string[] = [];

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    browser = await launchBrowser();
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US', acceptDownloads: true });
    userContext = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    admin = await adminContext.newPage();
    user = await userContext.newPage();
    // the user registers through the API the console uses
    const response = await fetch(`${gateway.baseUrl}/api/user/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'carl', password: 'carl-password', password2: 'carl-password' }),
    });
    expect((await response.json()).success).toBe(true);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  it('admin creates 3 codes and they download as <name>.txt', async () => {
    await signIn(admin, gateway.baseUrl, 'root', ROOT_PASSWORD);
    await admin.goto(`${gateway.baseUrl}/redemption/add`);
    await admin.locator('input[name="name"]').fill('welcome');
    // quota is entered in dollars while the status shows dollars: $0.50 at 500000 per unit is 250000
    await admin.locator('input[name="quota"]').fill('0.5');
    await admin.locator('input[name="count"]').fill('3');
    const [download] = await Promise.all([
      admin.waitForEvent('download'),
      admin.getByRole('button', { name: /create and download/i }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('welcome.txt');
    // the browser is the run's shared one, a process of its own: the file is copied here to be read
    const saved = join(tmpdir(), `switchboard-codes-${process.pid}-${Date.now()}.txt`);
    await download.saveAs(saved);
    keys = readFileSync(saved, 'utf8').trim().split('\n');
    rmSync(saved);
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{32}$/);
    await admin.waitForURL(`${gateway.baseUrl}/redemption`);
    await admin
      .getByRole('row', { name: /welcome/ })
      .first()
      .waitFor();
    expect(await admin.getByRole('row', { name: /welcome/ }).count()).toBe(3);
    await admin.screenshot({ path: join(screenshotDir, 'redemption-list.png') });
  });

  it('a user redeems one code: the quota rises and a top-up log exists', async () => {
    await signIn(user, gateway.baseUrl, 'carl', 'carl-password');
    await user.goto(`${gateway.baseUrl}/topup`);
    const remaining = user.getByTestId('remaining-quota');
    await remaining.filter({ hasText: '$0.00' }).waitFor();
    await user.locator('input[name="code"]').fill(keys[0]);
    await user.getByRole('button', { name: /^redeem$/i }).click();
    await remaining.filter({ hasText: '$0.50' }).waitFor();
    await user.screenshot({ path: join(screenshotDir, 'topup.png') });
    const logs = await user.evaluate(async () => (await (await fetch('/api/log/self/?p=0&type=1')).json()).data);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ type: 1, quota: 250000, username: 'carl' });
    await user.locator('input[name="code"]').fill(keys[0]);
    await user.getByRole('button', { name: /^redeem$/i }).click();
    await user.getByText(/already been used/).waitFor();
  });

  it('admin promotes, bans and deletes the user, and the table follows', async () => {
    await admin.goto(`${gateway.baseUrl}/user`);
    const row = admin.getByRole('row', { name: /carl/ });
    await row.waitFor();
    // promote, demote and delete sit in the row's "more" menu
    await row.getByRole('button', { name: /^more actions$/i }).click();
    await admin.getByRole('menuitem', { name: /^promote$/i }).click();
    await admin
      .getByRole('dialog')
      .getByRole('button', { name: /confirm/i })
      .click();
    await row.getByText('Admin').waitFor();
    await row.getByRole('button', { name: /^disable$/i }).click();
    // disabling asks first, like promote, demote and delete
    await admin
      .getByRole('dialog')
      .getByRole('button', { name: /confirm/i })
      .click();
    await row.getByText('Banned').waitFor();
    await admin.screenshot({ path: join(screenshotDir, 'user-list.png') });
    // the banned user's open session stops working
    expect(await user.evaluate(async () => (await fetch('/api/user/self')).status)).toBe(401);
    await row.getByRole('button', { name: /^more actions$/i }).click();
    await admin.getByRole('menuitem', { name: /^delete$/i }).click();
    await admin
      .getByRole('dialog')
      .getByRole('button', { name: /confirm/i })
      .click();
    await admin.getByRole('row', { name: /carl/ }).waitFor({ state: 'detached' });
    // root's own row shows its manage actions disabled: nothing there can be done to the super admin
    const rootRow = admin.getByRole('row', { name: /Super admin/ });
    expect(await rootRow.getByRole('button', { name: /^disable$/i }).isDisabled()).toBe(true);
  });

  it("admin deletes a user from the user's own page (the Delete button)", async () => {
    const registered = await fetch(`${gateway.baseUrl}/api/user/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'dora', password: 'dora-password', password2: 'dora-password' }),
    });
    expect((await registered.json()).success).toBe(true);
    const id = await admin.evaluate(
      async () => ((await (await fetch('/api/user/search?keyword=dora')).json()) as { data: Array<{ id: number }> }).data[0].id,
    );
    await admin.goto(`${gateway.baseUrl}/user/edit/${id}`);
    await admin.locator('input[name="username"]').waitFor();
    expect(await admin.locator('input[name="username"]').inputValue()).toBe('dora');
    await admin.getByRole('button', { name: /^delete$/i }).click();
    await admin
      .getByRole('dialog')
      .getByRole('button', { name: /confirm/i })
      .click();
    await admin.waitForURL(`${gateway.baseUrl}/user`);
    expect(
      await admin.evaluate(async () => ((await (await fetch('/api/user/search?keyword=dora')).json()) as { data: unknown[] }).data.length),
    ).toBe(0);
  });
});
