// The screens that explain the console to a newcomer, in real Chromium against the real gateway and the
// OpenAI emulator: root's first-run checklist on the dashboard, a charged log row's drawer explained in
// dollars, the public price page as a visitor sees it, and a playground turn with its report. Each is looked
// at in English and Chinese, light and dark, at 1440 and 390 px (32 screenshots in
// test-results/screenshots/explain-<screen>-<width>-<locale>-<scheme>.png), with axe's WCAG 2.0/2.1 A and AA
// rules and "label in name" clean and no sideways scroll.
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playgroundChinese } from '../../src/i18n/playground.zh';
import { playgroundEnglish } from '../../src/i18n/playground.en';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, consoleApi, setOptions, startGateway, type RunningGateway } from './support/gateway';

const ROOT_PASSWORD = 'e2e-explains-root-pass';
const LOCALES = ['en', 'zh'] as const;
const SCHEMES = ['light', 'dark'] as const;
const WIDTHS = [1440, 390] as const;
type Locale = (typeof LOCALES)[number];
type Scheme = (typeof SCHEMES)[number];

const LABELS = {
  en: { drawer: 'Log details', pricing: 'Models and prices', ...playgroundEnglish.playground },
  zh: { drawer: '日志详情', pricing: '模型与价格', ...playgroundChinese.playground },
} as const;

interface View {
  locale: Locale;
  scheme: Scheme;
  width: number;
}
const VIEWS: View[] = LOCALES.flatMap((locale) => SCHEMES.flatMap((scheme) => WIDTHS.map((width) => ({ locale, scheme, width }))));
const nameOf = (screen: string, view: View) => `explain-${screen}-${view.width}-${view.locale}-${view.scheme}.png`;

