// The log page: which endpoints it reads for admins and for users, the default
// window, the stat line and the extra columns.
import { cleanup, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { LogList } from '../../src/resources/log/LogList';
import { lightTheme } from '../../src/theme';
import { server } from './setup';

const row = {
  id: 0, user_id: 2, created_at: 1700000000, type: 2, content: 'model ratio 15.00, group ratio 1.00', username: 'bob', token_name: 'laptop',
  model_name: 'gpt-4', quota: 1500, prompt_tokens: 12, completion_tokens: 30, channel_id: 3, elapsed_ms: 1234, is_stream: true, estimated: true,
};

/** The pickers' suggestions: the caller's tokens, the users, the channels, the models. */
function pickerSources() {
  server.use(
    http.get('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: [{ id: 5, name: 'laptop' }, { id: 6, name: 'phone' }] })),
    http.get('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: [{ id: 2, username: 'bob' }] })),
    http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [{ id: 3, name: 'azure-east' }] })),
    http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [{ id: 'gpt-4' }] })),
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
  it('reads a user\'s own logs and stat over epoch 0 .. an hour ahead, without the username filter', async () => {
    server.use(
      http.get('*/api/log/self/', () => HttpResponse.json({ success: true, message: '', data: [row, { ...row, content: 'second', estimated: false, is_stream: false }] })),
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
  }, 30_000);

  it('reads everyone\'s logs for an admin, with username and channel columns', async () => {
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
    expect(await screen.findByText('Token: laptop', undefined, { timeout: 4000 })).toBeInTheDocument();
    await expect.poll(() => seen.some((url) => url.pathname === '/api/log/' && url.searchParams.get('token_name') === 'laptop')).toBe(true);
    screen.getByRole('button', { name: '7 days' }).click();
    expect(await screen.findByText(/^From: /, undefined, { timeout: 4000 })).toBeInTheDocument();
    const weekAgo = Math.floor(Date.now() / 1000) - 7 * 86_400;
    await expect.poll(() => seen.some((url) => url.pathname === '/api/log/' && Math.abs(Number(url.searchParams.get('start_timestamp')) - weekAgo) < 60)).toBe(true);
    screen.getByRole('button', { name: 'Clear all' }).click();
    await expect.poll(() => screen.queryByTestId('active-filters')).toBeNull();
  }, 30_000);

  it('shows the request id in a log\'s details, in English and in Chinese, and nothing for a log without one', async () => {
    server.use(
      http.get('*/api/log/self/', () =>
        HttpResponse.json({ success: true, message: '', data: [{ ...row, id: 7, request_id: 'req_3f2a_1k' }, { ...row, id: 8, content: 'topped up', type: 1, request_id: null }] }),
      ),
      http.get('*/api/log/self/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 0, token: 0 } })),
    );
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
  }, 30_000);
});
