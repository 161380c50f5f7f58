// In real Chromium: the channel edit form's red Delete reads at AA contrast
// on its toolbar in both themes, the form's headings skip no level (axe), and
// a wrong password marks the login form's fields rather than only a toast.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, startGateway, type RunningGateway } from './support/gateway';
import { axeScan } from './support/axe';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'channel-form-root-pass';

/** WCAG's contrast ratio of two CSS rgb()/rgba() colours (an opaque background). */
function contrast(foreground: string, background: string): number {
  const channels = (colour: string) => (colour.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
  const luminance = (colour: string) => {
    const [red, green, blue] = channels(colour).map((value) => {
      const unit = value / 255;
      return unit <= 0.03928 ? unit / 12.92 : ((unit + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue;
  };
  const [lighter, darker] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
  return (lighter + 0.05) / (darker + 0.05);
}

describe.runIf(enabled)('channel form and login form in Chromium', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let channelId = 0;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    browser = await launchBrowser();
    const cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    const response = await fetch(`${gateway.baseUrl}/api/channel/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ name: 'contrast-check', type: 1, key: 'sk-contrast', models: 'gpt-4', group: 'default' }),
    });
    const created = (await response.json()) as { data: { ids: number[] } };
    channelId = created.data.ids[0];
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  async function openEdit(scheme: 'light' | 'dark'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, locale: 'en-US', colorScheme: scheme });
    const page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
    await page.goto(`${gateway.baseUrl}/channel/edit/${channelId}`);
    await page.locator('input[name="name"]').waitFor();
    return page;
  }

  for (const scheme of ['light', 'dark'] as const) {
    it(`draws Delete at AA on the form toolbar, and skips no heading level (${scheme})`, async () => {
      const page = await openEdit(scheme);
      const remove = page.getByRole('button', { name: /^delete$/i });
      await remove.waitFor();
      const colours = await remove.evaluate((button) => {
        let surface: Element | null = button;
        let background = 'rgba(0, 0, 0, 0)';
        while (surface && /rgba\(\d+, \d+, \d+, 0\)|transparent/.test(background)) {
          background = getComputedStyle(surface).backgroundColor;
          surface = surface.parentElement;
        }
        return { text: getComputedStyle(button).color, background };
      });
      expect(contrast(colours.text, colours.background), `${colours.text} on ${colours.background}`).toBeGreaterThanOrEqual(4.5);
      const { violations } = await axeScan(page).withRules(['color-contrast', 'heading-order']).analyze();
      expect(violations.flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`))).toEqual([]);
      await page.screenshot({ path: join(screenshotDir, `channel-edit-${scheme}.png`), fullPage: true });
      await page.context().close();
    });
  }

  it('marks the username and password fields when the password is wrong', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${gateway.baseUrl}/login`);
    await page.locator('input[name="username"]').fill('root');
    await page.locator('input[name="password"]').fill('not-the-password');
    await page.getByRole('button', { name: /^log in$/i }).click();
    await expect.poll(() => page.locator('input[name="password"]').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('input[name="username"]').getAttribute('aria-invalid')).toBe('true');
    await page.getByText('username or password is wrong').waitFor();
    await page.screenshot({ path: join(screenshotDir, 'login-wrong-password.png') });
    await context.close();
  });
});
