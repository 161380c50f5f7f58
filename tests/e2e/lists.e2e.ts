// The lists in real Chromium: at 1440 px the channel and log lists show every
// row action without a sideways scroll; at 390 px the channel list is cards;
// a sort by remaining quota is the server's (page 1's top is the global top);
// "test all" shows its progress to the end, with the failure of a channel
// pointed at a dead port; selected channels are disabled together.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { chromiumAvailable, screenshotDir, sidewaysOverflow, signedInPage } from './support/browser';
import { apiLogin, consoleApi, startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'lists-root-pass';
const CHANNELS = 12;
const TOKENS = 14;

describe.runIf(enabled)('lists: width, cards, server sorting, test all, bulk disable', () => {
  let emulator: OpenAIEmulator;
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cookie: string;
  const channelIds: number[] = [];

  const api = consoleApi(
    () => gateway.baseUrl,
    () => cookie,
  );

  /** No element of the page is wider than its box: nothing needs a sideways scroll. */
  const overflow = () => sidewaysOverflow(page);

  /** Every row action button lies inside the viewport. */
  const actionsInView = (selector: string) =>
    page.evaluate((query) => {
      const width = window.innerWidth;
      const buttons = Array.from(document.querySelectorAll(query));
      return { count: buttons.length, outside: buttons.filter((button) => button.getBoundingClientRect().right > width).length };
    }, selector);

  beforeAll(async () => {
    emulator = await startOpenAIEmulator();
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    for (let index = 0; index < CHANNELS; index += 1) {
      // the newest channel points at a port nobody listens on: its test fails at once
      const dead = index === CHANNELS - 1;
      const created = await api('POST', '/api/channel/', {
        name: dead ? 'dead-port' : `emulator-${String(index).padStart(2, '0')}`,
        type: 8,
        key: 'sk-good',
        base_url: dead ? 'http://127.0.0.1:9' : emulator.baseUrl,
        models: 'gpt-3.5-turbo',
        group: index % 3 === 0 ? 'default,vip' : 'default',
        // below the others, so the one relayed request below is never routed to the dead port
        ...(dead ? { priority: -1 } : {}),
      });
      channelIds.push(created.data.ids[0]);
    }
    // tokens whose quotas do not follow their ids: the largest is the oldest, on page 2 by default
    let key = '';
    for (let index = 0; index < TOKENS; index += 1) {
      const created = await api('POST', '/api/token/', {
        name: `token-${String(index).padStart(2, '0')}`,
        remain_quota: index === 0 ? 9_000_000 : 1000 + index * 10,
        unlimited_quota: false,
      });
      if (index === TOKENS - 1) key = created.data.key;
    }
    // one relayed request, so the log list has a row with a channel, a token and a user
    const relayed = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    expect(relayed.status).toBe(200);
    ({ browser, context, page } = await signedInPage(gateway.baseUrl, 'root', ROOT_PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await emulator?.close();
  });

  it('at 1440 px the channel list shows every row action without a sideways scroll', async () => {
    await page.goto(`${gateway.baseUrl}/channel`);
    await page.getByRole('row', { name: /dead-port/ }).waitFor();
    const rows = await page.locator('tbody tr').count();
    expect(rows).toBe(10);
    const inView = await actionsInView('tbody [data-testid^="row-action-"]');
    // test, enable/disable, edit and "more" on every row
    expect(inView).toEqual({ count: rows * 4, outside: 0 });
    expect(await overflow()).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'lists-channels-1440.png'), fullPage: true });
  });

  it('at 1440 px the log list shows its row links without a sideways scroll', async () => {
    await page.goto(`${gateway.baseUrl}/log`);
    const row = page.getByRole('row', { name: /gpt-3\.5-turbo/ }).first();
    await row.waitFor();
    // the channel (by name, or by id on a gateway that sends no names), the token and the user are links
    await expect.poll(() => row.getByRole('link', { name: /^(#\d+|emulator-\d+)$/ }).count()).toBe(1);
    expect(await row.getByRole('link', { name: 'root' }).getAttribute('href')).toMatch(/^\/user\/edit\/\d+$/);
    await row.getByRole('button', { name: `token-${String(TOKENS - 1).padStart(2, '0')}` }).waitFor();
    const links = await actionsInView('tbody a, tbody button');
    expect(links.count).toBeGreaterThanOrEqual(3);
    expect(links.outside).toBe(0);
    expect(await overflow()).toEqual([]);
    // the token link filters the list, and says so with a chip
    await row.getByRole('button', { name: `token-${String(TOKENS - 1).padStart(2, '0')}` }).click();
    await page
      .getByTestId('active-filters')
      .getByText(`Token: token-${String(TOKENS - 1).padStart(2, '0')}`)
      .waitFor();
    await page.screenshot({ path: join(screenshotDir, 'lists-logs-1440.png'), fullPage: true });
  });

  it('sorting by remaining quota is done by the server: page 1 starts with the largest of all', async () => {
    await page.goto(`${gateway.baseUrl}/token`);
    await page.getByRole('row', { name: /token-13/ }).waitFor();
    // by default (newest first) the largest quota is on page 2
    expect(await page.getByRole('row', { name: /token-00/ }).count()).toBe(0);
    // react-admin names the header's sort button "Sort by remaining quota ascending|descending"
    const sortLabel = page.getByRole('button', { name: /^sort by remaining quota/i });
    const sortedBy = (order: string) =>
      page.waitForRequest(
        (request) => request.url().includes('/api/token/?') && request.url().includes(`sort=remain_quota&order=${order}`),
      );
    // the first click sorts ascending, the second descending: each a request to the server
    const ascending = sortedBy('asc');
    await sortLabel.click();
    await ascending;
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toContain('token-01');
    const descending = sortedBy('desc');
    await sortLabel.click();
    await descending;
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toContain('token-00');
    expect(page.url()).toContain('sort=remain_quota');
  });

  it('at 390 px the channel list is cards, each with its actions', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      locale: 'en-US',
      storageState: await context.storageState(),
    });
    const small = await phone.newPage();
    await small.goto(`${gateway.baseUrl}/channel`);
    await small.getByTestId('list-card').first().waitFor();
    expect(await small.getByTestId('list-card').count()).toBe(10);
    expect(await small.locator('table').count()).toBe(0);
    const card = small.getByTestId('list-card').first();
    for (const name of ['Test', 'Disable', 'Edit', 'More actions']) expect(await card.getByRole('button', { name }).count()).toBe(1);
    const wide = await small.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
    expect(wide).toBe(false);
    await small.screenshot({ path: join(screenshotDir, 'lists-channels-390.png'), fullPage: true });
    await phone.close();
  });

  it("test all shows its progress to the end, and the dead port's failure", async () => {
    await page.goto(`${gateway.baseUrl}/channel`);
    await page.getByRole('row', { name: /dead-port/ }).waitFor();
    const button = page.getByRole('button', { name: 'Test all enabled' });
    // every text the progress region shows, from its first frame
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { jobTexts: string[] }).jobTexts = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="channel-job"]')?.textContent;
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await button.click();
    await page.getByTestId('channel-job').waitFor();
    await page.getByText(`Test finished: ${CHANNELS} of ${CHANNELS} channels tested, 1 failed`).waitFor({ timeout: 60_000 });
    const texts = await page.evaluate(() => (window as unknown as { jobTexts: string[] }).jobTexts);
    expect(texts[0]).toBe(`Testing channels: 0 of ${CHANNELS}`);
    expect(await button.isEnabled()).toBe(true);
    await page.getByRole('button', { name: /Failures \(1\)/ }).click();
    const failures = page.getByTestId('job-failures');
    await failures.getByText(/dead-port/).waitFor();
    expect(await failures.textContent()).toContain('could not reach upstream');
    await page.screenshot({ path: join(screenshotDir, 'lists-test-all.png') });
    await page.getByRole('button', { name: 'Close' }).click();
    // the list was refreshed: the dead port's row says it failed, and why
    const badge = page.getByRole('row', { name: /dead-port/ }).getByTestId('response-time');
    await expect.poll(() => badge.textContent()).toBe('Failed');
    expect(await badge.getAttribute('aria-label')).toContain('could not reach upstream');
    const alive = page.getByRole('row', { name: /emulator-10/ }).getByTestId('response-time');
    expect(await alive.textContent()).toMatch(/^\d+\.\d\d s$/);
  });

  it('disables the selected channels together', async () => {
    await page.goto(`${gateway.baseUrl}/channel`);
    for (const name of ['emulator-10', 'emulator-09'])
      await page
        .getByRole('row', { name: new RegExp(name) })
        .getByRole('checkbox')
        .check();
    await page.screenshot({ path: join(screenshotDir, 'lists-bulk-selected.png') });
    await page.locator('[data-test="bulk-actions-toolbar"]').getByRole('button', { name: 'Disable', exact: true }).click();
    await expect
      .poll(async () => {
        const rows = (await api('GET', '/api/channel/?status=2')).data as Array<{ name: string }>;
        return rows.map((row) => row.name).sort();
      })
      .toEqual(['emulator-09', 'emulator-10']);
    await expect
      .poll(() =>
        page
          .getByRole('row', { name: /emulator-10/ })
          .getByText('Disabled')
          .count(),
      )
      .toBe(1);
  });
});
