// The signed-in user's own pages: the account form with its bound accounts
// read-only.
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { createAuthProvider } from '../../src/authProvider';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
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
