// Accessibility in real Chromium: axe (WCAG 2 A and AA) on the main pages in the
// light and the dark theme, <html lang> following the language, a title per
// route, the unsaved-changes prompt, the confirmation before disabling a
// user, and the error state with Retry when the API does not answer.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'a11y-root-password';

/** The main pages: path and the text that says the page has its data. */
const PAGES: Array<[path: string, ready: RegExp]> = [
  // the signed-in home is the usage dashboard
  ['/', /^Dashboard/],
  ['/channel', /Channels/],
  ['/token', /My tokens/],
  ['/token/add', /New token/],
  ['/redemption', /Manage redemption codes/],
  ['/user', /Manage users/],
  ['/log', /Usage logs/],
  ['/setting', /Settings/],
  ['/topup', /Top up/],
  ['/about', /About/],
];

async function settle(page: Page, ready: RegExp): Promise<void> {
  await page
    .getByRole('heading', { level: 1 })
    .or(page.getByRole('heading', { level: 2 }))
    .filter({ hasText: ready })
    .first()
    .waitFor({ timeout: 20_000 });
  await page.waitForLoadState('networkidle');
  // no list is still drawing skeletons, and no notice is fading in or out
  await page
    .waitForFunction(() => !document.querySelector('.MuiSkeleton-root, .MuiSnackbar-root'), undefined, { timeout: 10_000 })
    .catch(() => undefined);
  // MUI's transitions (ripple, fade) finish before contrast is measured
  await page.waitForTimeout(400);
}

