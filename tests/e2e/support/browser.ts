// Debian's Chromium driven by playwright-core. When it is missing the e2e
// suites are left out with a clear line, unless CI demands every suite.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { repoRoot } from './gateway';

/**
 * Debian's headless shell of the same Chromium (package chromium-headless-shell, what Playwright itself runs for
 * headless pages) when it is installed: the same Blink without the desktop browser around it, about 15% less CPU a
 * file (logDrawer.e2e: 42.6 and 50.2 s of CPU against 49.3 and 59.4 s). Else Debian's chromium; CHROMIUM_PATH wins.
 */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');
export const screenshotDir = join(repoRoot, 'test-results', 'screenshots');

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.SWITCHBOARD_REQUIRE_SERVICES === '1') {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH} and SWITCHBOARD_REQUIRE_SERVICES=1`);
  }
  console.warn(`[switchboard] Chromium not found at ${CHROMIUM_PATH}: e2e suites left out (apt-get install chromium)`);
  return false;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/**
 * A browser for one file: the run's shared Chromium (started by browserServer.ts, the e2e project's global setup)
 * when there is one, else a Chromium of its own. Closing it closes the contexts it opened and, when shared, only
 * disconnects.
 */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(screenshotDir, { recursive: true });
  const shared = process.env.SWITCHBOARD_CHROMIUM_ENDPOINT;
  if (shared) return chromium.connect(shared);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** Signs in through the console's login form and waits for the home page. */
export async function signInThroughConsole(page: Page, baseUrl: string, username: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole('button', { name: /^log in$/i }).click();
  await page.waitForURL(`${baseUrl}/`);
}

/** A browser with one page at 1440 × 900 in English, signed in through the console's login form. */
export async function signedInPage(
  baseUrl: string,
  username: string,
  password: string,
): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  await signInThroughConsole(page, baseUrl, username, password);
  return { browser, context, page };
}

/** Waits until a drawer has slid fully in (MUI's slide ignores reduced motion), so a screenshot and axe see it whole. */
export async function drawerSettled(drawer: Locator): Promise<void> {
  await drawer.waitFor();
  await drawer.evaluate(
    (element) =>
      new Promise<void>((resolve) => {
        const check = () => (getComputedStyle(element).transform === 'none' ? resolve() : requestAnimationFrame(check));
        check();
      }),
  );
}

/** The boxes (the page, a list's content and its table) wider than they show: each would need a sideways scroll. */
export function sidewaysOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const boxes = [document.documentElement, ...Array.from(document.querySelectorAll('.RaList-content, .RaDatagrid-tableWrapper'))];
    return boxes.filter((box) => box.scrollWidth > box.clientWidth).map((box) => `${box.className} ${box.scrollWidth}>${box.clientWidth}`);
  });
}
