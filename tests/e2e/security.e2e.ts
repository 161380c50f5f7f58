// The console runs under the gateway's Content-Security-Policy in real
// Chromium: no page reports a violation. The account page asks for the
// current password before setting a new one; the channel edit form asks for
// the key again when the base URL changes.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'e2e-security-root-pass';

const PAGES = [
  '/',
  '/channel',
  '/channel/add',
  '/token',
  '/token/add',
  '/redemption',
  '/topup',
  '/user',
  '/log',
  '/setting',
  '/about',
  '/user/edit',
];

describe.runIf(enabled)('security: the console under its CSP', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let page: Page;
  const violations: string[] = [];

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    // both ways a violation shows: the DOM event, and Chromium's console report
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI}`);
      });
    });
    page.on('console', (message) => {
      const text = message.text();
      if (/Content Security Policy|CSP violation/i.test(text)) violations.push(`${page.url()}: ${text}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    expect(await gateway?.stop()).toBe(0);
  });

  it('serves the console with the policy and no violation on the login page', async () => {
    const response = await page.goto(`${gateway.baseUrl}/login`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    await page.getByRole('heading', { name: /log in to your account/i }).waitFor();
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(screenshotDir, 'security-login.png') });
    expect(violations).toEqual([]);
  });

  it('renders every main page signed in as root without a violation', async () => {
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
    for (const path of PAGES) {
      await page.goto(`${gateway.baseUrl}${path}`);
      await page.waitForLoadState('networkidle');
      await page.locator('main, [role="main"], #root').first().waitFor();
    }
    await page.goto(`${gateway.baseUrl}/setting`);
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(screenshotDir, 'security-settings.png'), fullPage: true });
    expect(violations).toEqual([]);
  });

  it('asks for the current password on the account page', async () => {
    await page.goto(`${gateway.baseUrl}/user/edit`);
    await page.locator('input[name="original_password"]').waitFor();
    await page.screenshot({ path: join(screenshotDir, 'security-account.png') });
    await page.locator('input[name="password"]').fill('brand-new-pass-1');
    await page.getByRole('button', { name: /^save$/i }).click();
    await page.getByText('enter your current password to set a new one').waitFor();
    await page.locator('input[name="original_password"]').fill(ROOT_PASSWORD);
    await page.getByRole('button', { name: /^save$/i }).click();
    await page.getByText(/user info updated/i).waitFor();
    // the console's own session survived the change; the new password signs in
    await page.goto(`${gateway.baseUrl}/user/edit`);
    await page.locator('input[name="original_password"]').waitFor();
    expect(page.url()).toBe(`${gateway.baseUrl}/user/edit`);
    await apiLogin(gateway.baseUrl, 'root', 'brand-new-pass-1');
    expect(violations).toEqual([]);
  });

  it('asks for the key again when a channel edit changes the base URL', async () => {
    const cookie = await apiLogin(gateway.baseUrl, 'root', 'brand-new-pass-1');
    const created = await fetch(`${gateway.baseUrl}/api/channel/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({
        name: 'moving',
        type: 8,
        key: 'sk-e2e-secret',
        base_url: 'https://old.example',
        models: 'gpt-4',
        group: 'default',
      }),
    }).then((response) => response.json() as Promise<{ data: { ids: number[] } }>);
    await page.goto(`${gateway.baseUrl}/channel/edit/${created.data.ids[0]}`);
    const baseUrl = page.locator('input[name="base_url"]');
    await baseUrl.waitFor();
    await page.getByText(/changing the base URL or the type needs the key again/i).waitFor();
    await baseUrl.fill('https://new.example');
    await page
      .getByText(/You changed the base URL or the type: enter the key again/i)
      .first()
      .waitFor();
    await page.screenshot({ path: join(screenshotDir, 'security-channel-edit.png') });
    expect(violations).toEqual([]);
  });
});
