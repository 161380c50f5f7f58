// The signed-in home's dashboard in Chromium against the real
// gateway: a user and root relay a few chat calls through a channel on the
// OpenAI emulator, then each looks at the dashboard at 1440 px and 390 px, in
// English and Chinese, light and dark; every view is asserted (headings, stat
// card labels and figures, chart SVGs, no sideways scrolling) and saved to
// test-results/screenshots/dashboard-<role>-<width>-<locale>-<scheme>.png, and
// the light views pass axe (contrast, names, roles).
//
// The server side (GET /api/dashboard, /api/dashboard/admin) is built on its
// own branch (p15-dash-api) and is merged before CI. Until it is, this file
// probes the endpoint once and, when the gateway does not serve it, leaves the
// suite out with a line saying so (the console side is covered meanwhile by
// tests/console/dashboard.test.tsx against msw answers).
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, setOptions, startGateway, type RunningGateway } from './support/gateway';
import { axeScan } from './support/axe';

const ROOT_PASSWORD = 'e2e-dashboard-root-pass';
const USER = { username: 'dana', password: 'dana-dashboard-pass' };

/** Does this build of the gateway answer the dashboard? (A gateway without the route says 404 `not found`.) */
async function dashboardServed(): Promise<boolean> {
  const gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
  try {
    const cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    const response = await fetch(`${gateway.baseUrl}/api/dashboard`, { headers: { cookie } });
    const body = (await response.json().catch(() => null)) as { success?: boolean } | null;
    return response.ok && body?.success === true;
  } finally {
    await gateway.stop();
  }
}

const browserReady = chromiumAvailable();
const served = browserReady && (await dashboardServed());
if (browserReady && !served) {
  console.warn(
    '[switchboard] GET /api/dashboard is not served by this build (the server side, p15-dash-api, is not merged yet): dashboard e2e left out',
  );
}

interface Post {
  path: string;
  body: unknown;
  cookie?: string;
  bearer?: string;
}

const LABELS = {
  en: {
    title: 'Dashboard',
    adminTitle: 'Dashboard: all users',
    cards: ['Balance', 'Today', 'Last 7 days', 'Last 30 days'],
    health: 'Channel health',
    topChannels: 'Top channels',
    topTokens: 'Top tokens',
  },
  zh: {
    title: '仪表盘',
    adminTitle: '仪表盘：全部用户',
    cards: ['余额', '今日', '近 7 天', '近 30 天'],
    health: '渠道健康',
    topChannels: '用量最多的渠道',
    topTokens: '用量最多的令牌',
  },
} as const;
type Locale = keyof typeof LABELS;

