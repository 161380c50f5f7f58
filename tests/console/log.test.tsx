// The log page: which endpoints it reads for admins and for users, the default
// window (and the From and To filters showing it), the stat line, the extra
// columns, the filters' URLs and a row's drawer (which sections a row shows).
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { logText } from '../../src/resources/log/logContent';
import { formatTimestamp } from '../../src/resources/shared/TimestampField';
import { LogList } from '../../src/resources/log/LogList';
import { lightTheme } from '../../src/theme';
import { screenWidth } from './screenWidth';
import { server } from './setup';

const row = {
  id: 0,
  user_id: 2,
  created_at: 1700000000,
  type: 2,
  content: 'model ratio 15.00, group ratio 1.00',
  username: 'bob',
  token_name: 'laptop',
  model_name: 'gpt-4',
  quota: 1500,
  prompt_tokens: 12,
  completion_tokens: 30,
  channel_id: 3,
  elapsed_ms: 1234,
  is_stream: true,
  estimated: true,
};

/** The pickers' suggestions: the caller's tokens, the users, the channels, the models. */
function pickerSources() {
  server.use(
    http.get('*/api/token/', () =>
      HttpResponse.json({
        success: true,
        message: '',
        data: [
          { id: 5, name: 'laptop' },
          { id: 6, name: 'phone' },
        ],
      }),
    ),
    http.get('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: [{ id: 2, username: 'bob' }] })),
    http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [{ id: 3, name: 'azure-east' }] })),
    http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [{ id: 'gpt-4' }] })),
  );
}

/** A user's own logs answer with these rows, and a zero stat. */
function serveOwnLogs(rows: Array<Record<string, unknown>>) {
  server.use(
    http.get('*/api/log/self/', () => HttpResponse.json({ success: true, message: '', data: rows })),
    http.get('*/api/log/self/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
  );
}

function renderLogs(role: number) {
  pickerSources();
  localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role, status: 1 }));
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  const seen: URL[] = [];
  server.events.on('request:start', ({ request }) => {
    seen.push(new URL(request.url));
  });
  render(
    <MemoryRouter initialEntries={['/log']}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="log">
          <Routes>
            <Route path="/log" element={<LogList />} />
          </Routes>
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
  return seen;
}

