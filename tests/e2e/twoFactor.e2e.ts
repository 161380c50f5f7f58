// Two-factor sign-in in Chromium against the real gateway: a user enrols on
// the Personal tab by reading the secret off the page (codes are generated
// here with otpauth, as an authenticator app would), signs out, signs in with
// a code, then with a recovery code. Screenshots of the enrol panel and the
// code step, at desktop width and at 390 px.
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'two-factor-root-pass';
const PASSWORD = 'tess-password-1';

/** The code an authenticator app would show `stepOffset` 30-second steps from now. */
function codeFor(secret: string, stepOffset = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: Date.now() + stepOffset * 30_000,
  });
}

async function registerUser(baseUrl: string, username: string) {
  const response = await fetch(`${baseUrl}/api/user/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: PASSWORD, password2: PASSWORD }),
  });
  expect((await response.json()).success).toBe(true);
}

async function signOut(page: Page, username: string) {
  await page.getByRole('button', { name: username }).click();
  await page.getByRole('menuitem', { name: /log out/i }).click();
  await page.waitForURL(/\/login/);
}

/** The password step, answered with the code step. */
async function passwordStep(page: Page, baseUrl: string, username: string) {
  await page.goto(`${baseUrl}/login`);
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(PASSWORD);
  await page.getByRole('button', { name: /^log in$/i }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
}

/** axe once no notice is on screen and no transition runs (contrast is measured mid-fade otherwise). */
async function settledAxeViolations(page: Page): Promise<string[]> {
  await page.waitForFunction(() => !document.querySelector('.MuiSnackbar-root') && document.getAnimations().length === 0, undefined, {
    timeout: 20_000,
  });
  return axeViolations(page);
}

async function startEnrolment(page: Page, baseUrl: string): Promise<string> {
  await page.goto(`${baseUrl}/setting`);
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
  // the QR code image has loaded (an SVG data URL) before the screenshot
  await page.waitForFunction(() => {
    const image = document.querySelector<HTMLImageElement>('[data-testid="two-factor-enrolment"] img');
    return image !== null && image.complete && image.naturalWidth > 0;
  });
  return ((await page.getByTestId('two-factor-secret').textContent()) ?? '').replace(/\s+/g, '');
}

describe.runIf(enabled)('two-factor sign-in in the console', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let desktop: BrowserContext;
  let page: Page;
  let secret = '';
  let recoveryCodes: string[] = [];

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    browser = await launchBrowser();
    desktop = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    page = await desktop.newPage();
    await registerUser(gateway.baseUrl, 'tess');
    await registerUser(gateway.baseUrl, 'uma');
    await registerUser(gateway.baseUrl, 'vera');
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  it('enrols from the Personal tab: QR code, secret read off the page, a generated code turns it on, recovery codes shown once', async () => {
    await signInThroughConsole(page, gateway.baseUrl, 'tess', PASSWORD);
    secret = await startEnrolment(page, gateway.baseUrl);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.screenshot({ path: join(screenshotDir, 'two-factor-enrol-desktop.png'), fullPage: true });
    expect(await settledAxeViolations(page)).toEqual([]);

    await page.locator('input[name="two-factor-confirm-code"]').fill(codeFor(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByTestId('two-factor-recovery-codes');
    await list.waitFor();
    expect(await settledAxeViolations(page)).toEqual([]);
    recoveryCodes = (await list.locator('li').allTextContents()).map((code) => code.trim());
    expect(recoveryCodes).toHaveLength(10);
    await page.screenshot({ path: join(screenshotDir, 'two-factor-recovery-codes-desktop.png'), fullPage: true });
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('10 recovery codes left').waitFor();
    await signOut(page, 'tess');
  });

  it('signs in with a code from the authenticator', async () => {
    await passwordStep(page, gateway.baseUrl, 'tess');
    await page.screenshot({ path: join(screenshotDir, 'two-factor-code-step-desktop.png'), fullPage: true });
    expect(await settledAxeViolations(page)).toEqual([]);
    // still on /login: nothing opened with the password alone
    expect(new URL(page.url()).pathname).toBe('/login');
    const status = await page.evaluate(async () => (await fetch('/api/user/self')).status);
    expect(status).toBe(401);
    // the step after the one that confirmed the enrolment (a code is good once per step)
    await page.locator('input[name="code"]').fill(codeFor(secret, 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${gateway.baseUrl}/`);
    expect(await page.evaluate(async () => (await (await fetch('/api/user/self')).json()).data.username)).toBe('tess');
    await signOut(page, 'tess');
  });

  it('signs in with a recovery code, which then is spent', async () => {
    await passwordStep(page, gateway.baseUrl, 'tess');
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.screenshot({ path: join(screenshotDir, 'two-factor-recovery-step-desktop.png'), fullPage: true });
    await page.locator('input[name="recovery-code"]').fill(recoveryCodes[0]);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${gateway.baseUrl}/`);
    await page.goto(`${gateway.baseUrl}/setting`);
    await page.getByText('9 recovery codes left').waitFor();
    await signOut(page, 'tess');

    await passwordStep(page, gateway.baseUrl, 'tess');
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.locator('input[name="recovery-code"]').fill(recoveryCodes[0]);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('the code is wrong or was already used').waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('root requires it for admins: an admin without it is kept on the enrolment screen until enrolled', async () => {
    const rootContext = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    const adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    try {
      const root = await rootContext.newPage();
      await signInThroughConsole(root, gateway.baseUrl, 'root', ROOT_PASSWORD);
      // root enrols first (the switch is refused until then), then turns the requirement on
      const rootSecret = await startEnrolment(root, gateway.baseUrl);
      await root.locator('input[name="two-factor-confirm-code"]').fill(codeFor(rootSecret));
      await root.getByRole('button', { name: 'Turn on' }).click();
      await root.getByRole('button', { name: 'I have saved them' }).click();
      await root.getByRole('tab', { name: 'System' }).click();
      const requirement = root.locator('input[name="TwoFactorRequiredForAdmins"]');
      await requirement.check();
      await expect
        .poll(
          async () =>
            (await root.evaluate(async () => (await (await fetch('/api/option/')).json()).data)).find(
              (option: { key: string }) => option.key === 'TwoFactorRequiredForAdmins',
            )?.value,
          {
            timeout: 30_000,
          },
        )
        .toBe('true');
      const promoted = await root.evaluate(
        async () =>
          (
            await (
              await fetch('/api/user/manage', {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ username: 'vera', action: 'promote' }),
              })
            ).json()
          ).success,
      );
      expect(promoted).toBe(true);

      const admin = await adminContext.newPage();
      await admin.goto(`${gateway.baseUrl}/login`);
      await admin.locator('input[name="username"]').fill('vera');
      await admin.locator('input[name="password"]').fill(PASSWORD);
      await admin.getByRole('button', { name: /^log in$/i }).click();
      await admin.waitForURL(`${gateway.baseUrl}/two-factor`);
      await admin.getByRole('heading', { name: 'Set up two-factor sign-in' }).waitFor();
      // any other page sends them back
      await admin.goto(`${gateway.baseUrl}/channel`);
      await admin.waitForURL(`${gateway.baseUrl}/two-factor`);
      await admin.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      const adminSecret = ((await admin.getByTestId('two-factor-secret').textContent()) ?? '').replace(/\s+/g, '');
      await admin.screenshot({ path: join(screenshotDir, 'two-factor-required-desktop.png'), fullPage: true });
      await admin.locator('input[name="two-factor-confirm-code"]').fill(codeFor(adminSecret));
      await admin.getByRole('button', { name: 'Turn on' }).click();
      await admin.getByRole('button', { name: 'I have saved them' }).click();
      await admin.waitForURL(`${gateway.baseUrl}/`);
      await admin.goto(`${gateway.baseUrl}/channel`);
      await admin
        .getByRole('heading', { name: /channels/i })
        .first()
        .waitFor();
      expect(new URL(admin.url()).pathname).toBe('/channel');
    } finally {
      await rootContext.close();
      await adminContext.close();
    }
  });

  it('fits a 390 px phone: the enrol panel and the code step', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', isMobile: true, hasTouch: true });
    try {
      const mobile = await phone.newPage();
      await signInThroughConsole(mobile, gateway.baseUrl, 'uma', PASSWORD);
      await startEnrolment(mobile, gateway.baseUrl);
      await mobile.getByTestId('two-factor-enrolment').scrollIntoViewIfNeeded();
      const overflow = await mobile.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await mobile.screenshot({ path: join(screenshotDir, 'two-factor-enrol-390.png'), fullPage: true });

      await mobile.context().clearCookies();
      await passwordStep(mobile, gateway.baseUrl, 'tess');
      expect(await mobile.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(
        0,
      );
      await mobile.screenshot({ path: join(screenshotDir, 'two-factor-code-step-390.png'), fullPage: true });

      // in Chinese (the code step as GitHub's callback opens it)
      await mobile.evaluate(() => localStorage.setItem('locale', 'zh'));
      await mobile.goto(`${gateway.baseUrl}/login?two_factor=1`);
      await mobile.getByRole('heading', { name: '两步验证' }).waitFor();
      await mobile.getByRole('button', { name: '使用恢复码' }).click();
      await mobile.getByLabel('恢复码').waitFor();
      await mobile.screenshot({ path: join(screenshotDir, 'two-factor-recovery-step-390-zh.png'), fullPage: true });
    } finally {
      await phone.close();
    }
  });
});
