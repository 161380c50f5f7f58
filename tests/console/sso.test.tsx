// The single sign-on button on the login page (its text from the status, the
// provider's URL from /api/oauth/oidc/start) and the /oauth/oidc page that
// hands the provider's answer to the server and signs in, or says why not.
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import type { ClientStatus } from '../../common/options';
import { createAuthProvider } from '../../src/authProvider';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { StatusProvider } from '../../src/layout/status';
import { LoginPage } from '../../src/pages/LoginPage';
import { OidcCallbackPage } from '../../src/pages/OidcCallbackPage';
import { server } from './setup';

function renderAt(path: string, status: Partial<ClientStatus>) {
  render(
    <MemoryRouter initialEntries={[path]}>
      <StatusProvider load={() => Promise.resolve(status as ClientStatus)}>
        <AdminContext dataProvider={dataProvider} authProvider={createAuthProvider(dataProvider)} i18nProvider={i18nProvider}>
          <Routes>
            <Route path="/login" element={<LoginPage />} />
            <Route path="/oauth/oidc" element={<OidcCallbackPage />} />
            <Route path="/" element={<p>dashboard</p>} />
          </Routes>
          <Notification />
        </AdminContext>
      </StatusProvider>
    </MemoryRouter>,
  );
}

describe('single sign-on button', () => {
  it('is absent while the server has single sign-on off', async () => {
    renderAt('/login', { oidc: false, oidc_button_text: '' });
    await screen.findByRole('button', { name: 'Log in' });
    // the status has arrived (it is cached as it comes), so the button would show by now
    await waitFor(() => expect(localStorage.getItem('status')).not.toBeNull());
    expect(screen.queryByRole('button', { name: 'Log in with single sign-on' })).toBeNull();
  });

  it("shows the operator's text, and sends the browser to the provider's URL the server hands out", async () => {
    // a URL that differs from the page's only by its fragment: jsdom follows it, where it cannot leave the page
    const authorization = `${window.location.href.split('#')[0]}#provider-authorization`;
    server.use(http.get('*/api/oauth/oidc/start', () => HttpResponse.json({ success: true, message: '', data: authorization })));
    renderAt('/login', { oidc: true, oidc_button_text: 'Sign in with Acme SSO', oidc_only: true });
    expect(await screen.findByText('Sign in with single sign-on. The password form is for the super admin only.')).toBeInTheDocument();
    await userEvent.setup().click(await screen.findByRole('button', { name: 'Sign in with Acme SSO' }));
    await waitFor(() => expect(window.location.hash).toBe('#provider-authorization'));
    window.location.hash = '';
  });
});

describe('/oauth/oidc', () => {
  it("passes the provider's answer on and signs in", async () => {
    let asked = '';
    server.use(
      http.get('*/api/oauth/oidc', ({ request }) => {
        asked = new URL(request.url).search;
        return HttpResponse.json({ success: true, message: '', data: { id: 9, username: 'dave', display_name: 'Dave', role: 10 } });
      }),
    );
    renderAt('/oauth/oidc?code=the-code&state=the-state&iss=https%3A%2F%2Fsso.example.com', { oidc: true });
    expect(await screen.findByText('dashboard')).toBeInTheDocument();
    expect(asked).toBe('?code=the-code&state=the-state&iss=https%3A%2F%2Fsso.example.com');
    expect(JSON.parse(localStorage.getItem('user') ?? '{}')).toMatchObject({ id: 9, username: 'dave' });
  });

  it("shows the server's refusal and goes back to the login page", async () => {
    server.use(
      http.get('*/api/oauth/oidc', () =>
        HttpResponse.json({ success: false, message: 'the sign-in link is invalid or has expired, please start again' }),
      ),
    );
    renderAt('/oauth/oidc?code=old&state=old', { oidc: true });
    expect(await screen.findByText('the sign-in link is invalid or has expired, please start again')).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Log in with single sign-on' })).toBeInTheDocument();
  });
});
