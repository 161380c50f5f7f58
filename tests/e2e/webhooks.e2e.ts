// Webhooks in real Chromium: an admin registers a webhook, copies the secret
// shown once, sends a test event, and sees it delivered in the delivery log;
// the receiver on loopback checks the signature with that secret.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../server/webhooks/signing';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver';
import { chromiumAvailable, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';
import { axeScan } from './support/axe';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'webhooks-root-pass';

describe.runIf(enabled)('webhooks: create, test event, delivery log', () => {
  let gateway: RunningGateway;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    gateway = await startGateway({
      INITIAL_ROOT_PASSWORD: ROOT_PASSWORD,
      WEBHOOK_POLL_INTERVAL_SECONDS: '0.2',
      WEBHOOK_RETRY_DELAYS_SECONDS: '0.5,1',
    });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await receiver?.close();
  });

  it('creates a webhook, shows its secret once, and logs the delivered test event', async () => {
    await page.goto(`${gateway.baseUrl}/webhook`);
    await page.getByRole('link', { name: 'Add webhook' }).click();
    await page.getByLabel('Name').fill('ops pager');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Channel disabled').check();
    await page.getByRole('button', { name: 'Save' }).click();

    const secretField = page.getByTestId('webhook-secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    await page.screenshot({ path: join(screenshotDir, 'webhooks-secret.png') });
    await page.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('row', { name: /ops pager/ });
    await row.waitFor();
    await row.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event queued').waitFor();
    const [delivery] = await receiver.waitFor((received) => received.length === 1);
    expect(delivery.json.type).toBe('webhook.test');
    expect(verifyWebhookSignature(secret, String(delivery.headers['x-switchboard-signature']), delivery.body)).toBe(true);

    await row.getByRole('link', { name: 'Deliveries' }).click();
    const logged = page.getByRole('row', { name: /Test event/ });
    await logged.waitFor();
    await expect
      .poll(
        async () => {
          await page.reload();
          await logged.waitFor();
          return logged.getByText('Delivered').count();
        },
        { timeout: 30_000 },
      )
      .toBe(1);
    expect(await logged.getByText('ops pager').count()).toBe(1);
    await page.screenshot({ path: join(screenshotDir, 'webhooks-deliveries.png'), fullPage: true });
  });

  it('passes axe (WCAG 2 A and AA) with a title on every webhook page', async () => {
    for (const [path, ready, title] of [
      ['/webhook', 'ops pager', 'Webhooks'],
      ['/webhook/create', 'Signing secret', 'New webhook'],
      ['/webhook_delivery', 'Delivered', 'Webhook deliveries'],
    ] as const) {
      await page.goto(`${gateway.baseUrl}${path}`);
      await page.getByText(ready).first().waitFor();
      await page.waitForLoadState('networkidle');
      // MUI's transitions finish before contrast is measured
      await page.waitForTimeout(400);
      expect(await page.title()).toBe(`${title} · Switchboard`);
      const results = await axeScan(page).withTags(['wcag2a', 'wcag2aa']).analyze();
      const violations = results.violations.flatMap((violation) =>
        violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`),
      );
      expect(violations, path).toEqual([]);
    }
  });
});
