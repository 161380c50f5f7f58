// A tour of issue 27's screens in real Chromium against the real gateway and
// the OpenAI emulator. Root first makes a multi-key channel through the form
// (the "one channel holding all the keys" switch, keys one per line) and works
// its key list: the keys are masked, one is tested, one disabled, one deleted.
// Then each screen is shown in the light and the dark theme, in English and
// Chinese, at 1440 and 390 px, with a screenshot of each
// (test-results/screenshots/tour-<screen>-<theme>-<lang>-<width>.png), no
// sideways scrolling and no axe (WCAG 2 A/AA) violation: the multi-key
// channel's edit page with its keys, the settings price table, the users'
// "Models and prices" page, the playground after a streamed answer, and a key
// over its daily budget (refused in the playground, its spend in red in the
// key list). One browser page and one gateway serve the whole tour.
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { englishBundle } from '../../src/i18n';
import { chineseMessages } from '../../src/i18n/zh';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { axeViolations } from './support/axe';
import { chromiumAvailable, screenshotDir, signedInPage } from './support/browser';
import { apiLogin, consoleApi, startGateway, type RunningGateway } from './support/gateway';

const ROOT_PASSWORD = 'e2e-tour-root-pass';
const KEYS = ['sk-tour-alpha-0001', 'sk-tour-bravo-0002', 'sk-tour-charlie-0003'];
// maskKey: the first 3 and the last 4 characters of a key of 12 or more
const MASKED = KEYS.map((key) => `${key.slice(0, 3)}****${key.slice(-4)}`);
const MODELS = ['gpt-4o-mini', 'gpt-4o', 'gpt-3.5-turbo'];

type Lang = 'en' | 'zh';
interface View {
  theme: 'light' | 'dark';
  lang: Lang;
  width: 1440 | 390;
}
const VIEWS: View[] = (['light', 'dark'] as const).flatMap((theme) =>
  (['en', 'zh'] as const).flatMap((lang) => ([1440, 390] as const).map((width) => ({ theme, lang, width }))),
);
const viewName = ({ theme, lang, width }: View) => `${theme}-${lang}-${width}`;

/** A console string in a language, from the bundles the console itself ships (polyglot's %{name} filled in). */
function text(lang: Lang, path: string, values: Record<string, string> = {}): string {
  const bundle = lang === 'en' ? englishBundle : chineseMessages;
  const found = path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], bundle);
  if (typeof found !== 'string') throw new Error(`no ${lang} string at ${path}`);
  return found.replace(/%\{(\w+)\}/g, (_, name: string) => values[name] ?? '');
}