describe.runIf(served)('dashboard: a user and root see their usage, in every layout', () => {
  let gateway: RunningGateway;
  let emulator: OpenAIEmulator;
  let browser: Browser;

  const post = async ({ path, body, cookie, bearer }: Post) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (cookie) headers.cookie = cookie;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const response = await fetch(`${gateway.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };
  const createToken = async (cookie: string, name: string) => {
    const { body } = await post({ path: '/api/token/', cookie, body: { name, remain_quota: 5_000_000 } });
    expect(body.success, body.message).toBe(true);
    return String(body.data.key).startsWith('sk-') ? String(body.data.key) : `sk-${body.data.key}`;
  };
  const chat = async (key: string, model: string, content: string) =>
    post({ path: '/v1/chat/completions', bearer: key, body: { model, messages: [{ role: 'user', content }], emulator: { chunks: 40 } } });

  beforeAll(async () => {
    emulator = await startOpenAIEmulator({ record: false });
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    const root = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    await setOptions(gateway.baseUrl, root, { QuotaForNewUser: '10000000' });
    const created = await post({ path: '/api/user/', cookie: root, body: { username: USER.username, password: USER.password } });
    expect(created.body.success, created.body.message).toBe(true);
    const channel = await post({
      path: '/api/channel/',
      cookie: root,
      body: { name: 'emulator', type: 8, key: 'sk-good', base_url: emulator.baseUrl, models: 'gpt-4o,gpt-4o-mini', group: 'default' },
    });
    expect(channel.body.success, channel.body.message).toBe(true);

    // real usage: the user's calls on two tokens and two models, root's own, and one no channel serves
    const user = await apiLogin(gateway.baseUrl, USER.username, USER.password);
    const laptop = await createToken(user, 'laptop');
    const server = await createToken(user, 'build-server');
    const rootKey = await createToken(root, 'ops');
    for (let index = 0; index < 4; index += 1) expect((await chat(laptop, 'gpt-4o', `question ${index} from the laptop`)).status).toBe(200);
    for (let index = 0; index < 3; index += 1)
      expect((await chat(server, 'gpt-4o-mini', `build ${index} summary please`)).status).toBe(200);
    for (let index = 0; index < 2; index += 1) expect((await chat(rootKey, 'gpt-4o', `root check ${index}`)).status).toBe(200);
    expect((await chat(laptop, 'model-nobody-serves', 'hello')).status).toBeGreaterThanOrEqual(400);

    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await emulator?.close();
  });

  /** Opens `/` in one layout and checks what a reader must see there. */
  async function checkView(page: Page, options: { role: 'user' | 'root'; width: 1440 | 390; locale: Locale; scheme: 'light' | 'dark' }) {
    const { role, width, locale, scheme } = options;
    const labels = LABELS[locale];
    await page.setViewportSize({ width, height: width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.evaluate((value) => localStorage.setItem('locale', value), locale);
    await page.goto(`${gateway.baseUrl}/`);
    await page.getByRole('heading', { level: 1, name: role === 'root' ? labels.adminTitle : labels.title, exact: true }).waitFor();

    for (const [index, label] of labels.cards.entries()) {
      const card = page.getByTestId(['stat-balance', 'stat-today', 'stat-last_7_days', 'stat-last_30_days'][index]);
      await card.getByRole('heading', { name: label, exact: true }).waitFor({ state: 'visible' });
      expect(await card.getByTestId('stat-figure').textContent()).toMatch(/\$\d+\.\d{2}/);
    }
    // the calls above were billed: the last 7 days are not zero
    expect(await page.getByTestId('stat-last_7_days').getByTestId('stat-figure').textContent()).not.toBe('$0.00');

    // the charts load on demand; each draws an SVG
    for (const chart of ['spend-over-time', 'tokens-over-time', 'spend-by-model', 'requests-by-model']) {
      await page.getByTestId(`chart-${chart}`).locator('svg').first().waitFor();
    }
    await page.getByRole('table', { name: labels.topTokens }).waitFor();
    if (role === 'root') {
      await page.getByRole('heading', { name: labels.health, exact: true }).waitFor();
      await page.getByRole('table', { name: labels.topChannels }).getByText('emulator', { exact: true }).first().waitFor();
    }
    await page.waitForTimeout(300);

    const overflow = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
    expect(overflow.scrollWidth, `${role} ${width} ${locale} ${scheme}`).toBeLessThanOrEqual(overflow.innerWidth);
    await page.screenshot({ path: join(screenshotDir, `dashboard-${role}-${width}-${locale}-${scheme}.png`), fullPage: true });
    if (scheme === 'light') {
      // contrast, names and roles of the dashboard itself (the frame around it has its own checks)
      const { violations } = await axeScan(page).include('[data-testid="dashboard"]').analyze();
      expect(violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual(
        [],
      );
    }
  }

  for (const role of ['user', 'root'] as const) {
    describe(`as ${role}`, () => {
      let context: BrowserContext;
      let page: Page;

      beforeAll(async () => {
        context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
        page = await context.newPage();
        if (role === 'root') await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
        else await signInThroughConsole(page, gateway.baseUrl, USER.username, USER.password);
      });
      afterAll(async () => {
        await context?.close();
      });

      for (const width of [1440, 390] as const) {
        for (const locale of ['en', 'zh'] as const) {
          for (const scheme of ['light', 'dark'] as const) {
            it(`shows the dashboard at ${width} px, ${locale}, ${scheme}`, async () => {
              await checkView(page, { role, width, locale, scheme });
            });
          }
        }
      }

      it('keeps the range and filters in the URL, so a reload shows the same view', async () => {
        await page.setViewportSize({ width: 1440, height: 900 });
        await page.evaluate(() => localStorage.setItem('locale', 'en'));
        await page.goto(`${gateway.baseUrl}/?range=30d&model=gpt-4o`);
        await page.getByTestId('stat-balance').waitFor();
        expect(await page.getByRole('button', { name: '30 days' }).getAttribute('aria-pressed')).toBe('true');
        expect(await page.getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-4o');
        await page.getByRole('button', { name: '24 h' }).click();
        await page.waitForURL((url) => url.searchParams.get('range') === '24h' && url.searchParams.get('model') === 'gpt-4o');
        await page.reload();
        expect(await page.getByRole('button', { name: '24 h' }).getAttribute('aria-pressed')).toBe('true');
        // the model filter narrows the answer: only that model is listed
        const models = page.getByTestId('chart-requests-by-model');
        await models.locator('svg').first().waitFor();
        await page.getByTestId('section-requests-by-model').getByRole('button', { name: 'Show data table' }).click();
        const rows = page.getByTestId('section-requests-by-model').getByRole('table').getByRole('row');
        await rows.nth(1).waitFor();
        expect(await rows.count()).toBe(2);
        expect(await rows.nth(1).textContent()).toContain('gpt-4o');
      });
    });
  }
});
