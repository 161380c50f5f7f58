// The register page's validation messages and the invite code it remembers.
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { RegisterPage } from '../../src/pages/RegisterPage';
import { server } from './setup';

function renderRegister(path = '/register') {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider}>
        <Routes>
          <Route path="/register" element={<RegisterPage />} />
          <Route path="/login" element={<p>login page</p>} />
        </Routes>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

async function fill(fields: Record<string, string>) {
  const user = userEvent.setup();
  for (const [name, value] of Object.entries(fields)) {
    await user.type(document.querySelector(`input[name="${name}"]`) as HTMLInputElement, value);
  }
  await user.click(screen.getByRole('button', { name: 'Register' }));
}

describe('RegisterPage', () => {
  it('refuses a password shorter than 8 characters', async () => {
    renderRegister();
    await fill({ username: 'amy', password: 'short', password2: 'short' });
    expect(await screen.findByText('password length must not be less than 8')).toBeInTheDocument();
  });

  it('refuses mismatched passwords', async () => {
    renderRegister();
    await fill({ username: 'amy', password: 'password-1', password2: 'password-2' });
    expect(await screen.findByText('the two passwords entered do not match')).toBeInTheDocument();
  });

  it('stores the aff code, sends it with the registration and goes to /login', async () => {
    let received: Record<string, unknown> | undefined;
    server.use(
      http.post('*/api/user/register', async ({ request }) => {
        received = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ success: true, message: '' });
      }),
    );
    renderRegister('/register?aff=QX7p');
    await fill({ username: 'amy', password: 'password-1', password2: 'password-1' });
    expect(await screen.findByText('login page')).toBeInTheDocument();
    expect(localStorage.getItem('aff')).toBe('QX7p');
    expect(received).toMatchObject({ username: 'amy', password: 'password-1', password2: 'password-1', aff_code: 'QX7p' });
  });

  it('shows the server message when registration fails', async () => {
    server.use(http.post('*/api/user/register', () => HttpResponse.json({ success: false, message: 'username already taken' })));
    renderRegister();
    await fill({ username: 'amy', password: 'password-1', password2: 'password-1' });
    expect(await screen.findByText('username already taken')).toBeInTheDocument();
  });
});
