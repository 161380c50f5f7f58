// Two-factor sign-in in the console: the login page's code step (with the
// recovery-code alternative), the enrol/disable panel, and root's reset on the
// user edit page, against the exact calls the server expects.
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { authProvider } from '../../src/authProvider';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { LoginPage } from '../../src/pages/LoginPage';
import { UserTwoFactorReset } from '../../src/resources/user/UserTwoFactorReset';
import { TwoFactorPanel } from '../../src/settings/TwoFactorPanel';
import { server } from './setup';

const amy = { id: 3, username: 'amy', display_name: 'Amy', role: 1, status: 1 };
const envelope = (data?: unknown) => HttpResponse.json({ success: true, message: '', ...(data === undefined ? {} : { data }) });

function renderAt(path: string, element: React.ReactNode) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <AdminContext dataProvider={dataProvider} authProvider={authProvider} i18nProvider={i18nProvider}>
        <Routes>
          <Route path={path.split('?')[0]} element={element} />
          <Route path="/" element={<p>home page</p>} />
        </Routes>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

describe('login with two-factor sign-in', () => {
  it('asks for the code after the password, accepts a recovery code instead, and only then stores the user', async () => {
    const codes: unknown[] = [];
    server.use(
      http.get('*/api/status', () => envelope({})),
      http.post('*/api/user/login', () =>
        HttpResponse.json({
          success: false,
          message: 'enter the code from your authenticator app (or a recovery code) to finish signing in',
          code: 'two_factor_required',
        }),
      ),
      http.post('*/api/user/login/2fa', async ({ request }) => {
        const body = (await request.json()) as { code: string };
        codes.push(body);
        return body.code === 'abcde-fghjk'
          ? envelope({ ...amy, recovery_codes_left: 9 })
          : HttpResponse.json({ success: false, message: 'the code is wrong or was already used', code: 'wrong_two_factor_code' });
      }),
    );
    renderAt('/login', <LoginPage />);
    const user = userEvent.setup();
    await user.type(document.querySelector('input[name="username"]') as HTMLInputElement, 'amy');
    await user.type(document.querySelector('input[name="password"]') as HTMLInputElement, 'password-1');
    await user.click(screen.getByRole('button', { name: 'Log in' }));

    await screen.findByText('Enter the 6-digit code from your authenticator app.');
    expect(localStorage.getItem('user')).toBeNull();
    await user.type(screen.getByLabelText('6-digit code'), '000000');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByText('the code is wrong or was already used');
    expect(localStorage.getItem('user')).toBeNull();

    await user.click(screen.getByRole('button', { name: 'Use a recovery code' }));
    await user.type(screen.getByLabelText('Recovery code'), 'abcde-fghjk');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByText('home page');
    expect(codes).toEqual([{ code: '000000' }, { code: 'abcde-fghjk' }]);
    expect(JSON.parse(localStorage.getItem('user')!)).toMatchObject({ username: 'amy' });
  });

  it('goes back to the password when the code step has expired', async () => {
    server.use(
      http.get('*/api/status', () => envelope({})),
      http.post('*/api/user/login/2fa', () =>
        HttpResponse.json({ success: false, message: 'sign in with your password first', code: 'session_expired' }, { status: 401 }),
      ),
    );
    renderAt('/login?two_factor=1', <LoginPage />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('6-digit code'), '123456');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(document.querySelector('input[name="password"]')).not.toBeNull());
  });
});

describe('two-factor panel', () => {
  it('enrols: QR code and secret, a code turns it on, the recovery codes are shown once; then turns it off with a code', async () => {
    let status = { enabled: false, pending: false, recovery_codes_left: 0, required: false };
    const calls: string[] = [];
    const recoveryCodes = Array.from({ length: 10 }, (_, index) => `aaaa${index}-bbbb${index}`);
    server.use(
      http.get('*/api/user/2fa', () => envelope(status)),
      http.post('*/api/user/2fa/enrol', () => {
        calls.push('enrol');
        status = { ...status, pending: true };
        return envelope({
          secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
          otpauth_url: 'otpauth://totp/Switchboard:amy?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
          qr_code: 'data:image/svg+xml;base64,PHN2Zy8+',
        });
      }),
      http.post('*/api/user/2fa/confirm', async ({ request }) => {
        calls.push(`confirm ${((await request.json()) as { code: string }).code}`);
        status = { enabled: true, pending: false, recovery_codes_left: 10, required: false };
        return envelope({ recovery_codes: recoveryCodes });
      }),
      http.post('*/api/user/2fa/disable', async ({ request }) => {
        calls.push(`disable ${((await request.json()) as { code: string }).code}`);
        status = { enabled: false, pending: false, recovery_codes_left: 0, required: false };
        return envelope();
      }),
    );
    renderAt('/setting', <TwoFactorPanel />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Set up two-factor sign-in' }));
    expect((await screen.findByRole('img', { name: 'QR code for your authenticator app' })).getAttribute('src')).toBe(
      'data:image/svg+xml;base64,PHN2Zy8+',
    );
    expect(screen.getByTestId('two-factor-secret').textContent).toBe('JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP');
    await user.type(screen.getByLabelText('6-digit code'), '123456');
    await user.click(screen.getByRole('button', { name: 'Turn on' }));

    const list = await screen.findByTestId('two-factor-recovery-codes');
    for (const code of recoveryCodes) expect(list.textContent).toContain(code);
    await user.click(screen.getByRole('button', { name: 'I have saved them' }));
    await screen.findByText('10 recovery codes left');
    expect(screen.queryByText(recoveryCodes[0])).toBeNull();

    await user.type(screen.getByLabelText('Code or recovery code'), recoveryCodes[3]);
    await user.click(screen.getByRole('button', { name: 'Turn off' }));
    await screen.findByRole('button', { name: 'Set up two-factor sign-in' });
    expect(calls).toEqual(['enrol', 'confirm 123456', `disable ${recoveryCodes[3]}`]);
  });

  it('offers no way to turn it off when it is required for the role', async () => {
    server.use(http.get('*/api/user/2fa', () => envelope({ enabled: true, pending: false, recovery_codes_left: 1, required: true })));
    renderAt('/setting', <TwoFactorPanel />);
    await screen.findByText('A second factor is required for your account and this is your only one, so it cannot be turned off.');
    expect(screen.getByText('1 recovery code left')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Turn off' })).toBeNull();
  });
});

describe("root's reset on the user edit page", () => {
  it('asks for confirmation, then resets', async () => {
    let enabled = true;
    const resets: string[] = [];
    server.use(
      http.get('*/api/user/7/2fa', () => envelope({ enabled, recovery_codes_left: enabled ? 10 : 0 })),
      http.post('*/api/user/7/2fa/reset', ({ request }) => {
        resets.push(new URL(request.url).pathname);
        enabled = false;
        return envelope({ removed: true });
      }),
    );
    renderAt('/user/edit/7', <UserTwoFactorReset id="7" />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Reset two-factor sign-in' }));
    await screen.findByText('Reset two-factor sign-in?');
    expect(resets).toEqual([]);
    const dialog = screen.getByRole('dialog');
    await user.click(dialog.querySelector('button:last-of-type') as HTMLButtonElement);
    await screen.findByText('Two-factor sign-in reset');
    expect(resets).toEqual(['/api/user/7/2fa/reset']);
    await waitFor(() => expect(screen.getByRole('button', { name: 'Reset two-factor sign-in' }).hasAttribute('disabled')).toBe(true));
  });
});