describe.runIf(chromiumAvailable())(
  'console tour: multi-key channel, prices, playground and budgets in both themes, both languages, wide and phone',
  () => {
    let emulator: OpenAIEmulator;
    let gateway: RunningGateway;
    let browser: Browser;
    let page: Page;
    let cookie: string;
    let channelId = 0;
    let budgetKey = '';
    let budgetTokenId = 0;
    const pageErrors: string[] = [];

    const api = consoleApi(
      () => gateway.baseUrl,
      () => cookie,
    );

    beforeAll(async () => {
      emulator = await startOpenAIEmulator({ record: true });
      gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
      cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
      // the key over budget first, so the playground's default key (the newest) is the one with room
      const budgeted = await api('POST', '/api/token/', {
        name: 'tiny-budget',
        remain_quota: 5_000_000,
        budget_period: 'day',
        budget_quota: 100_000,
      });
      expect(budgeted.success, budgeted.message).toBe(true);
      budgetTokenId = budgeted.data.id;
      budgetKey = `sk-${budgeted.data.key}`;
      const roomy = await api('POST', '/api/token/', { name: 'tour-key', remain_quota: 5_000_000 });
      expect(roomy.success, roomy.message).toBe(true);
      ({ browser, page } = await signedInPage(gateway.baseUrl, 'root', ROOT_PASSWORD));
      page.on('pageerror', (error) => pageErrors.push(error.message));
    });
    afterAll(async () => {
      await browser?.close();
      await gateway?.stop();
      await emulator?.close();
    });

    /** Opens a path in a view: its size, its colour scheme (the console follows the browser's until toggled) and its language. */
    const open = async (view: View, path: string) => {
      await page.setViewportSize({ width: view.width, height: view.width > 600 ? 900 : 844 });
      await page.emulateMedia({ colorScheme: view.theme, reducedMotion: 'reduce' });
      await page.evaluate((locale) => localStorage.setItem('locale', locale), view.lang);
      await page.goto(`${gateway.baseUrl}${path}`);
      await expect.poll(() => page.getAttribute('html', 'lang'), { timeout: 30_000 }).toBe(view.lang === 'zh' ? 'zh-CN' : 'en');
    };

    /** Waits for the page to be still, then takes the screenshot and notes any sideways scroll and axe violation. */
    const capture = async (screen: string, view: View, problems: string[], element?: Locator) => {
      await page.waitForLoadState('networkidle');
      // no skeleton still drawn and no notice fading in or out; MUI's transitions end before contrast is measured
      await page
        .waitForFunction(() => !document.querySelector('.MuiSkeleton-root, .MuiSnackbar-root'), undefined, { timeout: 10_000 })
        .catch(() => undefined);
      await page.waitForTimeout(300);
      const path = join(screenshotDir, `tour-${screen}-${viewName(view)}.png`);
      // an element is cut from the whole page, where the fixed top bar stays at the top instead of over the element
      const clip = await element?.evaluate((box) => {
        const { x, y, width, height } = box.getBoundingClientRect();
        return { x: x + window.scrollX, y: y + window.scrollY, width, height };
      });
      await page.screenshot({ path, fullPage: true, clip });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 0) problems.push(`${screen} ${viewName(view)}: ${overflow} px of sideways scroll`);
      for (const violation of await axeViolations(page)) problems.push(`${screen} ${viewName(view)}: ${violation}`);
    };

    const keyRow = (masked: string) => page.getByRole('row').filter({ hasText: masked });
    const storedKeys = async () =>
      ((await api('GET', `/api/channel/${channelId}/keys`)).data as Array<{ key: string; status: number }>).map(
        ({ key, status }) => `${key} ${status}`,
      );

    it('creates a multi-key channel through the form; its key list masks the keys, tests, disables and deletes one', async () => {
      await page.goto(`${gateway.baseUrl}/channel/add`);
      await page.locator('input[name="name"]').waitFor();
      await page.getByRole('combobox', { name: 'Type' }).click();
      await page.getByRole('option', { name: 'Custom (8)' }).click();
      await page.locator('input[name="name"]').fill('tour-pool');
      await page.locator('input[name="base_url"]').fill(emulator.baseUrl);
      await page.getByRole('combobox', { name: text('en', 'app.channel.key_mode') }).click();
      await page.getByRole('option', { name: text('en', 'app.channel.key_mode_random') }).click();
      // the key box becomes a text area taking one key per line
      const keyBox = page.locator('textarea[name="key"]');
      await keyBox.fill(KEYS.join('\n'));
      await page.getByText(text('en', 'app.channel.key_multi_help')).waitFor();
      const models = page.getByRole('combobox', { name: 'Models' });
      for (const model of MODELS) {
        await models.fill(model);
        await page.getByRole('option', { name: model, exact: true }).click();
      }
      await page.screenshot({ path: join(screenshotDir, 'tour-channel-create-light-en-1440.png'), fullPage: true });
      await page.getByRole('button', { name: /^save$/i }).click();
      await page.waitForURL(`${gateway.baseUrl}/channel`);
      const listed = page.getByRole('row').filter({ hasText: 'tour-pool' });
      await listed.getByText(text('en', 'app.channel.multi_key_badge')).waitFor();

      // one channel holding the three keys, not a channel per line
      const channels = (await api('GET', '/api/channel/?p=0')).data as Array<{
        id: number;
        name: string;
        multi_key?: boolean;
        key: string;
      }>;
      expect(channels).toHaveLength(1);
      expect(channels[0]).toMatchObject({ name: 'tour-pool', multi_key: true });
      channelId = channels[0].id;
      expect(await storedKeys()).toEqual(MASKED.map((masked) => `${masked} 1`));

      await page.goto(`${gateway.baseUrl}/channel/edit/${channelId}`);
      for (const masked of MASKED) await keyRow(masked).waitFor();
      // no key is ever on the page whole; keys are added in the key list alone, so the form has no key box
      const html = await page.content();
      for (const key of KEYS) expect(html).not.toContain(key);
      expect(await page.locator('textarea[name="key"]').count()).toBe(0);

      // a test of one key calls the upstream with that key alone
      await keyRow(MASKED[0]).getByRole('button', { name: 'Test' }).click();
      await page.getByText(new RegExp(`Key ${MASKED[0].replaceAll('*', '\\*')} tested successfully in \\d+\\.\\d\\d s`)).waitFor();
      expect(
        emulator.requests.filter((request) => request.path === '/v1/chat/completions').map((request) => request.headers.authorization),
      ).toEqual([`Bearer ${KEYS[0]}`]);

      await keyRow(MASKED[1]).getByRole('button', { name: 'Disable' }).click();
      await keyRow(MASKED[1]).getByRole('button', { name: 'Enable' }).waitFor();
      expect(await keyRow(MASKED[1]).getByText('Disabled').count()).toBe(1);

      await keyRow(MASKED[2]).getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText(`Delete key ${MASKED[2]}?`).waitFor();
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await keyRow(MASKED[2]).waitFor({ state: 'detached' });
      expect(await storedKeys()).toEqual([`${MASKED[0]} 1`, `${MASKED[1]} 2`]);

      // the disabled key is left out of relayed calls
      const before = emulator.requests.length;
      for (let call = 0; call < 4; call += 1) {
        const relayed = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${budgetKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'which key?' }] }),
        });
        expect(relayed.status).toBe(200);
      }
      expect(new Set(emulator.requests.slice(before).map((request) => request.headers.authorization))).toEqual(
        new Set([`Bearer ${KEYS[0]}`]),
      );
      expect(pageErrors).toEqual([]);
    });

    it('the multi-key channel edit page with its key list', async () => {
      const problems: string[] = [];
      for (const view of VIEWS) {
        await open(view, `/channel/edit/${channelId}`);
        await keyRow(MASKED[1]).getByText(text(view.lang, 'status.channel.disabled')).waitFor();
        await expect.poll(() => page.locator('input[name="name"]').inputValue()).toBe('tour-pool');
        await capture('channel-keys', view, problems);
      }
      expect(problems).toEqual([]);
    });

    it('the settings price table (Prices, prices and ratios)', async () => {
      const problems: string[] = [];
      for (const view of VIEWS) {
        await open(view, '/setting');
        await page.getByRole('tab', { name: text(view.lang, 'settings.prices.tab') }).click();
        const section = page.getByRole('region', { name: text(view.lang, 'settings.section.prices_ratio') });
        await section.getByRole('textbox', { name: text(view.lang, 'pricing.search') }).fill('gpt-4o');
        // every model, not only those the tour's channels serve
        await section.getByRole('switch', { name: text(view.lang, 'settings.prices.show_all') }).check();
        const table = section.getByRole('table', { name: text(view.lang, 'settings.prices.title') });
        await expect.poll(() => table.getByTestId('gpt-4o-input').textContent()).toBe('$2.50');
        // the section only: the whole tab is many screens long
        await capture('settings-prices', view, problems, section);
      }
      expect(problems).toEqual([]);
    });

    it("the users' Models and prices page", async () => {
      const problems: string[] = [];
      for (const view of VIEWS) {
        await open(view, '/pricing');
        // a table on a wide screen; on a phone, a block per model
        const wide = view.width > 600;
        const prices = page.getByRole(wide ? 'table' : 'list', { name: text(view.lang, 'pricing.title') });
        await prices.waitFor();
        await expect.poll(() => prices.getByRole(wide ? 'row' : 'listitem').count()).toBe(wide ? MODELS.length + 1 : MODELS.length);
        expect(await page.getByTestId('gpt-4o-input').textContent()).toBe('$2.50');
        await capture('pricing', view, problems);
      }
      expect(problems).toEqual([]);
    });

    /** Sends one message from the playground with the key named, and waits until the answer or the refusal is in. */
    const chat = async (view: View, keyName: string, message: string) => {
      await open(view, '/playground');
      const keyPicker = page.getByRole('combobox', { name: text(view.lang, 'playground.key') });
      await expect.poll(() => keyPicker.textContent()).toBe('tour-key');
      if (keyName !== 'tour-key') {
        await keyPicker.click();
        await page.getByRole('option', { name: keyName }).click();
        await expect.poll(() => keyPicker.textContent()).toBe(keyName);
      }
      await page.getByRole('combobox', { name: text(view.lang, 'playground.model') }).click();
      await page.getByRole('option', { name: 'gpt-4o-mini' }).click();
      await page.getByRole('textbox', { name: text(view.lang, 'playground.message') }).fill(message);
      await page.getByRole('button', { name: text(view.lang, 'playground.send') }).click();
    };

    it('the playground after a streamed answer', async () => {
      const problems: string[] = [];
      for (const view of VIEWS) {
        await chat(view, 'tour-key', view.lang === 'zh' ? '你好，请用五个词回答' : 'Hello, answer in five words');
        await page.getByRole('log').getByTestId('message-assistant').getByText('word0 word1 word2 word3 word4').waitFor();
        // Send is back once the stream has ended
        await page.getByRole('button', { name: text(view.lang, 'playground.send') }).waitFor();
        await capture('playground', view, problems);
      }
      expect(problems).toEqual([]);
    });

    it('a key over its daily budget: refused in the playground, its spend in red in the key list', async () => {
      // the budget is lowered to what the key has spent (the relayed calls of the first test): any further call would go over it
      let spent = 0;
      await expect
        .poll(
          async () => {
            spent = (await api('GET', `/api/token/${budgetTokenId}`)).data.budget_usage.spent as number;
            return spent;
          },
          { timeout: 30_000 },
        )
        .toBeGreaterThan(0);
      const lowered = await api('PUT', '/api/token/', { id: budgetTokenId, budget_quota: spent });
      expect(lowered.success, lowered.message).toBe(true);
      // the relay's cached view of the key is at most a second or two old
      await expect
        .poll(
          async () =>
            (
              await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
                method: 'POST',
                headers: { authorization: `Bearer ${budgetKey}`, 'content-type': 'application/json' },
                body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'over?' }] }),
              })
            ).status,
          { timeout: 30_000 },
        )
        .toBe(429);

      const problems: string[] = [];
      for (const view of VIEWS) {
        await chat(view, 'tiny-budget', view.lang === 'zh' ? '还有预算吗？' : 'Any budget left?');
        const refusal = page.getByRole('alert').filter({ hasText: 'budget resets at' });
        await refusal.waitFor();
        expect(await refusal.textContent()).toContain(text(view.lang, 'playground.errors.budget'));
        await capture('budget-refusal', view, problems);

        await open(view, '/token');
        const budget = page.getByTestId('budget').filter({ hasText: '/' });
        await budget.waitFor();
        const figure = await budget.textContent();
        expect(figure).toMatch(view.lang === 'zh' ? /\/ 每天/ : /a day$/);
        // spent up to the budget: the figure turns red (the theme's error colour)
        const [red, green, blue] = ((await budget.evaluate((element) => getComputedStyle(element).color)).match(/\d+/g) ?? []).map(Number);
        expect(red, `${red}, ${green}, ${blue}`).toBeGreaterThan(Math.max(green, blue) + 60);
        await capture('budget-list', view, problems);
      }
      expect(problems).toEqual([]);
      expect(pageErrors).toEqual([]);
    }, 360_000);
  },
);