describe('LogList', () => {
  it("reads a user's own logs and stat over epoch 0 .. an hour ahead, without the username filter", async () => {
    server.use(
      http.get('*/api/log/self/', () =>
        HttpResponse.json({ success: true, message: '', data: [row, { ...row, content: 'second', estimated: false, is_stream: false }] }),
      ),
      http.get('*/api/log/self/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 3000, token: 84 } })),
    );
    const before = Math.floor(Date.now() / 1000);
    const seen = renderLogs(1);
    expect(await screen.findByText('Quota used within these filters: $0.006000 · tokens: 84')).toBeInTheDocument();
    const first = (await screen.findByText('model ratio 15.00, group ratio 1.00')).closest('tr') as HTMLElement;
    expect(within(first).getByText('laptop')).toBeInTheDocument();
    expect(within(first).getByText('Consumption')).toBeInTheDocument();
    expect(within(first).getByText('$0.003000')).toBeInTheDocument();
    expect(within(first).getByText('≈ 12')).toBeInTheDocument();
    expect(within(first).getByText('1.23 s')).toBeInTheDocument();
    expect(within(first).getByText('Stream')).toBeInTheDocument();
    const second = screen.getByText('second').closest('tr') as HTMLElement;
    expect(within(second).getByText('12')).toBeInTheDocument();
    // users see neither the username nor the channel
    expect(screen.queryByRole('columnheader', { name: 'User' })).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Channel' })).toBeNull();
    expect(document.querySelector('input[name="username"]')).toBeNull();

    const list = seen.find((url) => url.pathname === '/api/log/self/')!;
    expect(list.searchParams.get('p')).toBe('0');
    expect(list.searchParams.get('start_timestamp')).toBe('0');
    const end = Number(list.searchParams.get('end_timestamp'));
    expect(end).toBeGreaterThanOrEqual(before + 3600);
    expect(end).toBeLessThan(before + 3700);
    expect(list.searchParams.has('username')).toBe(false);
    expect(seen.some((url) => url.pathname === '/api/log/self/stat' && url.searchParams.get('end_timestamp') === String(end))).toBe(true);
  });

  it('shows the window in the From and To filters: From empty (epoch 0), To an hour from when the page opened', async () => {
    serveOwnLogs([row]);
    const seen = renderLogs(1);
    await screen.findByText('model ratio 15.00, group ratio 1.00');
    const list = seen.find((url) => url.pathname === '/api/log/self/')!;
    const end = Number(list.searchParams.get('end_timestamp'));
    const to = document.querySelector<HTMLInputElement>('input[name="end_timestamp"]')!;
    expect(to).toHaveAttribute('type', 'datetime-local');
    expect(to.value).toBe(formatTimestamp(end).replace(' ', 'T').slice(0, 16));
    expect(screen.getByLabelText('To')).toBe(to);
    expect(document.querySelector<HTMLInputElement>('input[name="start_timestamp"]')!.value).toBe('');
    // the default window is no chip
    expect(screen.queryByTestId('active-filters')).toBeNull();
  });

  it("reads everyone's logs for an admin, with username and channel columns", async () => {
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [{ ...row, id: 41 }] })),
      http.get('*/api/log/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
    const seen = renderLogs(10);
    const first = (await screen.findByText('model ratio 15.00, group ratio 1.00')).closest('tr') as HTMLElement;
    expect(within(first).getByText('bob')).toBeInTheDocument();
    expect(within(first).getByText('#3')).toBeInTheDocument();
    expect(document.querySelector('input[name="username"]')).not.toBeNull();
    expect(seen.some((url) => url.pathname === '/api/log/')).toBe(true);
    expect(seen.some((url) => url.pathname === '/api/log/stat')).toBe(true);
    // the channel and the user open their records
    expect(within(first).getByRole('link', { name: '#3' })).toHaveAttribute('href', '/channel/edit/3');
    expect(within(first).getByRole('link', { name: 'bob' })).toHaveAttribute('href', '/user/edit/2');
  });

  it('a token name and a time preset filter the list, each shown as a chip that clears it', async () => {
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [{ ...row, id: 41 }] })),
      http.get('*/api/log/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
    const seen = renderLogs(10);
    const first = (await screen.findByText('model ratio 15.00, group ratio 1.00')).closest('tr') as HTMLElement;
    // nothing is filtered yet: the default window is no chip
    expect(screen.queryByTestId('active-filters')).toBeNull();
    within(first).getByRole('button', { name: 'laptop' }).click();
    expect(await screen.findByText('Token: laptop', undefined, { timeout: 15_000 })).toBeInTheDocument();
    await expect.poll(() => seen.some((url) => url.pathname === '/api/log/' && url.searchParams.get('token_name') === 'laptop')).toBe(true);
    screen.getByRole('button', { name: '7 days' }).click();
    expect(await screen.findByText(/^From: /, undefined, { timeout: 15_000 })).toBeInTheDocument();
    const weekAgo = Math.floor(Date.now() / 1000) - 7 * 86_400;
    await expect
      .poll(() =>
        seen.some((url) => url.pathname === '/api/log/' && Math.abs(Number(url.searchParams.get('start_timestamp')) - weekAgo) < 60),
      )
      .toBe(true);
    screen.getByRole('button', { name: 'Clear all' }).click();
    await expect.poll(() => screen.queryByTestId('active-filters')).toBeNull();
  });

  it("shows the request id in a log's details, in English and in Chinese, and nothing for a log without one", async () => {
    serveOwnLogs([
      { ...row, id: 7, request_id: 'req_3f2a_1k' },
      { ...row, id: 8, content: 'topped up', type: 1, request_id: null },
    ]);
    renderLogs(1);
    const first = (await screen.findByText('model ratio 15.00, group ratio 1.00')).closest('tr') as HTMLElement;
    const detail = within(first).getByLabelText('Request ID req_3f2a_1k');
    expect(detail).toHaveTextContent('Request ID: req_3f2a_1k');
    expect(within(detail).getByText('req_3f2a_1k').tagName).toBe('CODE');
    // the id sits in the details cell, under the log's text
    expect(detail.closest('td')).toHaveClass('column-content');
    const second = screen.getByText('topped up').closest('tr') as HTMLElement;
    expect(within(second).queryByText(/Request ID/)).toBeNull();

    cleanup();
    await i18nProvider.changeLocale('zh');
    try {
      renderLogs(1);
      expect(await screen.findByLabelText('请求 ID req_3f2a_1k')).toHaveTextContent('请求 ID: req_3f2a_1k');
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });

  it('opens a failed row in a drawer: the channel by name, every attempt, and how the quota was computed', async () => {
    const failed = {
      ...row,
      id: 51,
      type: 5,
      quota: 0,
      content: 'all channels failed: upstream answered 500',
      request_id: 'req_fail_51',
      channel_id: 4,
      channel_name: 'openai-backup',
      details: {
        protocol: 'openai',
        operation: 'chat',
        status: 502,
        retries: 1,
        errorCode: 'upstream_error',
        attempts: [
          { channelId: 3, channelName: 'azure-east', status: 500, reason: 'The server had an error.', ms: 120 },
          { channelId: 4, channelName: 'openai-backup', status: 503, reason: 'overloaded', ms: 80 },
        ],
      },
    };
    const charged = {
      ...row,
      id: 52,
      content: 'charged',
      request_id: 'req_ok_52',
      channel_name: 'azure-east',
      details: {
        cachedTokens: 8,
        reasoningTokens: 5,
        ttftMs: 350,
        modelRatio: 15,
        completionRatio: 2,
        groupRatio: 1,
        formula: '(12 + 30 × 2) × 15 × 1 = 1080',
      },
    };
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [failed, charged] })),
      http.get('*/api/log/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
    const seen = renderLogs(10);
    // newest first by time, not by id
    await expect
      .poll(() =>
        seen.some(
          (url) =>
            url.pathname === '/api/log/' && url.searchParams.get('sort') === 'created_at' && url.searchParams.get('order') === 'desc',
        ),
      )
      .toBe(true);

    const failedRow = (await screen.findByText('all channels failed: upstream answered 500')).closest('tr') as HTMLElement;
    // the list names the channel too, with its id
    expect(within(failedRow).getByRole('link', { name: 'openai-backup' })).toHaveAttribute('href', '/channel/edit/4');
    fireEvent.click(within(failedRow).getByText('Error'));
    const drawer = await screen.findByRole('dialog', { name: 'Log details' });
    expect(within(drawer).getByText('Error')).toBeInTheDocument();
    expect(within(drawer).getByText('req_fail_51')).toBeInTheDocument();
    expect(within(drawer).getByRole('link', { name: 'openai-backup' })).toHaveAttribute('href', '/channel/edit/4');
    expect(within(drawer).getByText('openai · chat')).toBeInTheDocument();
    const attempts = within(drawer).getByRole('table', { name: 'Attempts' });
    const lines = within(attempts)
      .getAllByRole('row')
      .map((line) => line.textContent);
    expect(lines).toEqual(['ChannelStatusReasonms', 'azure-east500The server had an error.120', 'openai-backup503overloaded80']);
    fireEvent.keyDown(drawer, { key: 'Escape' });
    await expect.poll(() => screen.queryByRole('dialog')).toBeNull();

    // the keyboard's way in: the row's details button
    const second = screen.getByText('charged').closest('tr') as HTMLElement;
    fireEvent.click(within(second).getByRole('button', { name: 'Open the details of this log' }));
    const priced = await screen.findByRole('dialog', { name: 'Log details' });
    // the cost in dollars; the ratios, the quota and its formula behind "Show ratios" (logMoney.test.tsx has the lines)
    expect(within(priced).getByText('$0.003000')).toBeInTheDocument();
    expect(within(priced).queryByTestId('log-formula')).toBeNull();
    fireEvent.click(within(priced).getByRole('button', { name: 'Show ratios' }));
    expect(within(priced).getByText('How was this computed?')).toBeInTheDocument();
    expect(within(priced).getByTestId('log-formula')).toHaveTextContent('(12 + 30 × 2) × 15 × 1 = 1080');
    expect(within(priced).getByText('1500 quota')).toBeInTheDocument();
    expect(within(priced).getByText('350 ms')).toBeInTheDocument();
    expect(within(priced).getByText('1,234 ms')).toBeInTheDocument();
    const cached = within(priced).getByText('Cached');
    expect(cached.nextElementSibling).toHaveTextContent('8');
    fireEvent.click(within(priced).getByRole('button', { name: 'Close the details' }));
    await expect.poll(() => screen.queryByRole('dialog')).toBeNull();
  });

  it('shows an old row without details, and a row without a channel name by its id', async () => {
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [{ ...row, id: 61, content: 'old row' }] })),
      http.get('*/api/log/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
    renderLogs(10);
    fireEvent.click(await screen.findByText('old row'));
    const drawer = await screen.findByRole('dialog', { name: 'Log details' });
    expect(within(drawer).getByRole('link', { name: '#3' })).toBeInTheDocument();
    expect(within(drawer).queryByRole('table', { name: 'Attempts' })).toBeNull();
    expect(within(drawer).queryByText('How was this computed?')).toBeNull();
    expect(within(drawer).getByText('Tokens')).toBeInTheDocument();
  });

  it('leaves out the tokens and the price of a failed call that was never billed, and keeps what one counted or charged', async () => {
    const failure = { ...row, type: 5, quota: 0, prompt_tokens: 0, completion_tokens: 0, estimated: false, details: { status: 502 } };
    serveOwnLogs([
      { ...failure, id: 71, content: 'never billed', details: { status: 502, modelRatio: 15, groupRatio: 1, cachedTokens: 0 } },
      { ...failure, id: 72, content: 'counted, not billed', prompt_tokens: 40 },
      { ...failure, id: 73, content: 'billed', quota: 250 },
      { ...row, id: 74, type: 2, quota: 0, prompt_tokens: 0, completion_tokens: 0, content: 'free consume' },
    ]);
    renderLogs(1);
    const open = async (content: string) => {
      fireEvent.click(await screen.findByText(content));
      const drawer = await screen.findByRole('dialog', { name: 'Log details' });
      const sections = within(drawer)
        .getAllByRole('region')
        .map((section) => within(section).getByRole('heading').textContent);
      fireEvent.click(within(drawer).getByRole('button', { name: 'Close the details' }));
      await expect.poll(() => screen.queryByRole('dialog')).toBeNull();
      return sections;
    };
    expect(await open('never billed')).toEqual(['Summary', 'Timing']);
    expect(await open('counted, not billed')).toEqual(['Summary', 'Tokens', 'Timing']);
    expect(await open('billed')).toEqual(['Summary', 'Price', 'Timing']);
    // a consume row keeps both, zero or not
    expect(await open('free consume')).toEqual(['Summary', 'Tokens', 'Price', 'Timing']);
  });

  it('shows a user their own failed request without naming channels: the tries are numbered', async () => {
    server.use(
      http.get('*/api/log/self/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            {
              ...row,
              id: 0,
              type: 5,
              quota: 0,
              content: 'refused',
              channel_id: 3,
              details: {
                status: 502,
                attempts: [
                  { channelId: 3, channelName: '', status: 500, reason: 'upstream 500' },
                  { channelId: 4, channelName: '', status: 0, reason: 'timeout' },
                ],
              },
            },
          ],
        }),
      ),
      http.get('*/api/log/self/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
    renderLogs(1);
    fireEvent.click(await screen.findByText('refused'));
    const drawer = await screen.findByRole('dialog', { name: 'Log details' });
    expect(within(drawer).queryByText('Channel')).toBeNull();
    expect(within(drawer).queryByText(/#\d/)).toBeNull();
    const lines = within(within(drawer).getByRole('table', { name: 'Attempts' }))
      .getAllByRole('row')
      .map((line) => line.textContent);
    expect(lines).toEqual(['TryStatusReasonms', '1500upstream 500–', '2–timeout–']);
  });

  it('the Error type and a request id filter the list through the URL', async () => {
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [{ ...row, id: 41 }] })),
      http.get('*/api/log/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
    const seen = renderLogs(10);
    await screen.findByText('model ratio 15.00, group ratio 1.00');
    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Type' }));
    fireEvent.click(await screen.findByRole('option', { name: 'Error' }));
    await expect
      .poll(() => seen.some((url) => url.pathname === '/api/log/' && url.searchParams.get('type') === '5'), { timeout: 15_000 })
      .toBe(true);
    fireEvent.change(document.querySelector('input[name="request_id"]')!, { target: { value: 'req_fail_51' } });
    await expect
      .poll(
        () =>
          seen
            .find((url) => url.pathname === '/api/log/' && url.searchParams.get('request_id') === 'req_fail_51')
            ?.searchParams.get('type'),
        { timeout: 15_000 },
      )
      .toBe('5');
    expect(await screen.findByText('Request ID: req_fail_51')).toBeInTheDocument();
  });

  it("says the server's English log texts in Chinese, from their numbers, and leaves other text as written", async () => {
    serveOwnLogs([
      { ...row, id: 71 },
      { ...row, id: 72, type: 1, content: 'top-up with a redemption code: 500000 quota' },
      { ...row, id: 73, type: 5, content: 'upstream said: model overloaded' },
    ]);
    await i18nProvider.changeLocale('zh');
    try {
      renderLogs(1);
      expect(await screen.findByText('模型倍率 15.00，分组倍率 1.00')).toBeInTheDocument();
      // quota amounts in dollars, as everywhere else the status says so
      expect(screen.getByText('使用兑换码充值：$1.00 (500000 额度)')).toBeInTheDocument();
      expect(screen.getByText('upstream said: model overloaded')).toBeInTheDocument();
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });
});

