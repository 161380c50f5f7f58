// The audit log in real Chromium against the real gateway: root changes the
// notice on the Settings page, then finds that change on the Audit page with
// the chain intact, opens the row and reads the notice before and after. At
// 1440 and 390 px, light and dark (test-results/screenshots/audit-<width>-<scheme>.png),
// with the list and the open drawer axe clean, and no sideways scroll on a phone.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe';
import { chromiumAvailable, drawerSettled, launchBrowser, screenshotDir, sidewaysOverflow, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const ROOT_PASSWORD = 'e2e-audit-root-pass';
const NOTICE = 'Audited maintenance notice';

describe.runIf(chromiumAvailable())('audit log: a setting change, found with its before and after', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await gateway?.stop();
  });

  /** The audit page at `width` in `scheme`, with the notice change's drawer open. */
  async function openNoticeChange(width: number, scheme: 'light' | 'dark') {
    await page.setViewportSize({ width, height: width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.goto(`${gateway.baseUrl}/audit`);
    await page
      .getByTestId('audit-chain')
      .getByText(/^Chain intact: \d+ rows? checked$/)
      .waitFor();
    expect(await page.title()).toBe('Audit log · Switchboard');
    const row =
      width > 1000
        ? page.getByRole('row', { name: /option #Notice/ })
        : page.getByTestId('list-card').filter({ hasText: 'option #Notice' });
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.getByText('200 Succeeded').count()).toBe(1);
    await page.waitForLoadState('networkidle');
    expect(await axeViolations(page), `list at ${width} ${scheme}`).toEqual([]);
    await row.getByRole('button', { name: 'Show the change' }).click();
    const drawer = page.getByRole('dialog', { name: /^Audit entry #\d+$/ });
    await drawerSettled(drawer);
    return drawer;
  }

  it('records the notice changed on the Settings page', async () => {
    await page.goto(`${gateway.baseUrl}/setting`);
    await page.getByRole('tab', { name: 'Other' }).click();
    const notice = page.getByRole('region', { name: 'Notice' });
    await notice.locator('textarea[name="Notice"]').fill(NOTICE);
    await notice.getByRole('button', { name: 'Save' }).click();
    await page.getByText('settings saved').last().waitFor();
  });

  for (const [width, scheme] of [
    [1440, 'light'],
    [1440, 'dark'],
    [390, 'light'],
    [390, 'dark'],
  ] as const) {
    it(`shows the change with its before and after at ${width} px, ${scheme}`, async () => {
      const drawer = await openNoticeChange(width, scheme);
      const change = drawer.getByRole('table', { name: 'Change' });
      const noticeRow = change.getByRole('row', { name: /^Notice/ });
      await noticeRow.waitFor();
      expect(await noticeRow.getByRole('cell').allTextContents()).toEqual(['""', NOTICE]);
      expect(await drawer.getByText('root (#1)').count()).toBe(1);
      expect(await drawer.getByText('PUT /api/option/').count()).toBe(1);
      await page.screenshot({ path: join(screenshotDir, `audit-${width}-${scheme}.png`) });
      expect(await axeViolations(page), `drawer at ${width} ${scheme}`).toEqual([]);
      if (width < 1000) {
        const box = await drawer.boundingBox();
        expect(Math.round(box?.width ?? 0)).toBeLessThanOrEqual(390);
        expect(await drawer.evaluate((element) => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0);
      }
      await drawer.getByRole('button', { name: 'Close' }).click();
      await drawer.waitFor({ state: 'hidden' });
      expect(await sidewaysOverflow(page)).toEqual([]);
    });
  }

  it('offers the filtered rows as CSV', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${gateway.baseUrl}/audit`);
    await page.locator('input[name="action"]').fill('option.update');
    const link = page.getByRole('link', { name: 'Export CSV' });
    await expect.poll(() => link.getAttribute('href'), { timeout: 30_000 }).toBe('/api/audit/export?action=option.update');
    const csv = await page.evaluate(async (href) => (await fetch(href)).text(), '/api/audit/export?action=option.update');
    expect(csv.split('\r\n')[0]).toMatch(/^id,seq,created_at,/);
    expect(csv).toContain(NOTICE);
  });
});
