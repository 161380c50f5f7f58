// Passkeys in Chromium against the real gateway, with the DevTools WebAuthn
// domain's virtual authenticator (CTAP2, built in, resident keys, user
// verification) standing in for a phone or a laptop's fingerprint reader: a
// user registers a passkey on the Personal tab, signs out, signs in with the
// passkey alone, then with a password and the passkey as the second step, and
// removes it, after which the browser's copy no longer signs in. Screenshots of
// the list and the login page at 1440 and 390 px, light and dark, each axe-clean.
//
// The console is opened at http://localhost:<port>: Chromium refuses WebAuthn
// on an IP address (127.0.0.1 is not a valid relying party id), and the gateway
// says so there instead of offering a passkey it cannot make.
import { join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, sidewaysOverflow, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'passkey-root-pass';
const PASSWORD = 'pia-password-1';
const VIEWS = [
  { width: 1440, scheme: 'light' },
  { width: 1440, scheme: 'dark' },
  { width: 390, scheme: 'light' },
  { width: 390, scheme: 'dark' },
] as const;

/** axe once no notice is on screen and no transition runs (contrast is measured mid-fade otherwise). */
async function settledAxeViolations(page: Page): Promise<string[]> {
  await page.waitForFunction(() => !document.querySelector('.MuiSnackbar-root') && document.getAnimations().length === 0, undefined, {
    timeout: 20_000,
  });
  return axeViolations(page);
}

/** The page at each width and scheme: a screenshot, and what axe and the overflow check found. */
async function eachView(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const view of VIEWS) {
    await page.setViewportSize({ width: view.width, height: view.width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: view.scheme, reducedMotion: 'reduce' });
    await page.waitForFunction(
      (dark) => getComputedStyle(document.body).backgroundColor === (dark ? 'rgb(18, 18, 18)' : 'rgb(245, 247, 251)'),
      view.scheme === 'dark',
    );
    await page.screenshot({ path: join(screenshotDir, `passkeys-${name}-${view.width}-${view.scheme}.png`), fullPage: true });
    found.push(...(await settledAxeViolations(page)).map((violation) => `${view.width} ${view.scheme}: ${violation}`));
    found.push(...(await sidewaysOverflow(page)).map((box) => `${view.width} ${view.scheme}: overflows ${box}`));
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  return found;
}

async function signOut(page: Page, username: string) {
  await page.getByRole('button', { name: username }).click();
  await page.getByRole('menuitem', { name: /log out/i }).click();
  await page.waitForURL(/\/login/);
}

describe.runIf(enabled)('passkeys in the console', () => {
  let gateway: RunningGateway;
  let baseUrl: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let devtools: CDPSession;
  let authenticatorId = '';

  /** The credentials the virtual authenticator holds. */
  const heldCredentials = async () =>
    (await devtools.send('WebAuthn.getCredentials', { authenticatorId })).credentials as Array<{
      isResidentCredential: boolean;
      rpId: string;
    }>;
  const whoAmI = () => page.evaluate(async () => (await (await fetch('/api/user/self')).json()).data?.username as string | undefined);

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    baseUrl = `http://localhost:${gateway.port}`;
    const registered = await fetch(`${gateway.baseUrl}/api/user/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'pia', password: PASSWORD, password2: PASSWORD }),
    });
    expect((await registered.json()).success).toBe(true);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', colorScheme: 'light' });
    page = await context.newPage();
    devtools = await context.newCDPSession(page);
    await devtools.send('WebAuthn.enable');
    ({ authenticatorId } = await devtools.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  it('offers no passkey at 127.0.0.1, where the browser could not make one', async () => {
    const answer = await fetch(`${gateway.baseUrl}/api/passkey/login/options`, { method: 'POST' });
    expect(await answer.json()).toMatchObject({ success: false, message: expect.stringMatching(/open the console at http:\/\/localhost/) });
  });

  it('registers a named passkey on the Personal tab', async () => {
    await signInThroughConsole(page, baseUrl, 'pia', PASSWORD);
    await page.goto(`${baseUrl}/setting`);
    await page.getByText('No passkeys yet.').waitFor();
    await page.locator('input[name="passkey-name"]').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const item = page.getByTestId('passkey-item');
    await item.waitFor();
    expect(await item.textContent()).toContain('Work laptop');
    expect(await item.textContent()).toContain('never used');
    expect(await heldCredentials()).toMatchObject([{ isResidentCredential: true, rpId: 'localhost' }]);
    await page.getByTestId('passkeys').scrollIntoViewIfNeeded();
    expect(await eachView(page, 'settings')).toEqual([]);
    await signOut(page, 'pia');
  });

  it('signs in with the passkey alone, from the login page', async () => {
    await page.goto(`${baseUrl}/login`);
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor();
    expect(await eachView(page, 'login')).toEqual([]);
    await button.click();
    await page.waitForURL(`${baseUrl}/`);
    expect(await whoAmI()).toBe('pia');
    await page.goto(`${baseUrl}/setting`);
    await page
      .getByTestId('passkey-item')
      .getByText(/last used/)
      .waitFor();
    await signOut(page, 'pia');
  });

  it('asks for the passkey after the password, and accepts it as the second factor', async () => {
    await page.goto(`${baseUrl}/login`);
    await page.locator('input[name="username"]').fill('pia');
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByRole('button', { name: /^log in$/i }).click();
    await page.getByText('Use your passkey to finish signing in.').waitFor();
    expect(await whoAmI()).toBeUndefined();
    expect(await settledAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'passkeys-second-step-1440-light.png'), fullPage: true });
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${baseUrl}/`);
    expect(await whoAmI()).toBe('pia');
  });

  it('removes the passkey after a confirmation; the browser’s copy then signs nobody in', async () => {
    await page.goto(`${baseUrl}/setting`);
    await page.getByRole('button', { name: 'Remove passkey Work laptop' }).click();
    await page.getByText('Remove the passkey “Work laptop”?').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByText('No passkeys yet.').waitFor();
    await signOut(page, 'pia');

    // the authenticator still holds it; the gateway no longer knows it
    expect(await heldCredentials()).toHaveLength(1);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('this passkey was not accepted: it may have been removed, or the request expired').waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await whoAmI()).toBeUndefined();
    // and the password alone signs in again
    await signInThroughConsole(page, baseUrl, 'pia', PASSWORD);
    expect(await whoAmI()).toBe('pia');
  });
});
