// The settings page as the console tests open it: signed in as root (or the
// given role), on one of its tabs; the option list it reads and saves; and the
// answers the Personal tab, which opens first, needs (no passkeys, two-factor
// sign-in off).
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter } from 'react-router-dom';
import { OPTION_KEYS, OPTION_SPECS } from '../../common/options';
import { i18nProvider } from '../../src/i18n';
import SettingPage from '../../src/settings/SettingPage';

/** Renders the page and clicks the tab named `name`; resolves to the user-event session. */
export async function openSettingTab(name: string, role = 100) {
  localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', role }));
  render(
    <MemoryRouter>
      <AdminContext i18nProvider={i18nProvider}>
        <SettingPage />
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
  const user = userEvent.setup();
  await user.click(await screen.findByRole('tab', { name }));
  return user;
}

/**
 * GET /api/option/: every option at its default but `overrides`, the secrets
 * empty and set only if named in `secretsSet`; PUT /api/option/: each body
 * pushed onto `puts`.
 */
export function optionHandlers(puts: Array<{ key: string; value: string }>, overrides: Record<string, string>, secretsSet: string[] = []) {
  return [
    http.get('*/api/option/', () =>
      HttpResponse.json({
        success: true,
        message: '',
        data: OPTION_KEYS.map((key) =>
          OPTION_SPECS[key].kind === 'secret'
            ? { key, value: '', set: secretsSet.includes(key) }
            : { key, value: overrides[key] ?? OPTION_SPECS[key].default },
        ),
      }),
    ),
    http.put('*/api/option/', async ({ request }) => {
      puts.push((await request.json()) as { key: string; value: string });
      return HttpResponse.json({ success: true, message: '' });
    }),
  ];
}

/** The Personal tab's requests: its passkey list (empty) and its two-factor status (off). */
export function personalTabHandlers() {
  return [
    http.get('*/api/user/passkey', () => HttpResponse.json({ success: true, message: '', data: [] })),
    http.get('*/api/user/2fa', () =>
      HttpResponse.json({ success: true, message: '', data: { enabled: false, pending: false, recovery_codes_left: 0, required: false } }),
    ),
  ];
}
