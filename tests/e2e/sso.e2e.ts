// Single sign-on in Chromium against the real gateway and a real OpenID
// provider (tests/support/oidcProvider.ts): root configures the provider in
// the System settings, signs out, presses the single sign-on button on the
// login page and comes back signed in as the account the provider named,
// created with the role its groups claim maps to. Screenshots of the settings
// section and of the login page at 1440 and 390 px, light and dark, axe clean.
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcProvider, type RunningOidcProvider } from '../support/oidcProvider';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'sso-root-password';
const SECTION = 'Single sign-on (OpenID Connect)';
const BUTTON = 'Log in with single sign-on';

/** axe once no notice is on screen and no transition runs (contrast is measured mid-fade otherwise). */
async function settledAxeViolations(page: Page): Promise<string[]> {
  await page.waitForFunction(() => !document.querySelector('.MuiSnackbar-root') && document.getAnimations().length === 0, undefined, {
    timeout: 20_000,
  });
  return axeViolations(page);
}

/** The section alone, cut from a full-page shot: an element shot taller than the screen catches the sticky top bar. */
async function sectionScreenshot(page: Page, section: Locator, file: string): Promise<void> {
  const box = await section.boundingBox();
  if (!box) throw new Error('the section is not on the page');
  const scrollY = await page.evaluate(() => window.scrollY);
  await page.screenshot({ path: join(screenshotDir, file), fullPage: true, clip: { ...box, y: box.y + scrollY } });
}

describe.runIf(enabled)('single sign-on in the console', () => {
  let gateway: RunningGateway;
  let provider: RunningOidcProvider;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    provider = await startOidcProvider([`${gateway.baseUrl}/oauth/oidc`]);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await provider?.close();
  });

  it('root configures the provider in the System settings', async () => {
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
    await page.goto(`${gateway.baseUrl}/setting`);
    await page.getByRole('tab', { name: 'System' }).click();
    const section = page.getByRole('region', { name: SECTION });
    await section.locator('input[name="OidcWellKnown"]').fill(provider.wellKnown);
    await section.locator('input[name="OidcClientId"]').fill(provider.clientId);
    await section.locator('input[name="OidcClientSecret"]').fill(provider.clientSecret);
    await section.locator('textarea[name="OidcRoleMapping"]').first().fill('{"gw-admins": 10}');
    await section.getByRole('button', { name: 'Save' }).click();
    await page.getByText('settings saved').last().waitFor();
    const toggle = section.getByRole('switch', { name: 'Allow sign-in and registration with single sign-on' });
    await toggle.click();
    await page.getByText('settings saved').last().waitFor();
    expect(await toggle.isChecked()).toBe(true);
    await section.getByText(`Redirect URI to register with the provider: ${gateway.baseUrl}/oauth/oidc`).waitFor();

    expect(await settledAxeViolations(page)).toEqual([]);
    await sectionScreenshot(page, section, 'sso-settings-desktop.png');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await settledAxeViolations(page)).toEqual([]);
    await sectionScreenshot(page, section, 'sso-settings-mobile.png');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('the login page shows the button, light and dark, wide and narrow', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const visitor = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', colorScheme });
      const login = await visitor.newPage();
      await login.goto(`${gateway.baseUrl}/login`);
      await login.getByRole('button', { name: BUTTON }).waitFor();
      expect(await settledAxeViolations(login)).toEqual([]);
      await login.screenshot({ path: join(screenshotDir, `sso-login-desktop-${colorScheme}.png`), fullPage: true });
      await login.setViewportSize({ width: 390, height: 844 });
      expect(await settledAxeViolations(login)).toEqual([]);
      await login.screenshot({ path: join(screenshotDir, `sso-login-mobile-${colorScheme}.png`), fullPage: true });
      await visitor.close();
    }
  });

  it('signs out, presses the button and lands signed in as the provisioned user', async () => {
    await page.getByRole('button', { name: 'root' }).click();
    await page.getByRole('menuitem', { name: /log out/i }).click();
    await page.waitForURL(/\/login/);
    provider.signInAs('sub-dave');
    await page.getByRole('button', { name: BUTTON }).click();
    // to the provider, which signs Dave in at once, and back through /oauth/oidc
    await page.waitForURL(`${gateway.baseUrl}/`, { timeout: 30_000 });
    await page.getByRole('button', { name: 'dave' }).waitFor();
    const self = await page.evaluate(async () => (await (await fetch('/api/user/self')).json()) as { data: Record<string, unknown> });
    expect(self.data).toMatchObject({ username: 'dave', display_name: 'Dave Admin', role: 10, email: 'dave@example.com' });
  });
});
