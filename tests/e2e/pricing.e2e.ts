// The "Models and prices" page in Chromium: a user of the default group sees the
// models its channels serve with their prices per million tokens, searches
// them, and the page reads right in English and Chinese, light and dark, wide
// and on a phone, with no accessibility violation and no sideways scrolling.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, startGateway, type RunningGateway } from './support/gateway';
import { axeScan } from './support/axe';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'e2e-pricing-root-password';

describe.runIf(enabled)('models and prices', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    const root = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    const created = await fetch(`${gateway.baseUrl}/api/channel/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: root },
      body: JSON.stringify({
        name: 'prices',
        type: 1,
        key: 'sk-unused',
        models: 'gpt-4o,gpt-4o-mini,claude-sonnet-4-5,gpt-3.5-turbo',
        group: 'default',
      }),
    });
    expect(((await created.json()) as { success: boolean }).success).toBe(true);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const views = [
    { locale: 'en', width: 1440, scheme: 'light', title: 'Models and prices', search: 'Search models' },
    { locale: 'zh', width: 390, scheme: 'dark', title: '模型与价格', search: '搜索模型' },
  ] as const;

  for (const view of views) {
    it(`lists and searches the prices (${view.locale}, ${view.width} px, ${view.scheme})`, async () => {
      await page.setViewportSize({ width: view.width, height: view.width > 1000 ? 900 : 844 });
      await page.emulateMedia({ colorScheme: view.scheme, reducedMotion: 'reduce' });
      await page.evaluate((value) => localStorage.setItem('locale', value), view.locale);
      await page.goto(`${gateway.baseUrl}/pricing`);
      // a table on a wide screen; on a phone, a block per model
      const wide = view.width > 600;
      const table = page.getByRole(wide ? 'table' : 'list', { name: view.title });
      const rows = () => table.getByRole(wide ? 'row' : 'listitem').count();
      await table.waitFor();
      expect(await rows()).toBe(wide ? 5 : 4);
      expect(await page.getByTestId('gpt-4o-input').textContent()).toBe('$2.50');
      expect(await page.getByTestId('gpt-4o-output').textContent()).toBe('$10.00');
      expect(await page.getByTestId('claude-sonnet-4-5-cache_write').textContent()).toBe('$3.75');
      const overflow = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      expect(overflow.scrollWidth).toBeLessThanOrEqual(overflow.innerWidth);
      await page.screenshot({ path: join(screenshotDir, `pricing-${view.width}-${view.locale}-${view.scheme}.png`), fullPage: true });
      const { violations } = await axeScan(page).include('[data-testid="pricing"]').analyze();
      expect(violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual(
        [],
      );

      await page.getByRole('textbox', { name: view.search }).fill('mini');
      await expect.poll(rows).toBe(wide ? 2 : 1);
    });
  }
});
