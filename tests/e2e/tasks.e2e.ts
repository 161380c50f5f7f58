// The Tasks page in real Chromium against the real gateway, its videos made
// by the video emulator and its batch run by the gateway on the OpenAI
// emulator (a slow key, one line at a time, so the batch is still running
// when it is cancelled). Root plays a finished video in its drawer (the
// <video> reads ranges through the console's route with the session cookie)
// and finds its download; cancels the running batch after a confirmation;
// downloads the cancelled batch's output and error files on a phone; and
// cancels a running video on a phone. Four views, light and dark, 1440 and
// 390 px, English and Chinese (test-results/screenshots/tasks-*.png), each
// drawer axe clean.
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIEmulator, type OpenAIEmulator } from '../support/openaiEmulator';
import { startVideoEmulator, type VideoEmulator } from '../support/emulators/videoEmulator';
import { axeViolations } from './support/axe';
import { chromiumAvailable, drawerSettled, launchBrowser, screenshotDir, signInThroughConsole } from './support/browser';
import { apiLogin, consoleApi, setOptions, startGateway, type RunningGateway } from './support/gateway';

const ROOT_PASSWORD = 'e2e-tasks-root-pass';
const DRAWER = { en: 'Task details', zh: '任务详情' } as const;
type Locale = keyof typeof DRAWER;

