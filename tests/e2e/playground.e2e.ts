// The playground in Chromium against the real gateway and the OpenAI
// emulator: root picks their key and a model, sets a system prompt and max
// tokens, and chats once; the answer streams in from /v1/chat/completions.
// The call is a real relayed request: its log row shows the key's name, the
// model and the quota charged, the same quota the key lost. Screenshots at
// 1440 px and 390 px (test-results/screenshots/playground-<width>.png), with
// no sideways scrolling and no accessibility violation.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCount } from '../../src/quota';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, setOptions, startGateway, type RunningGateway } from './support/gateway';

const ROOT_PASSWORD = 'e2e-playground-root-pass';
const KEY_QUOTA = 5_000_000;

describe.runIf(chromiumAvailable())('playground: a chat through the real relay, billed and logged', () => {
  let emulator: OpenAIEmulator;
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cookie: string;
  const pageErrors: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', cookie },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as { success: boolean; message: string; data: any };
  };

  beforeAll(async () => {
    emulator = await startOpenAIEmulator({ record: true });
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    // raw quota in the log, so the row can be held to the figure the key lost
    await setOptions(gateway.baseUrl, cookie, { DisplayInCurrencyEnabled: 'false' });
    const channel = await api('POST', '/api/channel/', {
      name: 'emulator',
      type: 8,
      key: 'sk-good',
      base_url: emulator.baseUrl,
      models: 'gpt-4o-mini,gpt-4o',
      group: 'default',
    });
    expect(channel.success, channel.message).toBe(true);
    const token = await api('POST', '/api/token/', { name: 'playground-key', remain_quota: KEY_QUOTA });
    expect(token.success, token.message).toBe(true);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await emulator?.close();
  });

  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  it('chats once, streamed, and the log shows the row with the quota the key was charged', async () => {
    await page
      .getByRole('menuitem', { name: 'Playground' })
      .or(page.getByRole('link', { name: 'Playground' }))
      .first()
      .click();
    await page.waitForURL(`${gateway.baseUrl}/playground`);
    await expect.poll(() => page.getByRole('combobox', { name: 'Key' }).textContent()).toBe('playground-key');
    await expect.poll(() => page.getByRole('combobox', { name: 'Model' }).textContent()).not.toBe('');
    await page.getByRole('combobox', { name: 'Model' }).click();
    await page.getByRole('option', { name: 'gpt-4o-mini' }).click();
    await page.getByRole('textbox', { name: 'System prompt' }).fill('Answer in five words.');
    await page.getByRole('textbox', { name: 'Max tokens' }).fill('50');
    await page.getByRole('textbox', { name: 'Message' }).fill('Hello from the playground');
    await page.getByRole('button', { name: 'Send' }).click();

    const answer = page.getByRole('log').getByTestId('message-assistant');
    await answer.getByText('word0 word1 word2 word3 word4').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    // the relay got what the page set, with the key as the bearer
    const sent = emulator.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-good');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Answer in five words.' },
        { role: 'user', content: 'Hello from the playground' },
      ],
    });

    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'playground-1440.png'), fullPage: true });

    // the row is written a moment after the answer
    let row: { quota: number; token_name: string; model_name: string } | undefined;
    await expect
      .poll(
        async () => {
          row = ((await api('GET', '/api/log/')).data as Array<typeof row & { type: number }>).find(
            (log) => log?.type === 2 && log.model_name === 'gpt-4o-mini',
          );
          return row?.token_name;
        },
        { timeout: 30_000 },
      )
      .toBe('playground-key');
    expect(row!.quota).toBeGreaterThan(0);
    const tokens = (await api('GET', '/api/token/')).data as Array<{ name: string; remain_quota: number; used_quota: number }>;
    const charged = tokens.find((token) => token.name === 'playground-key')!;
    expect(charged.used_quota).toBe(row!.quota);
    expect(charged.remain_quota).toBe(KEY_QUOTA - row!.quota);

    await page.goto(`${gateway.baseUrl}/log`);
    const logRow = page.getByRole('row', { name: /gpt-4o-mini/ }).first();
    await logRow.waitFor();
    await logRow.getByRole('button', { name: 'playground-key' }).waitFor();
    expect(await logRow.textContent()).toContain(formatCount(row!.quota));
    expect(pageErrors).toEqual([]);
  });

  it('fits a phone: the settings above the conversation, no sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${gateway.baseUrl}/playground`);
    await expect.poll(() => page.getByRole('combobox', { name: 'Key' }).textContent()).toBe('playground-key');
    await page.getByRole('textbox', { name: 'Message' }).fill('And on a phone?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('log').getByText('word0 word1 word2 word3 word4').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshotDir, 'playground-390.png'), fullPage: true });
  });
});
