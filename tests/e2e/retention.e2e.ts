// Retention you can see, in real Chromium against the built console: root
// opens Settings → Operation, reads how many logs and error logs are stored,
// sets a retention for each, presses "Prune now" and watches the bar reach the
// end, then reads the last prune of each kind. The panel is photographed at
// 1440 and 390 px, light and dark (test-results/screenshots/retention-*.png),
// axe clean and without a sideways scroll each time, and once in Chinese.
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe';
import { chromiumAvailable, screenshotDir, sidewaysOverflow, signedInPage } from './support/browser';
import { startGateway, type RunningGateway } from './support/gateway';

const enabled = chromiumAvailable();
const ROOT_PASSWORD = 'retention-root-pass';
const DAY = 86_400;
/** Logs written 40 days ago (past a 30-day retention), and error logs 10 days ago (past a 7-day one). */
const OLD_LOGS = 12;
const OLD_ERRORS = 5;

/** Writes back-dated logs into the gateway's SQLite file (WAL: the running gateway keeps its own connection). */
function writeOldLogs(file: string): void {
  const database = new SQLite(file, { timeout: 5000 });
  try {
    const insert = database.prepare(
      `insert into logs (user_id, username, created_at, type, content, quota, token_name, token_id, model_name, channel_id,
        prompt_tokens, completion_tokens, elapsed_ms, is_stream, estimated)
       values (1, 'root', ?, ?, ?, 0, '', 0, 'gpt-4o', 0, 0, 0, 0, 0, 0)`,
    );
    const now = Math.floor(Date.now() / 1000);
    database.transaction(() => {
      for (let index = 0; index < OLD_LOGS; index += 1) insert.run(now - 40 * DAY - index, 2, `old consume ${index}`);
      for (let index = 0; index < OLD_ERRORS; index += 1) insert.run(now - 10 * DAY - index, 5, `old error ${index}`);
      insert.run(now - 2 * DAY, 2, 'recent consume');
      insert.run(now - DAY, 5, 'recent error');
    })();
  } finally {
    database.close();
  }
}

describe.runIf(enabled)('retention: the stored rows, their retention and "Prune now"', () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD });
    writeOldLogs(join(gateway.dataDir, 'switchboard.db'));
    ({ browser, page } = await signedInPage(gateway.baseUrl, 'root', ROOT_PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const panel = () => page.getByRole('region', { name: 'Stored rows and retention' });
  const kind = (name: 'Logs' | 'Error logs') => panel().getByRole('group', { name, exact: true });

  async function openPanel(width: number, scheme: 'light' | 'dark') {
    await page.setViewportSize({ width, height: width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.goto(`${gateway.baseUrl}/setting`);
    await page.getByRole('tab', { name: 'Operation' }).click();
    await kind('Logs').getByTestId('retention-stored').waitFor();
  }

  /** The panel in view, photographed, axe clean and no wider than the window. */
  async function photograph(name: string) {
    await panel().scrollIntoViewIfNeeded();
    await panel().screenshot({ path: join(screenshotDir, `retention-${name}.png`) });
    expect(await axeViolations(page)).toEqual([]);
    expect(await sidewaysOverflow(page)).toEqual([]);
  }

  it('counts the stored rows of each kind before anything is pruned', async () => {
    await openPanel(1440, 'light');
    // the gateway may log a row or two of its own (its first start): at least the rows written here
    const logsText = (await kind('Logs').getByTestId('retention-stored').textContent()) ?? '';
    expect(Number(logsText.match(/^([\d,]+) rows/)?.[1].replace(/,/g, ''))).toBeGreaterThanOrEqual(OLD_LOGS + 1);
    expect(await kind('Error logs').getByTestId('retention-stored').textContent()).toMatch(
      new RegExp(`^${OLD_ERRORS + 1} rows · ≈ [\\d.]+ (B|KB|MB)$`),
    );
    expect(await kind('Logs').getByTestId('retention-last-run').textContent()).toBe('Never pruned yet');
    expect(await panel().getByRole('button', { name: 'Prune now' }).isDisabled()).toBe(true);
    await photograph('1440-light-before');
  });

  it('sets a retention per kind, prunes now, and the bar reaches the end before the last prune is shown', async () => {
    await openPanel(1440, 'light');
    await kind('Logs').getByRole('spinbutton', { name: 'Keep logs for (days, 0 = forever)' }).fill('30');
    await kind('Error logs').getByRole('spinbutton', { name: 'Keep error logs for (days, 0 = as long as logs)' }).fill('7');
    await panel().getByRole('button', { name: 'Save' }).click();
    await page.getByText('settings saved').first().waitFor();
    const prune = panel().getByRole('button', { name: 'Prune now' });
    await expect.poll(() => prune.isEnabled()).toBe(true);
    await prune.click();

    const progress = panel().getByTestId('prune-progress');
    await progress.getByText(`Prune done: ${OLD_LOGS + OLD_ERRORS} of ${OLD_LOGS + OLD_ERRORS} rows removed`).waitFor();
    expect(await progress.getByRole('progressbar', { name: 'Prune progress' }).getAttribute('aria-valuenow')).toBe('100');
    await expect
      .poll(() => kind('Logs').getByTestId('retention-last-run').textContent())
      .toMatch(new RegExp(`^Last prune \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\(pruned now\\): ${OLD_LOGS} removed$`));
    expect(await kind('Error logs').getByTestId('retention-last-run').textContent()).toMatch(
      new RegExp(`\\(pruned now\\): ${OLD_ERRORS} removed$`),
    );
    expect(await kind('Error logs').getByTestId('retention-stored').textContent()).toMatch(/^1 row · /);
    await photograph('1440-light');
  });

  it('reads in Chinese at 390 px, dark', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
    await page.evaluate(() => localStorage.setItem('locale', 'zh'));
    try {
      await page.goto(`${gateway.baseUrl}/setting`);
      await page.getByRole('tab', { name: '运营设置' }).click();
      const zh = page.getByRole('region', { name: '数据存量与保留期' });
      const errors = zh.getByRole('group', { name: '错误日志', exact: true });
      expect(await errors.getByTestId('retention-last-run').textContent()).toMatch(/（立即清理）：删除 \d+ 行$/);
      await zh.getByRole('button', { name: '立即清理' }).waitFor();
      await zh.scrollIntoViewIfNeeded();
      await zh.screenshot({ path: join(screenshotDir, 'retention-390-dark-zh.png') });
      expect(await axeViolations(page)).toEqual([]);
      expect(await sidewaysOverflow(page)).toEqual([]);
    } finally {
      await page.evaluate(() => localStorage.setItem('locale', 'en'));
    }
  });

  for (const [width, scheme] of [
    [1440, 'dark'],
    [390, 'light'],
    [390, 'dark'],
  ] as const) {
    it(`shows the panel with its last prune at ${width} px, ${scheme}`, async () => {
      await openPanel(width, scheme);
      expect(await kind('Error logs').getByTestId('retention-last-run').textContent()).toMatch(/\(pruned now\): \d+ removed$/);
      await photograph(`${width}-${scheme}`);
    });
  }
});