describe('log texts in the console language', () => {
  const english = (key: string, options?: Record<string, unknown>) => i18nProvider.translate(key, options);
  const dollars = { quota_per_unit: 500000, display_in_currency: true };
  const quota = { quota_per_unit: 500000, display_in_currency: false };

  it('says every shape the server writes in English exactly as the server wrote it', () => {
    for (const text of [
      'model ratio 15.00, group ratio 1.00',
      'model ratio 8.00, group ratio 1.00, size 1024x1024 (ratio 1.25), 2 images',
      'model ratio 8.00, group ratio 1.00, size 256x256 (ratio 1), 1 image',
      'model ratio 7.50, group ratio 2.00, 120 input characters',
      'new-user gift: 100 quota',
      'gift for using an invite code: 50 quota',
      'gift for inviting alice: 50 quota',
      'two-factor sign-in enabled',
      'two-factor sign-in disabled',
      'two-factor sign-in reset by root',
      'root changed the quota from 100 to 2500',
      'returned 300 quota held by requests that a restart cut off',
      'returned 300 quota held by requests that node a, b cut off',
      'the client left before the answer',
      'the answer billed nothing',
      'the upstream service failed (request id req_1)',
      'the upstream service refused the gateway (request id req_2)',
      'the upstream service is busy, please retry later (request id req_3)',
      'the upstream answer broke off (request id req_4)',
      'the upstream service could not be reached (request id req_5)',
      'the upstream timed out (request id req_6)',
      'the upstream answer stalled (request id req_7)',
      'the upstream is busy, please retry later (request id req_8)',
      'no channel available for model gpt-4o',
      'the quota of this API key is used up',
      'model acme-1 has no price: an administrator must add it to ModelRatio',
      'something else entirely',
    ]) {
      expect(logText(text, quota, english)).toBe(text);
    }
    expect(logText('new-user gift: 100000 quota', dollars, english)).toBe('new-user gift: $0.20 (100000 quota)');
  });

  it('says them in Chinese', async () => {
    await i18nProvider.changeLocale('zh');
    try {
      const chinese = (key: string, options?: Record<string, unknown>) => i18nProvider.translate(key, options);
      expect(logText('model ratio 8.00, group ratio 1.00, size 1024x1024 (ratio 1.25), 2 images', quota, chinese)).toBe(
        '模型倍率 8.00，分组倍率 1.00，尺寸 1024x1024（倍率 1.25），2 张图片',
      );
      expect(logText('gift for inviting alice: 50 quota', quota, chinese)).toBe('邀请 alice 的奖励：50 额度');
      expect(logText('root changed the quota from 100 to 2500', quota, chinese)).toBe('root 将额度从 100 改为 2500');
      expect(logText('the client left before the answer', quota, chinese)).toBe('客户端在收到回答前已断开');
      expect(logText('the upstream service failed (request id req_16b0)', quota, chinese)).toBe('上游服务出错（请求 ID req_16b0）');
      expect(logText('the upstream answer stalled (request id req_7)', quota, chinese)).toBe('上游的回答停滞（请求 ID req_7）');
      // an unknown tail after the ratios stays as written, its amounts converted
      expect(logText('model ratio 1.00, group ratio 1.00, refund 10 quota', dollars, chinese)).toBe(
        '模型倍率 1.00，分组倍率 1.00，refund $0.00002 (10 quota)',
      );
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });
});

describe('the log on a phone', () => {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back after each test, never called
  const original = window.matchMedia;
  afterEach(() => {
    window.matchMedia = original;
  });

  it('folds the filters behind a Filters button, so the rows come first', async () => {
    screenWidth(390);
    serveOwnLogs([row]);
    renderLogs(1);
    await screen.findByText('model ratio 15.00, group ratio 1.00');
    expect(screen.queryByRole('combobox', { name: 'Type' })).toBeNull();
    const toggle = screen.getByRole('button', { name: 'Filters' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    fireEvent.click(toggle);
    expect(await screen.findByRole('combobox', { name: 'Type' })).toBeInTheDocument();
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    fireEvent.click(toggle);
    await expect.poll(() => screen.queryByRole('combobox', { name: 'Type' })).toBeNull();
  });
});
