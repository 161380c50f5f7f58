// The signed-in user's own pages: the account form with its bound accounts
// read-only, and the login form (a refused password marks its fields; a
// sign-in lands on the dashboard, its success notice gone within moments).
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { createAuthProvider } from '../../src/authProvider';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { NOTICE_DURATIONS } from '../../src/layout/notice';
import { LoginPage } from '../../src/pages/LoginPage';
import UserSelfEditPage from '../../src/pages/UserSelfEditPage';
import { server } from './setup';

const self = {
  id: 7,
  username: 'amy',
  display_name: 'Amy',
  email: 'amy@example.com',
  github_id: 'amy-gh',
  wechat_id: 'wx-amy',
  role: 1,
  status: 1,
  quota: 0,
  used_quota: 0,
  request_count: 0,
  group: 'default',
};

function renderAt(path: string) {
  render(
    <MemoryRouter initialEntries={[path]}>
      <AdminContext dataProvider={dataProvider} authProvider={createAuthProvider(dataProvider)} i18nProvider={i18nProvider}>
        <Routes>
          <Route path="/login" element={<LoginPage />} />
          <Route path="/user/edit" element={<UserSelfEditPage />} />
          <Route path="/" element={<p>dashboard</p>} />
        </Routes>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

const input = (name: string) => document.querySelector(`input[name="${name}"]`) as HTMLInputElement;

describe('own account form', () => {
  it('shows the GitHub id, WeChat id and e-mail read-only, and does not send them', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 7, username: 'amy', role: 1 }));
    let sent: Record<string, unknown> | undefined;
    server.use(
      http.get('*/api/user/self', () => HttpResponse.json({ success: true, message: '', data: self })),
      http.put('*/api/user/self', async ({ request }) => {
        sent = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ success: true, message: '' });
      }),
    );
    renderAt('/user/edit');
    const user = userEvent.setup();
    await waitFor(() => expect(input('github_id')).toHaveValue('amy-gh'));
    for (const [label, value] of [
      ['GitHub account', 'amy-gh'],
      ['WeChat account', 'wx-amy'],
      ['E-mail', 'amy@example.com'],
    ]) {
      const field = screen.getByLabelText(label);
      expect(field).toHaveValue(value);
      expect(field).toHaveAttribute('readonly');
    }
    await user.type(input('email'), 'x');
    expect(input('email')).toHaveValue('amy@example.com');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent).toEqual({ username: 'amy', display_name: 'Amy' }));
  });
});

describe('own account budget', () => {
  it('shows the budget an admin set on the account, with what was spent of it this period; nothing without one', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 7, username: 'amy', role: 1 }));
    const budgeted = {
      ...self,
      budget_period: 'day',
      budget_quota: 2_500_000,
      budget_usage: { spent: 600_000, period_start: 1_799_913_600, resets_at: 1_800_000_000 },
    };
    server.use(http.get('*/api/user/self', () => HttpResponse.json({ success: true, message: '', data: budgeted })));
    renderAt('/user/edit');
    const shown = await screen.findByTestId('own-budget');
    expect(shown.textContent).toMatch(/^Your budget:.+ \/ .+ a day$/);
    cleanup();
    server.use(
      http.get('*/api/user/self', () =>
        HttpResponse.json({ success: true, message: '', data: { ...self, budget_period: '', budget_quota: 0 } }),
      ),
    );
    renderAt('/user/edit');
    await waitFor(() => expect(input('github_id')).toHaveValue('amy-gh'));
    expect(screen.queryByTestId('own-budget')).toBeNull();
  });
});

describe('login form', () => {
  it('marks the username and password fields with the reason of a refused sign-in, until they change', async () => {
    server.use(
      http.post('*/api/user/login', () =>
        HttpResponse.json({ success: false, message: 'username or password is wrong', code: 'wrong_credentials' }),
      ),
    );
    renderAt('/login');
    const user = userEvent.setup();
    await user.type(input('username'), 'amy');
    await user.type(input('password'), 'not-the-password');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    const password = screen.getByLabelText(/^Password/);
    await waitFor(() => expect(password).toHaveAttribute('aria-invalid', 'true'));
    expect(input('username')).toHaveAttribute('aria-invalid', 'true');
    expect(password).toHaveAccessibleDescription('username or password is wrong');
    // under the field, not only in a toast
    expect(screen.queryByRole('alert')).toBeNull();
    await user.type(input('password'), 'x');
    expect(password).toHaveAttribute('aria-invalid', 'false');
    expect(screen.queryByText('username or password is wrong')).toBeNull();
  });

  it('lands on the dashboard after a sign-in; the "login successful!" notice goes by itself and is not left over it', async () => {
    server.use(http.post('*/api/user/login', () => HttpResponse.json({ success: true, message: '', data: self })));
    renderAt('/login');
    const user = userEvent.setup();
    await user.type(input('username'), 'amy');
    await user.type(input('password'), 'the-password');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    expect(await screen.findByText('dashboard')).toBeInTheDocument();
    // the spec's success notice, briefly: it hides itself within its short success duration
    expect(await screen.findByText('login successful!')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByText('login successful!')).toBeNull(), { timeout: NOTICE_DURATIONS.success + 2000 });
  });
});
