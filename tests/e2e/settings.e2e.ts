// The settings end-to-end path: root changes one option of each settings section
// in the real console, and each change shows its effect in another browser —
// registration closes, the chat link joins the menu, the system name and logo
// change in the header, the footer HTML appears, the notice shows once, the
// ratio JSON is checked and a GroupRatio change prices the next relayed
// request, the update check reads a (fake) release server and
// says so clearly when it is down — and admin content cannot run script.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';

const enabled = chromiumAvailable();
const RATIOS = 'Prices and ratios';
const ROOT_PASSWORD = 'settings-root-pass';
const XSS_HOME = `# Welcome to Acme\n\n<img src=x onerror="window.__xss='home';alert('home')">\n\n[free credits](javascript:window.__xss='home-link';alert('home-link'))`;
const XSS_ABOUT = `# About Acme\n\n<img src=x onerror="window.__xss='about'">\n\n<a href="javascript:window.__xss='about-link'">our story</a>`;
const FOOTER = `<span id="acme-footer">Acme <b>Corp</b> footer</span><img src=x onerror="window.__xss='footer'">`;

/** A stand-in for the outside world: the release API, a logo and a chat app. */
async function startFakeWorld() {
  let releaseServerUp = true;
  const server: Server = createServer((request, response) => {
    if (request.url === '/releases/latest') {
      if (!releaseServerUp) return request.socket.destroy();
      response.setHeader('content-type', 'application/json');
      return response.end(
        JSON.stringify({
          tag_name: 'v0.9.0',
          name: 'v0.9.0',
          body: '## Highlights\n\n- Settings that apply on every node\n\n<img src=x onerror="window.__xss=\'release\'">',
          html_url: 'https://github.com/songquanpeng/one-api/releases/tag/v0.9.0',
          published_at: '2024-03-04T05:06:07Z',
        }),
      );
    }
    if (request.url === '/acme-logo.svg') {
      response.setHeader('content-type', 'image/svg+xml');
      return response.end(
        '<svg xmlns="http://www.w3.org/2000/svg" width="30" height="30"><rect width="30" height="30" fill="#e11d48"/></svg>',
      );
    }
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>Acme chat</title><h1>Acme chat app</h1>');
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    setReleaseServerUp: (up: boolean) => (releaseServerUp = up),
    close: () => new Promise((closed) => server.close(closed)),
  };
}

describe.runIf(enabled)('settings: every section takes effect', () => {
  let gateway: RunningGateway;
  let world: Awaited<ReturnType<typeof startFakeWorld>>;
  let emulator: OpenAIEmulator;
  let browser: Browser;
  let adminContext: BrowserContext;
  let visitorContext: BrowserContext;
  let admin: Page;
  let visitor: Page;
  const visitorDialogs: string[] = [];

  const openTab = async (name: 'Operation' | 'Prices' | 'System' | 'Other') => {
    if (!admin.url().endsWith('/setting')) await admin.goto(`${gateway.baseUrl}/setting`);
    await admin.getByRole('tab', { name }).click();
  };
  const section = (name: string) => admin.getByRole('region', { name });
  /** The ratio tables as JSON fold under "Advanced", below the price table. */
  const openAdvanced = async () => {
    const summary = section(RATIOS).getByRole('button', { name: 'Advanced: the ratio tables as JSON' });
    if ((await summary.getAttribute('aria-expanded')) !== 'true') await summary.click();
  };
  const saveSection = async (name: string) => {
    await section(name).getByRole('button', { name: 'Save' }).click();
    await admin.getByText('settings saved').last().waitFor();
  };

  beforeAll(async () => {
    world = await startFakeWorld();
    emulator = await startOpenAIEmulator();
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD, RELEASE_CHECK_URL: `${world.base}/releases/latest` });
    browser = await launchBrowser();
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    visitorContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    admin = await adminContext.newPage();
    visitor = await visitorContext.newPage();
    visitor.on('dialog', (dialog) => {
      visitorDialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signInThroughConsole(admin, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await world?.close();
    await emulator?.close();
  });

  it('operation, general: the chat link joins the menu and /chat frames it', async () => {
    await openTab('Operation');
    await section('General').locator('input[name="ChatLink"]').fill(`${world.base}/chat-app`);
    await saveSection('General');
    await admin
      .getByRole('navigation')
      .first()
      .getByRole('link', { name: /^chat$/i })
      .click();
    await admin.waitForURL(`${gateway.baseUrl}/chat`);
    await admin.frameLocator('iframe').getByRole('heading', { name: 'Acme chat app' }).waitFor();
  });

  it("prices, ratio: invalid JSON is refused with the spec's message; a valid table changes the groups", async () => {
    await openTab('Prices');
    await openAdvanced();
    const groupRatio = section(RATIOS).locator('textarea[name="GroupRatio"]');
    await groupRatio.fill('{"default": 1,');
    await section(RATIOS).getByRole('button', { name: 'Save' }).click();
    await admin.getByText('group ratio is not a valid JSON string').waitFor();
    expect(await admin.evaluate(async () => (await (await fetch('/api/group/')).json()).data)).toEqual(['default', 'svip', 'vip']);
    await groupRatio.fill('{"default": 1, "vip": 1, "svip": 1, "acme": 2}');
    await saveSection(RATIOS);
    expect(await admin.evaluate(async () => (await (await fetch('/api/group/')).json()).data)).toEqual(['acme', 'default', 'svip', 'vip']);
    await admin.screenshot({ path: join(screenshotDir, 'settings-operation.png'), fullPage: true });
  });

  // the console API as the signed-in admin, and a relayed request's bill read back from the consume log
  const api = (method: string, url: string, body?: unknown) =>
    admin.evaluate(
      async ([method, url, body]) =>
        (
          await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
        ).json(),
      [method, url, body] as const,
    );
  let tokenKey = '';
  const consumeRows = async () => (await api('GET', '/api/log/?p=0&type=2&token_name=ratio-check')).data as Array<{ quota: number }>;
  const relayAndReadBill = async () => {
    const seen = (await consumeRows()).length;
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer sk-${tokenKey}` },
      body: JSON.stringify({ model: 'gpt-4', messages: [{ role: 'user', content: 'price this please' }] }),
    });
    expect(response.status).toBe(200);
    // consume logs are written in batches; wait for this request's row (newest first)
    for (let waited = 0; waited < 5000; waited += 50) {
      const rows = await consumeRows();
      if (rows.length > seen) return rows[0].quota;
      await new Promise((wake) => setTimeout(wake, 50));
    }
    throw new Error('the consume log did not appear');
  };

  it('operation, ratio: a GroupRatio saved in the form prices the next relayed request', async () => {
    // a channel on the emulator and a token, made through the console API as the signed-in admin
    expect(
      (
        await api('POST', '/api/channel/', {
          name: 'emulator',
          type: 8,
          key: 'sk-good',
          base_url: emulator.baseUrl,
          models: 'gpt-4',
          group: 'default',
        })
      ).success,
    ).toBe(true);
    tokenKey = (await api('POST', '/api/token/', { name: 'ratio-check', remain_quota: 1_000_000, expired_time: -1 })).data.key;
    const before = await relayAndReadBill();
    // gpt-4 at ratio 15 with 3 prompt and 5 completion tokens (completion ratio 2): (3 + 10) x 15
    expect(before).toBe(195);
    await openTab('Prices');
    await openAdvanced();
    await section(RATIOS).locator('textarea[name="GroupRatio"]').fill('{"default": 3, "vip": 1, "svip": 1, "acme": 2}');
    await saveSection(RATIOS);
    expect(await relayAndReadBill()).toBe(3 * before);
    await section(RATIOS).locator('textarea[name="GroupRatio"]').fill('{"default": 1, "vip": 1, "svip": 1, "acme": 2}');
    await saveSection(RATIOS);
  });

  it("prices: a row's price typed in dollars bills the next relayed request, and its reset brings the catalog's back", async () => {
    // the table reads which models the channels serve when it opens: the page again, now that a channel serves gpt-4
    await admin.goto(`${gateway.baseUrl}/setting`);
    await openTab('Prices');
    const table = admin.getByRole('table', { name: 'Model prices' });
    await section(RATIOS).getByRole('textbox', { name: 'Search models' }).fill('gpt-4');
    const row = table.getByTestId('price-row-gpt-4');
    // the catalog's gpt-4: $30 in, $60 out
    await expect.poll(() => row.getByTestId('gpt-4-input').textContent()).toBe('$30.00');
    expect(await row.getByText('Catalog').count()).toBe(1);
    const before = await relayAndReadBill();
    await row.getByRole('button', { name: 'Edit the prices of gpt-4' }).click();
    await row.getByRole('spinbutton', { name: 'Input price of gpt-4', exact: true }).fill('60');
    await row.getByRole('spinbutton', { name: 'Output price of gpt-4', exact: true }).fill('120');
    await admin.screenshot({ path: join(screenshotDir, 'settings-prices-editing.png'), fullPage: true });
    await row.getByRole('button', { name: 'Save' }).click();
    await admin.getByText('settings saved').last().waitFor();
    await expect.poll(() => row.getByTestId('gpt-4-input').textContent()).toBe('$60.00');
    expect(await row.getByText('Override').count()).toBe(1);
    // $60 in = ratio 30, output still twice the input
    expect(await relayAndReadBill()).toBe(2 * before);
    const stored = (await api('GET', '/api/option/')).data as Array<{ key: string; value: string }>;
    expect(JSON.parse(stored.find((option) => option.key === 'ModelRatio')!.value)['gpt-4']).toBe(30);
    await admin.screenshot({ path: join(screenshotDir, 'settings-prices.png'), fullPage: true });

    await row.getByRole('button', { name: 'Reset gpt-4 to the catalog price' }).click();
    await expect.poll(() => row.getByTestId('gpt-4-input').textContent()).toBe('$30.00');
    expect(await relayAndReadBill()).toBe(before);
  });

  it('system, sign-in: closing registration refuses a new account', async () => {
    await openTab('System');
    const toggle = admin.getByRole('switch', { name: 'Allow new registrations' });
    await toggle.click();
    await admin.getByText('settings saved').last().waitFor();
    expect(await toggle.isChecked()).toBe(false);

    await visitor.goto(`${gateway.baseUrl}/register`);
    await visitor.getByText('New registrations are closed on this server.').waitFor();
    await visitor.locator('input[name="username"]').fill('newcomer');
    await visitor.locator('input[name="password"]').fill('newcomer-pass');
    await visitor.locator('input[name="password2"]').fill('newcomer-pass');
    await visitor.getByRole('button', { name: /^register$/i }).click();
    await visitor.getByText('registration is closed').waitFor();
    expect(visitor.url()).toContain('/register');
  });

  it('system, sign-in: password login asks first, and the server keeps the last way in', async () => {
    const toggle = admin.getByRole('switch', { name: 'Allow sign-in with password' });
    await toggle.click();
    const dialog = admin.getByRole('dialog');
    await dialog.getByText('Turn off password login?').waitFor();
    await dialog.getByRole('button', { name: 'Turn off' }).click();
    await admin.getByText(/password login is the last way the super admin can sign in/).waitFor();
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await admin.screenshot({ path: join(screenshotDir, 'settings-system.png'), fullPage: true });
  });

  it('other, branding: the system name, logo and footer HTML change for every visitor', async () => {
    await openTab('Other');
    await section('Name, logo and footer').locator('input[name="SystemName"]').fill('Acme AI');
    await section('Name, logo and footer').locator('input[name="Logo"]').fill(`${world.base}/acme-logo.svg`);
    await section('Name, logo and footer').locator('textarea[name="Footer"]').fill(FOOTER);
    await saveSection('Name, logo and footer');
    // the admin's own header follows at once
    await admin.getByRole('banner').getByText('Acme AI').waitFor();

    await visitor.goto(`${gateway.baseUrl}/about`);
    await visitor.getByRole('banner').getByText('Acme AI').waitFor();
    expect(await visitor.getByRole('banner').locator('img').first().getAttribute('src')).toBe(`${world.base}/acme-logo.svg`);
    await visitor.locator('footer #acme-footer').filter({ hasText: 'Acme Corp footer' }).waitFor();
    expect(await visitor.locator('footer b').textContent()).toBe('Corp');
  });

  it('other, notice and content: the notice shows once; the XSS attempts run nothing', async () => {
    await openTab('Other');
    await section('Notice').locator('textarea[name="Notice"]').fill('**Maintenance** on Sunday');
    await saveSection('Notice');
    await section('Home and about pages').locator('textarea[name="HomePageContent"]').fill(XSS_HOME);
    await section('Home and about pages').locator('textarea[name="About"]').fill(XSS_ABOUT);
    await saveSection('Home and about pages');

    await visitor.goto(`${gateway.baseUrl}/`);
    const notice = visitor.getByRole('dialog', { name: 'Notice' });
    await notice.getByText('Maintenance').waitFor();
    await visitor.waitForTimeout(400); // let the dialog finish fading in
    await visitor.screenshot({ path: join(screenshotDir, 'settings-notice.png') });
    await notice.getByRole('button', { name: 'Close' }).click();
    await notice.waitFor({ state: 'hidden' });
    await visitor.getByRole('heading', { name: 'Welcome to Acme' }).waitFor();
    await visitor.getByText('free credits').click();
    await visitor.reload();
    await visitor.getByRole('heading', { name: 'Welcome to Acme' }).waitFor();
    await visitor.waitForTimeout(800);
    expect(await visitor.getByRole('dialog', { name: 'Notice' }).count()).toBe(0);

    await visitor.goto(`${gateway.baseUrl}/about`);
    await visitor.getByRole('heading', { name: 'About Acme' }).waitFor();
    await visitor.getByText('our story').click();
    await visitor.waitForTimeout(500);
    expect(await visitor.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
    expect(await visitor.evaluate(() => document.body.innerHTML)).not.toMatch(/onerror|javascript:/);
    expect(visitorDialogs).toEqual([]);
    expect(visitor.url()).toBe(`${gateway.baseUrl}/about`);
  });

  it('other, update: the release notes show in a modal; a dead release server is reported at once', async () => {
    await openTab('Other');
    await admin.getByRole('button', { name: 'Check for updates' }).click();
    const modal = admin.getByRole('dialog');
    await modal.getByText('New version available: v0.9.0').waitFor();
    await modal.getByRole('heading', { name: 'Highlights' }).waitFor();
    expect(await admin.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
    await admin.waitForTimeout(400); // let the dialog finish fading in
    await admin.screenshot({ path: join(screenshotDir, 'settings-update.png') });
    await modal.getByRole('button', { name: 'Close' }).click();
    await modal.waitFor({ state: 'hidden' });

    // a refused connection is said as unreachable at once: the words differ from the ones said after the check's 5 s
    // wait ("did not answer within"), so they show it did not wait, without a time bound a loaded machine can pass
    world.setReleaseServerUp(false);
    await admin.getByRole('button', { name: 'Check for updates' }).click();
    await admin.getByText(/cannot check for updates: the release server is unreachable/).waitFor();
  });
});