describe.runIf(chromiumAvailable())('tasks: a video played and cancelled, a batch cancelled with its files', () => {
  let videos: VideoEmulator;
  let openai: OpenAIEmulator;
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cookie = '';
  let key = '';
  const ids = { done: '', stuck: '', batch: '' };

  const api = consoleApi(
    () => gateway.baseUrl,
    () => cookie,
  );
  const relay = async (path: string, body: unknown) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }) },
      body: body instanceof FormData ? body : JSON.stringify(body),
    });
    return (await response.json()) as { id: string };
  };
  /** Polls the task list until the task reaches one of `statuses`. */
  const waitForStatus = async (id: string, statuses: string[]) => {
    for (let tries = 0; tries < 150; tries += 1) {
      const list = await api('GET', '/api/task/?p=0&page_size=25');
      const task = (list.data as Array<{ id: string; status: string }>).find((row) => row.id === id);
      if (task && statuses.includes(task.status)) return;
      await new Promise((wake) => setTimeout(wake, 100));
    }
    throw new Error(`task ${id} never reached ${statuses.join(' or ')}`);
  };

  beforeAll(async () => {
    [videos, openai] = await Promise.all([startVideoEmulator(), startOpenAIEmulator({ record: false })]);
    gateway = await startGateway({ INITIAL_ROOT_PASSWORD: ROOT_PASSWORD, TASK_POLL_SECONDS: '0.2' });
    cookie = await apiLogin(gateway.baseUrl, 'root', ROOT_PASSWORD);
    await setOptions(gateway.baseUrl, cookie, { BatchUpstreamEnabled: 'false', BatchConcurrency: '1' });
    const channels = [
      { name: 'sora', key: 'sk-video', base_url: videos.baseUrl, models: 'sora-2' },
      // answers after 1.2 s: 200 lines one at a time keep the batch running while the page cancels it, so it is
      // cancelled with lines not yet run (its error file), whatever the machine's speed (20 were all run once)
      { name: 'slow-chat', key: 'sk-slow', base_url: openai.baseUrl, models: 'gpt-3.5-turbo' },
    ];
    for (const channel of channels) {
      const created = await api('POST', '/api/channel/', { ...channel, type: 1, group: 'default' });
      expect(created.success, created.message).toBe(true);
    }
    const token = await api('POST', '/api/token/', { name: 'e2e', remain_quota: 50_000_000 });
    key = `sk-${String(token.data.key).replace(/^sk-/, '')}`;

    videos.plan = { outcome: 'completed', polls: 1 };
    ids.done = (await relay('/v1/videos', { model: 'sora-2', prompt: 'a cat', seconds: '4', size: '720x1280' })).id;
    videos.plan = { outcome: 'stuck', polls: 0 };
    ids.stuck = (await relay('/v1/videos', { model: 'sora-2', prompt: 'a dog', seconds: '4', size: '720x1280' })).id;
    const form = new FormData();
    form.append('purpose', 'batch');
    const line = (index: number) =>
      JSON.stringify({
        custom_id: `line-${index}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 },
      });
    form.append('file', new Blob([`${Array.from({ length: 200 }, (_, index) => line(index)).join('\n')}\n`]), 'input.jsonl');
    const file = await relay('/v1/files', form);
    ids.batch = (await relay('/v1/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id;
    expect(ids.batch).toMatch(/^batch_/);
    await waitForStatus(ids.done, ['completed']);
    await waitForStatus(ids.stuck, ['in_progress']);

    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    await signInThroughConsole(page, gateway.baseUrl, 'root', ROOT_PASSWORD);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await gateway?.stop();
    await videos?.close();
    await openai?.close();
  });

  /** The Tasks page in one view, with the drawer of the task whose row (or card) `row` finds opened. */
  async function openTask(view: { locale: Locale; scheme: 'light' | 'dark'; width: number }, id: string, card?: RegExp) {
    await page.setViewportSize({ width: view.width, height: view.width > 1000 ? 900 : 844 });
    await page.emulateMedia({ colorScheme: view.scheme, reducedMotion: 'reduce' });
    await page.evaluate((value) => localStorage.setItem('locale', value), view.locale);
    await page.goto(`${gateway.baseUrl}/task`);
    if (card) await page.getByTestId('list-card').filter({ hasText: card }).first().click();
    else await page.getByText(id, { exact: true }).click();
    const drawer = page.getByRole('dialog', { name: DRAWER[view.locale] });
    await drawerSettled(drawer);
    await drawer.getByText(id, { exact: true }).waitFor();
    return drawer;
  }

  /** What the browser gets for a link of the drawer, with its cookie: the status and the bytes. */
  const fetchInPage = (href: string, range?: string) =>
    page.evaluate(
      async ([url, bytes]) => {
        const response = await fetch(url, bytes ? { headers: { range: bytes } } : {});
        return { status: response.status, length: (await response.arrayBuffer()).byteLength };
      },
      [href, range] as const,
    );

  const expectAxeClean = async () => expect(await axeViolations(page)).toEqual([]);
  const shot = (name: string) => page.screenshot({ path: join(screenshotDir, `tasks-${name}.png`) });

  it('plays a finished video in its drawer and offers its download (light, 1440, English)', async () => {
    const drawer = await openTask({ locale: 'en', scheme: 'light', width: 1440 }, ids.done);
    const video = drawer.getByTestId('task-video');
    const source = String(await video.getAttribute('src'));
    expect(source).toBe(`/api/task/${ids.done}/content`);
    expect(await fetchInPage(source, 'bytes=0-99')).toEqual({ status: 206, length: 100 });
    const download = drawer.getByRole('link', { name: 'Download MP4' });
    expect(await fetchInPage(String(await download.getAttribute('href')))).toEqual({ status: 200, length: videos.content.length });
    expect(await drawer.getByRole('button', { name: 'Cancel task' }).count()).toBe(0);
    await shot('video-light-1440-en');
    await expectAxeClean();
  });

  it('cancels the running batch after a confirmation (dark, 1440, Chinese)', async () => {
    const drawer = await openTask({ locale: 'zh', scheme: 'dark', width: 1440 }, ids.batch);
    await drawer.getByRole('button', { name: '取消任务' }).click();
    const confirm = page.getByRole('dialog', { name: '取消这个任务？' });
    await confirm.waitFor();
    // the dialog fades in (MUI's fade ignores reduced motion): the picture waits for it
    await confirm.evaluate(
      (element) =>
        new Promise<void>((resolve) => {
          const check = () => (getComputedStyle(element.parentElement!).opacity === '1' ? resolve() : requestAnimationFrame(check));
          check();
        }),
    );
    await shot('cancel-dark-1440-zh');
    await expectAxeClean();
    await confirm.getByRole('button', { name: '取消任务' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await drawer.getByText('取消中', { exact: true }).waitFor();
    expect(await drawer.getByRole('button', { name: '取消任务' }).count()).toBe(0);
  });

  it("downloads the cancelled batch's output and error files on a phone (dark, 390, English)", async () => {
    await waitForStatus(ids.batch, ['cancelled']);
    const drawer = await openTask({ locale: 'en', scheme: 'dark', width: 390 }, ids.batch, /Cancelled/);
    for (const which of ['output', 'error']) {
      const link = drawer.getByTestId(`task-file-${which}`);
      const got = await fetchInPage(String(await link.getAttribute('href')));
      expect(got.status, which).toBe(200);
      expect(got.length, which).toBeGreaterThan(0);
    }
    expect(await drawer.evaluate((element) => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0);
    await shot('batch-files-dark-390-en');
    await expectAxeClean();
  });

  it('cancels a running video on a phone (light, 390, Chinese)', async () => {
    const drawer: Locator = await openTask({ locale: 'zh', scheme: 'light', width: 390 }, ids.stuck, /进行中/);
    await drawer.getByRole('button', { name: '取消任务' }).click();
    const confirm = page.getByRole('dialog', { name: '取消这个任务？' });
    await confirm.getByText('服务商会停止并删除该视频', { exact: false }).waitFor();
    await confirm.getByRole('button', { name: '取消任务' }).click();
    await drawer.getByText('已删除', { exact: true }).waitFor();
    expect(videos.videos.size).toBe(1);
    // the notice covers the drawer's title on a phone: the picture is taken once it is gone
    await page.getByText('任务已取消').waitFor({ state: 'hidden' });
    await shot('video-cancelled-light-390-zh');
    await expectAxeClean();
  });
});
