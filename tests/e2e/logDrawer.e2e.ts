// A failed request, from the dashboard to its log row, in real Chromium against
// the real gateway: a chat call is relayed to two channels whose emulator
// answers 500, so the gateway writes an error row (type 5) with both attempts;
// a call on a working channel writes a charged row with its formula. Root opens
// the dashboard, clicks the range's error count, lands on the log filtered to
// errors, opens the failed row's drawer and reads it; in English and Chinese,
// light and dark (test-results/screenshots/log-drawer-<scheme>-<locale>.png),
// and at 390 px. The light drawer passes axe.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { chromiumAvailable, drawerSettled, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, setOptions, startGateway, type RunningGateway } from './support/gateway';
import { axeScan } from './support/axe';

const ROOT_PASSWORD = 'e2e-log-drawer-root-pass';

const LABELS = {
  en: { title: 'Log details', attempts: 'Attempts', formula: 'How was this computed?', close: 'Close the details', error: 'Error' },
  zh: { title: '日志详情', attempts: '尝试', formula: '这是怎么算出来的？', close: '关闭详情', error: '错误' },
} as const;
type Locale = keyof typeof LABELS;

describe.runIf(chromiumAvailable())('log drawer: a failed request from the dashboard to its details', () => {
  let emulator: OpenAIEmulator;
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Does this gateway write an error row for a failed relay? */

  const post = async (path: string, body: unknown, headers: Record<string, string>) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    emulator = await startOpenAIEmulator({ record: false });
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    const cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    // one retry: the failed call tries both broken channels; a 500 must not disable them for the next locale
    await setOptions(gateway.baseUrl, cookie, { RetryTimes: '1', AutomaticDisableChannelEnabled: 'false' });
    const channels = [
      { name: 'primary-down', key: 'sk-down', models: 'gpt-4o', priority: 10 },
      { name: 'backup-down', key: 'sk-down', models: 'gpt-4o', priority: 0 },
      { name: 'emulator-ok', key: 'sk-good', models: 'gpt-4o-mini', priority: 0 },
    ];
    for (const channel of channels) {
      const created = await post('/api/channel/', { ...channel, type: 8, base_url: emulator.baseUrl, group: 'default' }, { cookie });
      expect(created.body.success, created.body.message).toBe(true);
    }
    const token = await post('/api/token/', { name: 'e2e', remain_quota: 5_000_000 }, { cookie });
    expect(token.body.success, token.body.message).toBe(true);
    const key = String(token.body.data.key).startsWith('sk-') ? String(token.body.data.key) : `sk-${token.body.data.key}`;
    const chat = (model: string) =>
      post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hello' }] }, { authorization: `Bearer ${key}` });

    expect((await chat('gpt-4o-mini')).status).toBe(200);
    expect((await chat('gpt-4o')).status).toBeGreaterThanOrEqual(500);

    // logs are written in batches a moment after the answer: wait for both rows (an error row of type 5 for the failed
    // call, a charged row for the other); a gateway that wrote no error row fails here, never skips the drawer tests
    await vi.waitFor(
      async () => {
        const logs = await fetch(`${gateway.baseUrl}/api/log/`, { headers: { cookie } }).then((response) => response.json());
        const types: number[] = Array.isArray(logs.data) ? logs.data.map((row: { type: number }) => row.type) : [];
        expect(types).toEqual(expect.arrayContaining([2, 5]));
      },
      { timeout: 30_000, interval: 200 },
    );

    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await gateway?.stop();
    await emulator?.close();
  });

  /** From the dashboard's error count to the failed row's open drawer. */
  async function openFailedRow(locale: Locale, scheme: 'light' | 'dark', width: number) {
    await page.setViewportSize({ width, height: width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.evaluate((value) => localStorage.setItem('locale', value), locale);
    await page.goto(`${gateway.baseUrl}/`);
    const errors = page.getByTestId('range-totals').getByRole('link', { name: '1', exact: true });
    await errors.click();
    await page.waitForURL((url) => url.pathname === '/log' && JSON.parse(url.searchParams.get('filter') ?? '{}').type === 5);
    // the list holds the error rows only: the charged call is not among them
    const failed = page.getByText('gpt-4o', { exact: true }).first();
    await failed.waitFor();
    expect(await page.getByText('gpt-4o-mini', { exact: true }).count()).toBe(0);
    await failed.click();
    const drawer = page.getByRole('dialog', { name: LABELS[locale].title });
    await drawerSettled(drawer);
    return drawer;
  }

  for (const locale of ['en', 'zh'] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`opens the failed row's drawer from the dashboard's error count, ${locale}, ${scheme}`, async () => {
        const labels = LABELS[locale];
        const drawer = await openFailedRow(locale, scheme, 1440);
        await drawer.getByText(labels.error, { exact: true }).waitFor();
        await drawer.getByText('gpt-4o', { exact: true }).first().waitFor();
        // the channel by name, and both channels the request tried, each with its status
        expect(await drawer.getByText(/^#\d+$/).count()).toBe(0);
        const attempts = drawer.getByRole('table', { name: labels.attempts });
        const rows = attempts.getByRole('row');
        expect(await rows.count()).toBe(3);
        expect(await rows.nth(1).textContent()).toContain('primary-down');
        expect(await rows.nth(1).textContent()).toContain('500');
        expect(await rows.nth(2).textContent()).toContain('backup-down');
        expect(await drawer.locator('code').first().textContent()).toMatch(/\S{6,}/);
        await page.screenshot({ path: join(screenshotDir, `log-drawer-${scheme}-${locale}.png`) });
        if (scheme === 'light') {
          const { violations } = await axeScan(page).include('[data-testid="log-drawer"]').withTags(['wcag2a', 'wcag2aa']).analyze();
          expect(
            violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`),
          ).toEqual([]);
        }
        await page.keyboard.press('Escape');
        await drawer.waitFor({ state: 'hidden' });
      });
    }
  }

  it('fits a phone: the drawer fills 390 px without a sideways scroll, and its close button closes it', async () => {
    const drawer = await openFailedRow('en', 'light', 390);
    await drawer.getByRole('table', { name: LABELS.en.attempts }).waitFor();
    const box = await drawer.boundingBox();
    expect(Math.round(box?.width ?? 0)).toBeLessThanOrEqual(390);
    const overflow = await drawer.evaluate((element) => element.scrollWidth - element.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshotDir, 'log-drawer-390-light-en.png') });
    await drawer.getByRole('button', { name: LABELS.en.close }).click();
    await drawer.waitFor({ state: 'hidden' });
  });

  it('on a phone, folds the filters behind a Filters button so the first screen shows rows; in Chinese the rows speak Chinese', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => localStorage.setItem('locale', 'zh'));
    await page.goto(`${gateway.baseUrl}/log`);
    // the charged call's row: its ratios in Chinese, inside the first screen
    const ratios = page.getByText(/^模型倍率 [\d.]+，分组倍率 [\d.]+$/).first();
    await ratios.waitFor();
    expect(((await ratios.boundingBox())?.y ?? 9999) + 20).toBeLessThanOrEqual(844);
    expect(await page.getByRole('combobox', { name: '类型' }).count()).toBe(0);
    await page.screenshot({ path: join(screenshotDir, 'log-390-zh-filters-folded.png') });
    const toggle = page.getByRole('button', { name: '筛选' });
    await toggle.click();
    await page.getByRole('combobox', { name: '类型' }).waitFor();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    await page.evaluate(() => localStorage.setItem('locale', 'en'));
  });

  it('answers "how was this computed?" on a charged row, with the numbers', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.evaluate(() => localStorage.setItem('locale', 'en'));
    await page.goto(`${gateway.baseUrl}/log`);
    await page.getByText('gpt-4o-mini', { exact: true }).first().click();
    const drawer = page.getByRole('dialog', { name: LABELS.en.title });
    await drawerSettled(drawer);
    await drawer.getByText(LABELS.en.formula).waitFor();
    // the charge reads in dollars; the ratios and the quota formula wait behind their toggle
    expect(await drawer.getByTestId('log-cost').textContent()).toMatch(/\$\d/);
    await drawer.getByRole('button', { name: 'Show ratios' }).click();
    const formula = drawer.getByTestId('log-formula');
    expect(await formula.textContent()).toMatch(/\d.*=\s*\d/);
    expect(await drawer.getByText('emulator-ok').count()).toBeGreaterThan(0);
    await formula.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, 'log-drawer-formula-light-en.png') });
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'hidden' });
  });
});
