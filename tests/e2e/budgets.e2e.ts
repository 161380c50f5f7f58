// Budgets that reset, in real Chromium against the built console: a key with a
// daily budget is used through the relay, the key list at 1440 px shows what
// it spent today against its budget without a sideways scroll, the request
// that would go over is refused with when the budget resets, and the token
// form shows the budget with the spend of this period.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { chromiumAvailable, screenshotDir, sidewaysOverflow, signedInPage } from './support/browser';
import { apiLogin, consoleApi, setOptions, startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'budgets-root-pass';

describe.runIf(enabled)('budgets: a key with a daily budget in the list, the refusal and the form', () => {
  let emulator: OpenAIEmulator;
  let gateway: RunningGateway;
  let browser: Browser;
  let page: Page;
  let cookie: string;
  let tokenId = 0;
  let key = '';

  const api = consoleApi(
    () => gateway.baseUrl,
    () => cookie,
  );
  const relay = () =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-3.5-turbo', max_tokens: 5, messages: [{ role: 'user', content: 'hello there' }] }),
    });

  beforeAll(async () => {
    emulator = await startOpenAIEmulator();
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    await setOptions(gateway.baseUrl, cookie, { TimeZone: 'Asia/Shanghai', DisplayInCurrencyEnabled: 'false' });
    const channel = await api('POST', '/api/channel/', {
      name: 'emulator',
      type: 8,
      key: 'sk-good',
      base_url: emulator.baseUrl,
      models: 'gpt-3.5-turbo',
      group: 'default',
    });
    expect(channel.success, channel.message).toBe(true);
    const created = await api('POST', '/api/token/', {
      name: 'budgeted',
      remain_quota: 5_000_000,
      budget_period: 'day',
      budget_quota: 100_000,
    });
    expect(created.success, created.message).toBe(true);
    tokenId = created.data.id;
    key = `sk-${created.data.key}`;
    ({ browser, page } = await signedInPage(gateway.baseUrl, 'root', ROOT_PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await emulator?.close();
  });

  it('answers within the budget, then refuses the request over it with when the budget resets', async () => {
    expect((await relay()).status).toBe(200);
    // the spend is written with the charge, after the answer
    let spent = 0;
    for (let tries = 0; tries < 50 && spent === 0; tries += 1) {
      const read = await api('GET', `/api/token/${tokenId}`);
      spent = read.data.budget_usage.spent;
      if (spent === 0) await new Promise((wake) => setTimeout(wake, 100));
    }
    expect(spent).toBeGreaterThan(0);
    // the budget is lowered to what was spent: the next request would go over it
    const lowered = await api('PUT', '/api/token/', { id: tokenId, budget_quota: spent });
    expect(lowered.success, lowered.message).toBe(true);
    let refused = await relay();
    // the relay's cached view of the key is at most a second or two old
    for (let tries = 0; refused.status === 200 && tries < 40; tries += 1) {
      await new Promise((wake) => setTimeout(wake, 100));
      refused = await relay();
    }
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('budget_exceeded');
    expect(body.error.message).toMatch(/the budget resets at \d{4}-\d\d-\d\dT16:00:00\.000Z \(\d{4}-\d\d-\d\d 00:00 \(Asia\/Shanghai\)\)/);
  });

  it('at 1440 px the key list shows the spend against the budget without a sideways scroll, and the form shows the budget', async () => {
    const read = await api('GET', `/api/token/${tokenId}`);
    const { spent } = read.data.budget_usage as { spent: number };
    await page.goto(`${gateway.baseUrl}/token`);
    const row = page.getByRole('row', { name: /budgeted/ });
    await row.waitFor();
    expect(await row.getByTestId('budget').textContent()).toBe(`${spent} / ${read.data.budget_quota} a day`);
    expect(await page.getByRole('columnheader', { name: 'Spent this period / budget' }).count()).toBe(1);
    expect(await sidewaysOverflow(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'budgets-token-list-1440.png'), fullPage: true });

    await page.goto(`${gateway.baseUrl}/token/edit/${tokenId}`);
    await page.getByTestId('budget-spent').waitFor();
    expect(await page.getByTestId('budget-spent').textContent()).toContain(`Spent this period: ${spent}`);
    expect(await page.getByRole('spinbutton', { name: /Budget per period/ }).inputValue()).toBe(String(read.data.budget_quota));
    await page.screenshot({ path: join(screenshotDir, 'budgets-token-form.png'), fullPage: true });
  });
});
