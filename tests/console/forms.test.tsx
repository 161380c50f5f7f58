// The record forms: quota in dollars (exact both ways), inline
// validation with the spec's messages, titles naming the record, the
// unsaved-changes prompt, and the error state with Retry.
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, Notification, ResourceContextProvider } from 'react-admin';
import { createMemoryRouter, Link, MemoryRouter, Route, RouterProvider, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClientStatus } from '../../common/options';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { StatusProvider } from '../../src/layout/status';
import { dollarsToQuota, quotaInText, quotaToDollars } from '../../src/quota';
import { RedemptionEdit } from '../../src/resources/redemption/RedemptionForms';
import { TokenCreate } from '../../src/resources/token/TokenCreate';
import { TokenEdit } from '../../src/resources/token/TokenEdit';
import { lightTheme } from '../../src/theme';
import { server } from './setup';
import { TOKEN_RECORD } from './fixtures/records';

const inDollars = { display_in_currency: true, quota_per_unit: 500000 } as ClientStatus;
const inQuota = { display_in_currency: false, quota_per_unit: 500000 } as ClientStatus;

const TOKEN = TOKEN_RECORD;

function renderAt(path: string, status: ClientStatus = inDollars) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <StatusProvider load={async () => status}>
        <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
          <Routes>
            <Route path="/token/add" element={<TokenCreate />} />
            <Route path="/token/edit/:id" element={<TokenEdit />} />
            <Route path="/token" element={<p>token list</p>} />
            <Route
              path="/redemption/edit/:id"
              element={
                <ResourceContextProvider value="redemption">
                  <RedemptionEdit />
                </ResourceContextProvider>
              }
            />
          </Routes>
          <Notification />
        </AdminContext>
      </StatusProvider>
    </MemoryRouter>,
  );
}

afterEach(() => vi.restoreAllMocks());

describe('quota in dollars', () => {
  it('converts exactly both ways', () => {
    expect(dollarsToQuota(1.25, 500000)).toBe(625000);
    expect(quotaToDollars(625000, 500000)).toBe(1.25);
    // float noise is rounded away, and one quota is still representable
    expect(dollarsToQuota(0.29, 500000)).toBe(145000);
    expect(dollarsToQuota(quotaToDollars(1, 500000), 500000)).toBe(1);
    for (const quota of [0, 1, 7, 123457, 625000, 99_999_999]) expect(dollarsToQuota(quotaToDollars(quota, 500000), 500000)).toBe(quota);
  });

  it('shows log details in the same unit', () => {
    expect(quotaInText('new-user gift: 500000 quota', inDollars)).toBe('new-user gift: $1.00 (500000 quota)');
    expect(quotaInText('new-user gift: 500000 quota', inQuota)).toBe('new-user gift: 500000 quota');
  });

  it('sends $1.25 typed in the token form as 625000', async () => {
    let posted: Record<string, unknown> | undefined;
    server.use(
      http.post('*/api/token/', async ({ request }) => {
        posted = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ success: true, message: '', data: { ...TOKEN, id: 9, key: 'newkey' } });
      }),
    );
    const user = userEvent.setup();
    renderAt('/token/add');
    expect(await screen.findByRole('heading', { level: 1, name: 'New token' })).toBeInTheDocument();
    await user.type(screen.getByRole('textbox', { name: /Name/ }), 'laptop');
    const quota = await screen.findByRole('spinbutton', { name: /Remaining quota|Remain quota/i });
    // the default 500000 reads as $1 with the raw quota beside it
    await waitFor(() => expect(quota).toHaveValue(1));
    expect(screen.getByText('= 500000 quota (500000 per $1)')).toBeInTheDocument();
    await user.clear(quota);
    await user.type(quota, '1.25');
    expect(await screen.findByText('= 625000 quota (500000 per $1)')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(posted).toBeDefined(), { timeout: 15_000 });
    expect(posted).toMatchObject({ name: 'laptop', remain_quota: 625000 });
    // the dialog with the new key is titled like the other titles, capitalised
    const dialog = await screen.findByRole('dialog', { name: 'Token created' });
    expect(within(dialog).getByDisplayValue('sk-newkey')).toBeInTheDocument();
  });

  it('shows an existing token of 625000 back as $1.25, titled with its name', async () => {
    server.use(http.get('*/api/token/3', () => HttpResponse.json({ success: true, message: '', data: TOKEN })));
    renderAt('/token/edit/3');
    expect(await screen.findByRole('heading', { level: 1, name: 'Edit token · laptop' })).toBeInTheDocument();
    const quota = await screen.findByRole('spinbutton', { name: /quota/i });
    await waitFor(() => expect(quota).toHaveValue(1.25));
    expect(screen.getByText('= 625000 quota (500000 per $1)')).toBeInTheDocument();
  });

  it('keeps whole quota when the status says not to show dollars', async () => {
    server.use(http.get('*/api/token/3', () => HttpResponse.json({ success: true, message: '', data: TOKEN })));
    renderAt('/token/edit/3', inQuota);
    const quota = await screen.findByRole('spinbutton', { name: /quota/i });
    await waitFor(() => expect(quota).toHaveValue(625000));
    expect(screen.queryByText(/per \$1/)).toBeNull();
  });
});