describe.runIf(enabled)('accessibility and language', () => {
  let gateway: RunningGateway;
  let browser: Browser;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    browser = await launchBrowser();
    // someone to disable, a token and a redemption code so the lists have rows
    const cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${gateway.baseUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify(body),
      }).then((response) => response.json());
    expect(await call('POST', '/api/user/', { username: 'carol', display_name: 'Carol', password: 'carol-password-1' })).toMatchObject({
      success: true,
    });
    expect(
      await call('POST', '/api/token/', { name: 'laptop', remain_quota: 500000, expired_time: -1, unlimited_quota: false }),
    ).toMatchObject({ success: true });
    expect(await call('POST', '/api/redemption/', { name: 'gift', quota: 100000, count: 1 })).toMatchObject({ success: true });
    // channel-type badges of several colours
    for (const [type, name] of [
      [1, 'openai'],
      [14, 'claude'],
      [24, 'gemini'],
    ] as const) {
      expect(
        await call('POST', '/api/channel/', {
          type,
          name,
          key: `sk-${name}`,
          base_url: '',
          other: '',
          models: 'gpt-4',
          group: 'default',
          model_mapping: '{}',
        }),
      ).toMatchObject({ success: true });
    }
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  async function signedInContext(colorScheme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ colorScheme, locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
    return { context, page };
  }

  for (const scheme of ['light', 'dark'] as const) {
    it(`has no WCAG 2 A/AA violations on the main pages (${scheme})`, async () => {
      const context = await browser.newContext({ colorScheme: scheme, locale: 'en-US', viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const found: Record<string, string[]> = {};
      try {
        await page.goto(`${gateway.baseUrl}/login`);
        await settle(page, /Log in to your account/);
        found['/login'] = await axeViolations(page);
        await page.screenshot({ path: join(screenshotDir, `a11y-login-${scheme}.png`) });
        await page.locator('input[name="username"]').fill('root');
        await page.locator('input[name="password"]').fill(ROOT_PASSWORD);
        await page.getByRole('button', { name: /^log in$/i }).click();
        await page.waitForURL(`${gateway.baseUrl}/`);
        // the theme followed the browser's preference
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        expect(background).toBe(scheme === 'dark' ? 'rgb(18, 18, 18)' : 'rgb(245, 247, 251)');
        for (const [path, ready] of PAGES) {
          await page.goto(`${gateway.baseUrl}${path}`);
          await settle(page, ready);
          found[path] = await axeViolations(page);
          if (['/', '/token', '/user', '/token/add', '/setting'].includes(path)) {
            await page.screenshot({
              path: join(screenshotDir, `a11y${path === '/' ? '-home' : path.replaceAll('/', '-')}-${scheme}.png`),
              fullPage: true,
            });
          }
        }
      } finally {
        await context.close();
      }
      const failures = Object.entries(found).filter(([, violations]) => violations.length > 0);
      expect(failures, failures.map(([path, violations]) => `${path}\n  ${violations.join('\n  ')}`).join('\n')).toEqual([]);
    });
  }

  it('switches theme from the top bar and keeps the choice', async () => {
    const { context, page } = await signedInContext('light');
    try {
      await page.getByRole('button', { name: 'Toggle light/dark mode' }).click();
      await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(18, 18, 18)');
      await page.reload();
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(18, 18, 18)');
    } finally {
      await context.close();
    }
  });

  it('sets <html lang> from the language and a title per route', async () => {
    const { context, page } = await signedInContext('light');
    try {
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      const titles: Array<[string, string]> = [
        ['/token', 'Tokens · Switchboard'],
        ['/channel', 'Channels · Switchboard'],
        ['/user', 'Users · Switchboard'],
        ['/setting', 'Settings · Switchboard'],
        ['/token/add', 'New token · Switchboard'],
      ];
      for (const [path, title] of titles) {
        await page.goto(`${gateway.baseUrl}${path}`);
        await expect.poll(() => page.title()).toBe(title);
      }
      await page.getByRole('button', { name: 'Language' }).click();
      await page.getByRole('menuitem', { name: '中文' }).click();
      await expect.poll(() => page.getAttribute('html', 'lang')).toBe('zh-CN');
      await expect.poll(() => page.title()).toBe('新建令牌 · Switchboard');
      await page.getByRole('button', { name: '语言' }).click();
      await page.getByRole('menuitem', { name: 'English' }).click();
      await expect.poll(() => page.getAttribute('html', 'lang')).toBe('en');
    } finally {
      await context.close();
    }
  });

  it('shows a refusal the server codes in the chosen language', async () => {
    const context = await browser.newContext({ locale: 'zh-CN' });
    const page = await context.newPage();
    try {
      await page.goto(`${gateway.baseUrl}/login`);
      // the Chinese bundle loads on demand before the first render, which may come after the load event
      await expect.poll(() => page.getAttribute('html', 'lang'), { timeout: 30_000 }).toBe('zh-CN');
      await page.locator('input[name="username"]').fill('root');
      await page.locator('input[name="password"]').fill('not-the-password');
      await page.locator('input[name="password"]').press('Enter');
      await page.getByText('用户名或密码错误').waitFor({ timeout: 30_000 });
    } finally {
      await context.close();
    }
  });

  it('asks before leaving a form with unsaved changes', async () => {
    const { context, page } = await signedInContext('light');
    try {
      await page.goto(`${gateway.baseUrl}/token/add`);
      await page.getByRole('textbox', { name: /Name/ }).fill('half-typed');
      const asked: string[] = [];
      page.once('dialog', (dialog) => {
        asked.push(dialog.message());
        void dialog.dismiss();
      });
      await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Home' }).click();
      await expect.poll(() => asked.length).toBe(1);
      expect(asked[0]).toMatch(/changes weren't saved/);
      expect(new URL(page.url()).pathname).toBe('/token/add');
      expect(await page.getByRole('textbox', { name: /Name/ }).inputValue()).toBe('half-typed');

      // a successful save leaves without asking: the user form (react-admin's save) and the redemption form (its own submit)
      const unexpected: string[] = [];
      page.on('dialog', (dialog) => {
        // leaving the still-edited token form by a full page load asks too (the browser's own beforeunload prompt)
        if (dialog.type() !== 'beforeunload') unexpected.push(dialog.message());
        void dialog.accept();
      });
      await page.goto(`${gateway.baseUrl}/user/add`);
      await page.getByRole('textbox', { name: /Username/ }).fill('dave');
      await page.locator('input[name="password"]').fill('dave-password-1');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL(`${gateway.baseUrl}/user`);
      await page.goto(`${gateway.baseUrl}/redemption/add`);
      await page.getByRole('textbox', { name: /Name/ }).fill('batch');
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: /Create/ }).click();
      await download;
      await page.waitForURL(`${gateway.baseUrl}/redemption`);
      expect(unexpected).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('asks before disabling a user', async () => {
    const { context, page } = await signedInContext('light');
    try {
      await page.goto(`${gateway.baseUrl}/user`);
      const row = page.getByRole('row').filter({ hasText: 'carol' });
      await row.getByRole('button', { name: 'Disable' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText(/Disable this user\?/).waitFor();
      await page.screenshot({ path: join(screenshotDir, 'a11y-user-disable-confirm.png') });
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await row.getByText('Banned').waitFor({ timeout: 30_000 });
      // root's own row shows the manage actions, disabled: it reads as protected, and nothing there can be refused
      const rootRow = page.getByRole('row').filter({ hasText: 'root' });
      expect(await rootRow.getByRole('button', { name: /^disable$/i }).isDisabled()).toBe(true);
      expect(await rootRow.getByRole('button', { name: /^edit$/i }).isDisabled()).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('shows an error state with Retry when the API does not answer', async () => {
    const { context, page } = await signedInContext('light');
    try {
      await page.route('**/api/token/**', (route) => route.abort('connectionrefused'));
      await page.goto(`${gateway.baseUrl}/token`);
      await page.getByText('This page could not be loaded').waitFor({ timeout: 20_000 });
      expect(await page.locator('.MuiSkeleton-root').count()).toBe(0);
      // the browser's own "Failed to fetch" never reaches the page: the console says it in its own words
      await page.getByText('cannot reach the server: check the connection and try again').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('body').innerText()).not.toContain('Failed to fetch');
      await page.screenshot({ path: join(screenshotDir, 'a11y-token-error-state.png') });
      await page.unroute('**/api/token/**');
      await page.getByRole('button', { name: 'Retry' }).click();
      await page.getByRole('cell', { name: 'laptop' }).first().waitFor({ timeout: 30_000 });

      // the top-up page, whose balance comes from /api/user/self
      await page.route('**/api/user/self', (route) => route.abort('connectionrefused'));
      await page.goto(`${gateway.baseUrl}/topup`);
      await page.getByText('This page could not be loaded').waitFor({ timeout: 20_000 });
      await page.unroute('**/api/user/self');
      await page.getByRole('button', { name: 'Retry' }).click();
      await page.getByText('This page could not be loaded').waitFor({ state: 'detached', timeout: 30_000 });
      await page.getByTestId('remaining-quota').filter({ hasText: '$' }).waitFor();

      // the settings page, whose options come from /api/option/
      await page.route('**/api/option/**', (route) => route.abort('connectionrefused'));
      await page.goto(`${gateway.baseUrl}/setting`);
      await page.getByRole('tab', { name: /Operation/ }).click();
      await page.getByText('This page could not be loaded').waitFor({ timeout: 20_000 });
      await page.unroute('**/api/option/**');
      await page.getByRole('button', { name: 'Retry' }).click();
      await page.getByText('This page could not be loaded').waitFor({ state: 'detached', timeout: 30_000 });
    } finally {
      await context.close();
    }
  });
});
