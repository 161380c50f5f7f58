// The first-run end-to-end path: a fresh gateway prints root's password; root signs
// in through the real console in Chromium, sees the admin menu, opens About and
// an unknown page, and signs out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { join } from 'node:path';
import { chromiumAvailable, launchBrowser, screenshotDir } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();

describe.runIf(enabled)('foundation: sign in as root, browse, sign out', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let page: Page;
  let rootPassword: string;

  beforeAll(async () => {
    gateway = await startGateway();
    const match = await gateway.waitForOutput(/username:?\s*root,?\s+password:?\s*(\S+)/i);
    rootPassword = match[1];
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  });

  afterAll(async () => {
    await browser?.close();
    const exitCode = await gateway?.stop();
    expect(exitCode).toBe(0);
  });

  it('prints a strong, random root password once', () => {
    expect(rootPassword).not.toBe('123456');
    expect(rootPassword.length).toBeGreaterThanOrEqual(16);
    expect(gateway.output().split(rootPassword).length - 1).toBe(1);
  });

  it('shows the login page with its links', async () => {
    await page.goto(`${gateway.baseUrl}/login`);
    await page
      .getByRole('link', { name: /register/i })
      .first()
      .waitFor({ state: 'visible' });
    await page.locator('a[href="/reset"]').first().waitFor({ state: 'visible' });
  });

  it('signs root in and shows the admin menu', async () => {
    await page.getByRole('heading', { name: /log in to your account/i }).waitFor();
    await page.locator('input[name="username"]').fill('root');
    await page.locator('input[name="password"]').fill(rootPassword);
    await page.getByRole('button', { name: /^(log ?in|sign ?in)$/i }).click();
    await page.waitForURL(`${gateway.baseUrl}/`);
    const nav = page.getByRole('navigation').first();
    for (const item of ['Home', 'Channel', 'Token', 'Redemption', 'Top up', 'User', 'Log', 'Setting', 'About']) {
      await nav.getByRole('link', { name: new RegExp(`^${item}$`, 'i') }).waitFor({ state: 'visible' });
    }
    const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'));
    expect(stored).toMatchObject({ username: 'root', role: 100 });
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    await page.screenshot({ path: join(screenshotDir, 'foundation-signed-in.png') });
  });

  it('opens About through the menu', async () => {
    await page
      .getByRole('navigation')
      .first()
      .getByRole('link', { name: /^about$/i })
      .click();
    await page.waitForURL(`${gateway.baseUrl}/about`);
    await page.getByRole('heading', { name: /about/i }).first().waitFor({ state: 'visible' });
  });

  it('shows the not-found page for an unknown path', async () => {
    await page.goto(`${gateway.baseUrl}/no/such/page`);
    await page.getByText('404').first().waitFor({ state: 'visible' });
    await page
      .getByText(/requested page was not found/i)
      .first()
      .waitFor({ state: 'visible' });
    await page.screenshot({ path: join(screenshotDir, 'foundation-404.png') });
  });

  it('signs out from the user menu', async () => {
    await page.goto(`${gateway.baseUrl}/`);
    await page.getByRole('button', { name: /root/i }).first().click();
    await page.getByRole('menuitem', { name: /log ?out|sign ?out/i }).click();
    await page.waitForURL(/\/login/);
    const stored = await page.evaluate(() => localStorage.getItem('user'));
    expect(stored).toBeNull();
    const self = await page.evaluate(async () => (await fetch('/api/user/self')).status);
    expect(self).toBe(401);
  });

  it('asks a signed-out visitor of an add or edit page to sign in (no form, no "expired")', async () => {
    for (const path of ['/redemption/add', '/token/edit/1', '/channel/add', '/user/edit/1']) {
      await page.goto(`${gateway.baseUrl}${path}`);
      await page.waitForURL(`${gateway.baseUrl}/login`);
      await page.getByRole('heading', { name: /log in to your account/i }).waitFor();
      expect(await page.getByText(/expired/i).count(), path).toBe(0);
    }
  });
});