describe.runIf(chromiumAvailable())('a console that explains itself: checklist, drawer in dollars, public prices, playground turn', () => {
  let emulator: OpenAIEmulator;
  let gateway: RunningGateway;
  let browser: Browser;
  let rootContext: BrowserContext;
  let visitorContext: BrowserContext;
  let root: Page;
  let visitor: Page;
  let cookie = '';
  const pageErrors: string[] = [];

  beforeAll(async () => {
    emulator = await startOpenAIEmulator({ record: false });
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    const api = consoleApi(
      () => gateway.baseUrl,
      () => cookie,
    );
    await setOptions(gateway.baseUrl, cookie, { PublicPricingEnabled: 'true', DisplayInCurrencyEnabled: 'true' });
    const channel = await api('POST', '/api/channel/', {
      name: 'emulator',
      type: 8,
      key: 'sk-good',
      base_url: emulator.baseUrl,
      models: 'gpt-4o-mini,gpt-4o',
      group: 'default',
    });
    expect(channel.success, channel.message).toBe(true);
    const listed = await api('GET', '/api/channel/?p=0');
    const id = (listed.data as Array<{ id: number; name: string }>).find((row) => row.name === 'emulator')!.id;
    const tested = await api('GET', `/api/channel/test/${id}?model=gpt-4o-mini`);
    expect(tested.success, tested.message).toBe(true);
    const token = await api('POST', '/api/token/', { name: 'explain-key', remain_quota: 50_000_000 });
    expect(token.success, token.message).toBe(true);
    browser = await launchBrowser();
    rootContext = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    root = await rootContext.newPage();
    root.on('pageerror', (error) => pageErrors.push(error.message));
    await signInThroughConsole(root, gateway.baseUrl, 'root', ROOT_PASSWORD);
    visitorContext = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    visitor = await visitorContext.newPage();
    await visitor.goto(`${gateway.baseUrl}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await emulator?.close();
  });

  /** The page at this view's size, scheme and language, opened at `path`. */
  const open = async (page: Page, view: View, path: string) => {
    await page.setViewportSize({ width: view.width, height: view.width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: view.scheme, reducedMotion: 'reduce' });
    await page.evaluate((value) => localStorage.setItem('locale', value), view.locale);
    await page.goto(`${gateway.baseUrl}${path}`);
  };

  /** What a reader sees is whole: no sideways scroll, axe clean, then the screenshot. */
  const look = async (page: Page, view: View, screen: string, fullPage = true) => {
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    expect(await axeViolations(page)).toEqual([]);
    // a whole-page picture from the top, so the fixed top bar sits where it belongs
    if (fullPage) await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(screenshotDir, nameOf(screen, view)), fullPage });
  };

  /** Waits until a drawer has slid fully in, so a screenshot shows it whole. */
  const settled = async (drawer: Locator) => {
    await drawer.waitFor();
    await expect
      .poll(() => drawer.evaluate((element) => getComputedStyle(element).transform))
      .toMatch(/^(none|matrix\(1, 0, 0, 1, 0, 0\))$/);
  };

  for (const view of VIEWS) {
    const label = `${view.locale}, ${view.scheme}, ${view.width} px`;

    it(`shows a playground turn with its tokens, cost, timings and log link (${label})`, async () => {
      const labels = LABELS[view.locale];
      await open(root, view, '/playground');
      await expect.poll(() => root.getByRole('combobox', { name: labels.key }).textContent()).toBe('explain-key');
      // it opens on a model of the channel whose test passed
      await expect.poll(() => root.getByRole('combobox', { name: labels.model }).textContent()).toMatch(/^gpt-4o(-mini)?$/);
      await root.getByRole('textbox', { name: labels.message }).fill('Hello from the tour');
      await root.getByRole('button', { name: labels.send, exact: true }).click();
      const report = root.getByTestId('turn-report').last();
      await report.waitFor();
      // the billed cost, read from the log row, in dollars
      await expect.poll(() => report.textContent(), { timeout: 20_000 }).toMatch(/\$\d/);
      expect(await report.getByRole('link', { name: labels.report.log_link }).count()).toBe(1);
      await report.scrollIntoViewIfNeeded();
      await look(root, view, 'playground', false);
    });

    it(`shows root's first-run checklist, ticked where done (${label})`, async () => {
      await open(root, view, '/');
      const checklist = root.getByTestId('setup-checklist');
      await checklist.waitFor();
      // a channel exists and passed its test, a key exists, a request went through: those steps tick themselves
      for (const step of ['channel_added', 'channel_tested', 'token_created', 'request_sent']) {
        await expect.poll(() => checklist.getByTestId(`setup-step-${step}`).getAttribute('data-done')).toBe('true');
      }
      await look(root, view, 'checklist');
    });

    it(`explains a charged row in dollars, its ratios behind a toggle (${label})`, async () => {
      await open(root, view, '/log');
      await root
        .getByText(/^gpt-4o(-mini)?$/)
        .first()
        .click();
      const drawer = root.getByRole('dialog', { name: LABELS[view.locale].drawer });
      await settled(drawer);
      const cost = drawer.getByTestId('log-cost');
      await cost.waitFor();
      expect(await cost.textContent()).toMatch(/\$\d/);
      // the ratios are not the explanation: they wait behind the toggle
      expect(await drawer.getByTestId('log-formula').count()).toBe(0);
      await cost.scrollIntoViewIfNeeded();
      await look(root, view, 'drawer', false);
      await root.keyboard.press('Escape');
      await drawer.waitFor({ state: 'hidden' });
    });

    it(`shows the public price page to a visitor (${label})`, async () => {
      await open(visitor, view, '/pricing');
      const wide = view.width > 600;
      const prices = visitor.getByRole(wide ? 'table' : 'list', { name: LABELS[view.locale].pricing });
      await prices.waitFor();
      await expect.poll(() => visitor.getByTestId('gpt-4o-mini-input').textContent()).toMatch(/^\$\d/);
      await look(visitor, view, 'pricing');
    });
  }

  it('threw no error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
