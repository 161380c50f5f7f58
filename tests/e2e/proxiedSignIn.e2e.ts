// Sign-in behind a plain-http reverse proxy that rewrites Host, on a name
// that is not localhost (so Chromium sends no Sec-Fetch-Site, and the CSRF
// check has only Origin to go by). With TRUSTED_PROXY the gateway believes
// the proxy's X-Forwarded-Host: the browser signs in and saves a form. Without
// it, the same browser's writes look cross-site (Origin gw.test, Host the
// gateway's own address) and are refused with a message, not silently.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, CHROMIUM_PATH, screenshotDir } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'e2e-proxy-root-pass';
const NAME = 'gw.test';

/** A plain-http proxy to `target` that rewrites Host to the target's address and says the original in X-Forwarded-Host. */
function startProxy(target: URL): Promise<Server> {
  const server = createServer((incoming, outgoing) => {
    const headers = {
      ...incoming.headers,
      host: target.host,
      'x-forwarded-host': incoming.headers.host ?? '',
      'x-forwarded-proto': 'http',
      'x-forwarded-for': '203.0.113.9',
    };
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe.runIf(enabled)('sign-in behind a plain-http proxy that rewrites Host', () => {
  const gateways: RunningGateway[] = [];
  const proxies: Server[] = [];
  let browser: Browser;

  /** A gateway (with `env`) behind its own proxy; the browser's address for it on the name gw.test. */
  const behindProxy = async (env: Record<string, string>) => {
    const gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD, ...env });
    gateways.push(gateway);
    const proxy = await startProxy(new URL(gateway.baseUrl));
    proxies.push(proxy);
    return `http://${NAME}:${(proxy.address() as AddressInfo).port}`;
  };

  const signIn = async (page: Page, address: string) => {
    await page.goto(`${address}/login`);
    await page.locator('input[name="username"]').fill('root');
    await page.locator('input[name="password"]').fill(ROOT_PASSWORD);
    await page.getByRole('button', { name: /^log in$/i }).click();
  };

  beforeAll(async () => {
    // gw.test resolves to the loopback proxy: a name Chromium does not treat as a secure context
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        `--host-resolver-rules=MAP ${NAME} 127.0.0.1`,
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    for (const proxy of proxies) proxy.close();
    for (const gateway of gateways) await gateway.stop();
  });

  it('signs in and saves a form with TRUSTED_PROXY, on the proxy’s X-Forwarded-Host', async () => {
    const address = await behindProxy({ TRUSTED_PROXY: '1' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const page = await context.newPage();
    const sentFetchSite: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sentFetchSite.push(request.headers()['sec-fetch-site'] ?? '(none)');
    });
    await signIn(page, address);
    await page.waitForURL(`${address}/`);
    // the browser gave no Sec-Fetch-Site here: the check went by Origin and X-Forwarded-Host
    expect(sentFetchSite).toEqual(['(none)']);
    await page.goto(`${address}/user/edit`);
    const displayName = page.locator('input[name="display_name"]');
    // the form fills itself from /api/user/self first
    await expect.poll(() => displayName.inputValue()).not.toBe('');
    await displayName.fill('Behind the proxy');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('user info updated').waitFor();
    await page.screenshot({ path: join(screenshotDir, 'proxied-sign-in-trusted.png') });
    const self = await page.evaluate(async () => (await (await fetch('/api/user/self')).json()) as { data: { display_name: string } });
    expect(self.data.display_name).toBe('Behind the proxy');
    await context.close();
  });

  it('refuses the sign-in without TRUSTED_PROXY, and says why', async () => {
    const address = await behindProxy({});
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const page = await context.newPage();
    const refused = page.waitForResponse(
      (response) => response.url().endsWith('/api/user/login') && response.request().method() === 'POST',
    );
    await signIn(page, address);
    expect((await refused).status()).toBe(403);
    await page.getByText('cross-site request refused').first().waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.screenshot({ path: join(screenshotDir, 'proxied-sign-in-untrusted.png') });
    await context.close();
  });
});