describe('inline validation', () => {
  it("shows the spec's messages under the fields, not only in a toast", async () => {
    let posts = 0;
    server.use(
      http.post('*/api/token/', () => {
        posts += 1;
        return HttpResponse.json({ success: true, message: '', data: TOKEN });
      }),
    );
    const user = userEvent.setup();
    renderAt('/token/add');
    const name = await screen.findByRole('textbox', { name: /Name/ });
    await user.type(screen.getByRole('textbox', { name: /Expires at/ }), 'next tuesday');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('please enter a name', {}, { timeout: 15_000 })).toBeInTheDocument();
    expect(screen.getByText('expiry format error')).toBeInTheDocument();
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(posts).toBe(0);
  });

  it('refuses a redemption quota of zero under the field', async () => {
    server.use(
      http.get('*/api/redemption/4', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: { id: 4, name: 'gift', key: 'k', status: 1, quota: 100000, created_time: 0, redeemed_time: 0 },
        }),
      ),
    );
    const user = userEvent.setup();
    renderAt('/redemption/edit/4', inQuota);
    expect(await screen.findByRole('heading', { level: 1, name: 'Edit redemption code · gift' })).toBeInTheDocument();
    const quota = await screen.findByRole('spinbutton', { name: /quota/i });
    await waitFor(() => expect(quota).toHaveValue(100000));
    await user.clear(quota);
    await user.type(quota, '0');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('quota must be a whole number above 0', {}, { timeout: 15_000 })).toBeInTheDocument();
  });
});

describe('the error state', () => {
  it('offers Retry when a record cannot be loaded, and loads it on Retry', async () => {
    let up = false;
    server.use(
      http.get('*/api/token/3', () => (up ? HttpResponse.json({ success: true, message: '', data: TOKEN }) : HttpResponse.error())),
    );
    const user = userEvent.setup();
    renderAt('/token/edit/3');
    expect(await screen.findByText('This page could not be loaded', {}, { timeout: 15_000 })).toBeInTheDocument();
    up = true;
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByDisplayValue('laptop', {}, { timeout: 15_000 })).toBeInTheDocument();
  });
});

describe('unsaved changes', () => {
  it('asks before leaving a form with edits, and stays when told to', async () => {
    server.use(http.get('*/api/token/3', () => HttpResponse.json({ success: true, message: '', data: TOKEN })));
    const confirm = vi.spyOn(window, 'confirm').mockReturnValue(false);
    const router = createMemoryRouter(
      [
        {
          path: '*',
          element: (
            <StatusProvider load={async () => inDollars}>
              <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
                <Link to="/elsewhere">leave</Link>
                <Routes>
                  <Route path="/token/edit/:id" element={<TokenEdit />} />
                  <Route path="/elsewhere" element={<p>elsewhere</p>} />
                </Routes>
              </AdminContext>
            </StatusProvider>
          ),
        },
      ],
      { initialEntries: ['/token/edit/3'] },
    );
    const user = userEvent.setup();
    render(<RouterProvider router={router} />);
    const name = await screen.findByDisplayValue('laptop');
    await user.type(name, '-2');
    await user.click(screen.getByRole('link', { name: 'leave' }));
    await waitFor(() => expect(confirm).toHaveBeenCalledWith("Some of your changes weren't saved. Are you sure you want to ignore them?"));
    expect(screen.queryByText('elsewhere')).toBeNull();
    expect(screen.getByDisplayValue('laptop-2')).toBeInTheDocument();
  });
});
