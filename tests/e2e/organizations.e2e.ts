// Organisations in real Chromium against the built console: root creates an
// organisation with an owner; the owner, who is no site admin, adds a member
// and makes a key that spends the organisation's money. Each screen is
// checked with axe and photographed at 1440 px (light) and 390 px (dark).
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator } from '../support/openaiEmulator';
import { axeViolations } from './support/axe';
import { chromiumAvailable, launchBrowser, screenshotDir, sidewaysOverflow, signInThroughConsole } from './support/browser';
import { apiLogin, consoleApi, startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();

/** axe on the page once its notices have gone and nothing moves (a fading notice is caught mid-colour otherwise). */
async function settledViolations(page: Page): Promise<string[]> {
  await page.waitForFunction(
    () => !document.querySelector('.MuiSnackbar-root, .MuiSkeleton-root') && document.getAnimations().length === 0,
    undefined,
    {
      timeout: 30_000,
    },
  );
  return axeViolations(page);
}
const ROOT_PASSWORD = 'organizations-root-pass';
const PASSWORD = 'password-123';

describe.runIf(enabled)('organisations: created by root, run by their owner', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let cookie = '';
  let organizationId = 0;
  const api = consoleApi(
    () => gateway.baseUrl,
    () => cookie,
  );

  /** A page in its own context, signed in through the console's form. */
  async function pageAs(username: string, password: string, width: number, colorScheme: 'light' | 'dark'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, locale: 'en-US', colorScheme });
    const page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, username, password);
    return page;
  }

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    for (const username of ['owner1', 'member1']) {
      const response = await fetch(`${gateway.baseUrl}/api/user/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: PASSWORD, password2: PASSWORD }),
      });
      expect(((await response.json()) as { success: boolean }).success).toBe(true);
    }
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  it('root creates an organisation with its owner (1440 px, light)', async () => {
    const page = await pageAs('root', ROOT_PASSWORD, 1440, 'light');
    await page.goto(`${gateway.baseUrl}/organization`);
    await page.getByRole('heading', { name: 'All organizations' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Acme');
    await page.getByLabel('Owner (username)', { exact: true }).fill('owner1');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('link', { name: 'Acme' }).waitFor();
    const listed = await api('GET', '/api/organization/search?keyword=Acme');
    expect(listed.data).toEqual([expect.objectContaining({ name: 'Acme', owner_username: 'owner1', member_count: 1 })]);
    organizationId = listed.data[0].id;
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-admin-1440.png'), fullPage: true });
    await page.context().close();
  });

  it('the owner adds a member and makes a key (1440 px, light)', async () => {
    const page = await pageAs('owner1', PASSWORD, 1440, 'light');
    await page.goto(`${gateway.baseUrl}/organization`);
    await page.getByRole('link', { name: 'Open Acme' }).click();
    await page.getByRole('heading', { name: 'Acme' }).waitFor();
    // no site list for someone who is no site admin
    expect(await page.getByRole('heading', { name: 'All organizations' }).count()).toBe(0);

    await page.getByRole('tab', { name: 'Members' }).click();
    await page.getByLabel('Username', { exact: true }).fill('member1');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByText('member1', { exact: true }).waitFor();
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-members-1440.png'), fullPage: true });

    await page.getByRole('tab', { name: 'Keys' }).click();
    await page.getByLabel('Key name', { exact: true }).fill('ci key');
    await page.getByRole('button', { name: 'New key' }).click();
    const secret = page.getByTestId('organization-key-secret');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^sk-[A-Za-z0-9]{24,64}$/);
    await page.getByText('ci key', { exact: true }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-keys-1440.png'), fullPage: true });

    // the organisation's own audit rows: the member added and the key made, by the owner; a row opens its details
    await page.getByRole('tab', { name: 'Audit log' }).click();
    const audit = page.getByRole('table', { name: 'Audit log' });
    await audit.getByRole('row').nth(2).waitFor();
    const actions = await audit.getByRole('row').allInnerTexts();
    expect(actions.slice(1).every((row) => row.includes('owner1'))).toBe(true);
    expect(actions.some((row) => /member/.test(row))).toBe(true);
    expect(actions.some((row) => /token/.test(row))).toBe(true);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-audit-1440.png'), fullPage: true });
    await audit.getByRole('row').nth(1).click();
    await page.getByRole('heading', { name: /Audit entry/ }).waitFor();
    await page.context().close();

    const members = await api('GET', `/api/organization/${organizationId}/member`);
    expect(members.data.map((member: { username: string; role: string }) => [member.username, member.role])).toEqual([
      ['owner1', 'owner'],
      ['member1', 'member'],
    ]);
    const keys = await api('GET', `/api/organization/${organizationId}/token`);
    expect(keys.data).toEqual([expect.objectContaining({ name: 'ci key', member_username: 'owner1' })]);
  });

  it('fits and stays accessible at 390 px in the dark theme', async () => {
    const page = await pageAs('owner1', PASSWORD, 390, 'dark');
    await page.goto(`${gateway.baseUrl}/organization`);
    await page.getByRole('link', { name: 'Open Acme' }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-mine-390-dark.png'), fullPage: true });
    await page.goto(`${gateway.baseUrl}/organization/${organizationId}`);
    await page.getByText('ci key', { exact: true }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-keys-390-dark.png'), fullPage: true });
    await page.getByRole('tab', { name: 'Members' }).click();
    await page.getByText('member1', { exact: true }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-members-390-dark.png'), fullPage: true });
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.getByRole('table', { name: 'Audit log' }).getByRole('row').nth(1).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-audit-390-dark.png'), fullPage: true });
    await page.getByRole('tab', { name: 'Usage' }).click();
    await page.getByTestId('organization-usage-totals').waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await settledViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshotDir, 'organizations-usage-390-dark.png'), fullPage: true });
    await page.context().close();
  });

  it('in Chinese (1440 px, light): the usage of a call through the member key, and the caps dialog', async () => {
    const emulator = await startOpenAIEmulator();
    try {
      const channel = await api('POST', '/api/channel/', {
        name: 'emulator',
        type: 8,
        key: 'sk-good',
        base_url: emulator.baseUrl,
        models: 'gpt-3.5-turbo',
      });
      expect(channel.success, channel.message).toBe(true);
      expect((await api('POST', `/api/organization/${organizationId}/topup`, { quota: 5_000_000 })).success).toBe(true);
      const owner = await apiLogin(gateway.baseUrl, 'owner1', PASSWORD);
      const made = await consoleApi(
        () => gateway.baseUrl,
        () => owner,
      )('POST', `/api/organization/${organizationId}/token`, { name: 'zh key', unlimited_quota: true });
      expect(made.success, made.message).toBe(true);
      const answer = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${made.data.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-3.5-turbo', max_tokens: 5, messages: [{ role: 'user', content: '你好' }] }),
      });
      expect(answer.status).toBe(200);

      const page = await pageAs('owner1', PASSWORD, 1440, 'light');
      await page.evaluate(() => localStorage.setItem('locale', 'zh'));
      await page.goto(`${gateway.baseUrl}/organization/${organizationId}`);
      await page.getByRole('tab', { name: '用量' }).click();
      const byKey = page.getByTestId('organization-usage');
      // the rollups are written a moment after the call
      await expect.poll(async () => (await byKey.textContent()) ?? '', { timeout: 20_000 }).toContain('zh key');
      expect(await byKey.textContent()).toContain('按成员');
      expect(await sidewaysOverflow(page)).toEqual([]);
      expect(await settledViolations(page)).toEqual([]);
      await page.screenshot({ path: join(screenshotDir, 'organizations-usage-1440-zh.png'), fullPage: true });

      await page.getByRole('tab', { name: '成员' }).click();
      await page.getByText('member1', { exact: true }).waitFor();
      // the second row's (member1's) caps
      await page.getByRole('button', { name: '限额', exact: true }).nth(1).click();
      const dialog = page.getByRole('dialog', { name: 'member1 的消费限额' });
      await dialog.waitFor();
      expect(await settledViolations(page)).toEqual([]);
      await page.screenshot({ path: join(screenshotDir, 'organizations-caps-1440-zh.png'), fullPage: true });
      await dialog.getByLabel('总限额').fill('10');
      await dialog.getByRole('button', { name: '保存限额' }).click();
      await dialog.waitFor({ state: 'detached' });
      const members = await api('GET', `/api/organization/${organizationId}/member`);
      expect(members.data.find((member: { username: string }) => member.username === 'member1').cap_quota).toBeGreaterThan(0);
      await page.context().close();
    } finally {
      await emulator.close();
    }
  });
});
