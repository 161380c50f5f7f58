// The passkey list of the Personal tab against the exact calls the server
// expects: the list with names and dates, a named new passkey made by the
// browser's dialog (navigator.credentials stubbed as a browser would answer),
// the dialog cancelled, a confirmed removal, and a browser without WebAuthn;
// and the login page's passkey sign-in, alone and as the step after a password.
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PasskeyRecord } from '../../common/records';
import { authProvider } from '../../src/authProvider';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { LoginPage } from '../../src/pages/LoginPage';
import { formatTimestamp } from '../../src/resources/shared/TimestampField';
import { PasskeyPanel } from '../../src/settings/PasskeyPanel';
import { server } from './setup';

const envelope = (data?: unknown) => HttpResponse.json({ success: true, message: '', ...(data === undefined ? {} : { data }) });
const laptop: PasskeyRecord = { id: 4, name: 'Work laptop', created_at: 1_767_000_000, last_used_at: 1_767_100_000, backed_up: false };
const phone: PasskeyRecord = { id: 9, name: 'Phone', created_at: 1_767_200_000, last_used_at: 0, backed_up: true };

function renderPanel() {
  return render(
    <MemoryRouter>
      <AdminContext dataProvider={dataProvider} authProvider={authProvider} i18nProvider={i18nProvider}>
        <PasskeyPanel />
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

/** A browser with WebAuthn whose authenticator answers `create` (and `get`) with `answer`. */
function stubWebAuthn(answer: () => Promise<unknown>) {
  vi.stubGlobal('PublicKeyCredential', function PublicKeyCredential() {});
  Object.defineProperty(navigator, 'credentials', { configurable: true, value: { create: vi.fn(answer), get: vi.fn(answer) } });
}

/** What navigator.credentials.get resolves to for a passkey (its buffers become base64url on the wire). */
const assertion = () =>
  Promise.resolve({
    id: 'AQID',
    rawId: new Uint8Array([1, 2, 3]).buffer,
    type: 'public-key',
    response: {
      clientDataJSON: new Uint8Array([4, 5]).buffer,
      authenticatorData: new Uint8Array([6]).buffer,
      signature: new Uint8Array([7, 8]).buffer,
      userHandle: new Uint8Array([9]).buffer,
    },
    getClientExtensionResults: () => ({}),
    authenticatorAttachment: 'platform',
  });
const signedAssertion = {
  id: 'AQID',
  rawId: 'AQID',
  type: 'public-key',
  response: { clientDataJSON: 'BAU', authenticatorData: 'Bg', signature: 'Bwg', userHandle: 'CQ' },
  clientExtensionResults: {},
  authenticatorAttachment: 'platform',
};

function renderLogin() {
  return render(
    <MemoryRouter initialEntries={['/login']}>
      <AdminContext dataProvider={dataProvider} authProvider={authProvider} i18nProvider={i18nProvider}>
        <Routes>
          <Route path="/login" element={<LoginPage />} />
          <Route path="/" element={<p>home page</p>} />
        </Routes>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
  Reflect.deleteProperty(navigator, 'credentials');
});

describe('the passkey list', () => {
  it('lists each passkey with when it was added and last used, and removes one after a confirmation', async () => {
    let passkeys = [laptop, phone];
    const removed: string[] = [];
    server.use(
      http.get('*/api/user/passkey', () => envelope(passkeys)),
      http.delete('*/api/user/passkey/:id', ({ request, params }) => {
        removed.push(new URL(request.url).pathname);
        passkeys = passkeys.filter((passkey) => String(passkey.id) !== params.id);
        return envelope();
      }),
    );
    renderPanel();
    const list = await screen.findByRole('list', { name: 'Your passkeys' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((item) => item.querySelector('p')?.textContent)).toEqual(['Work laptop', 'Phone']);
    expect(items[0].textContent).toContain(
      `Added ${formatTimestamp(laptop.created_at)} · last used ${formatTimestamp(laptop.last_used_at)}`,
    );
    expect(items[1].textContent).toContain('never used');
    expect(within(items[1]).getByText('Synced')).toBeTruthy();
    // a browser without WebAuthn is told so instead of offered a button that cannot work
    expect(screen.getByText('This browser cannot use passkeys.')).toBeTruthy();

    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Remove passkey Phone' }));
    await screen.findByText('Remove the passkey “Phone”?');
    expect(removed).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Remove' }));
    await screen.findByText('Passkey removed');
    await waitFor(() => expect(screen.queryByText('Phone')).toBeNull());
    expect(removed).toEqual(['/api/user/passkey/9']);
  });

  it('adds a named passkey through the browser’s dialog, and says so when the dialog is cancelled', async () => {
    const bodies: unknown[] = [];
    let passkeys: PasskeyRecord[] = [];
    server.use(
      http.get('*/api/user/passkey', () => envelope(passkeys)),
      http.post('*/api/user/passkey/register/options', () =>
        envelope({
          challenge: 'Y2hhbGxlbmdl',
          rp: { name: 'Switchboard', id: 'localhost' },
          user: { id: 'dXNlcg', name: 'amy', displayName: 'Amy' },
          pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
          excludeCredentials: [],
          authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
        }),
      ),
      http.post('*/api/user/passkey/register/verify', async ({ request }) => {
        bodies.push(await request.json());
        passkeys = [{ ...laptop, name: 'My laptop', last_used_at: 0 }];
        return envelope(passkeys);
      }),
    );
    stubWebAuthn(() =>
      Promise.resolve({
        id: 'AQID',
        rawId: new Uint8Array([1, 2, 3]).buffer,
        type: 'public-key',
        response: {
          clientDataJSON: new Uint8Array([4, 5]).buffer,
          attestationObject: new Uint8Array([6, 7]).buffer,
          getTransports: () => ['internal'],
        },
        getClientExtensionResults: () => ({}),
        authenticatorAttachment: 'platform',
      }),
    );
    renderPanel();
    await screen.findByText('No passkeys yet.');
    const user = userEvent.setup();
    expect(screen.getByRole('button', { name: 'Add a passkey' })).toBeDisabled();
    await user.type(screen.getByLabelText('Passkey name'), '  My laptop ');
    await user.click(screen.getByRole('button', { name: 'Add a passkey' }));
    await screen.findByText('Passkey added');
    expect(await screen.findByText('My laptop')).toBeTruthy();
    expect(bodies).toEqual([
      {
        name: 'My laptop',
        credential: {
          id: 'AQID',
          rawId: 'AQID',
          type: 'public-key',
          response: { clientDataJSON: 'BAU', attestationObject: 'Bgc', transports: ['internal'] },
          clientExtensionResults: {},
          authenticatorAttachment: 'platform',
        },
      },
    ]);
    expect(screen.getByLabelText('Passkey name')).toHaveValue('');

    // the user closes the browser's dialog: nothing is sent, and the name stays for another try
    stubWebAuthn(() => Promise.reject(new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError')));
    await user.type(screen.getByLabelText('Passkey name'), 'Phone');
    await user.click(screen.getByRole('button', { name: 'Add a passkey' }));
    await screen.findByText('The passkey request was cancelled or timed out.');
    expect(bodies).toHaveLength(1);
    expect(screen.getByLabelText('Passkey name')).toHaveValue('Phone');
  });
});

describe('signing in with a passkey', () => {
  const amy = { id: 3, username: 'amy', display_name: 'Amy', role: 1, status: 1 };

  it('signs in with a passkey alone from the login page', async () => {
    const verified: unknown[] = [];
    server.use(
      http.get('*/api/status', () => envelope({})),
      http.post('*/api/passkey/login/options', () =>
        envelope({ challenge: 'Y2hhbGxlbmdl', rpId: 'localhost', allowCredentials: [], userVerification: 'required' }),
      ),
      http.post('*/api/passkey/login/verify', async ({ request }) => {
        verified.push(await request.json());
        return envelope(amy);
      }),
    );
    stubWebAuthn(assertion);
    renderLogin();
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Sign in with a passkey' }));
    await screen.findByText('home page');
    expect(verified).toEqual([{ credential: signedAssertion }]);
    expect(JSON.parse(localStorage.getItem('user')!)).toMatchObject({ username: 'amy' });
  });

  it('offers only the passkey after the password when the account has no authenticator app', async () => {
    const calls: string[] = [];
    server.use(
      http.get('*/api/status', () => envelope({})),
      http.post('*/api/user/login', () =>
        HttpResponse.json({
          success: false,
          message: 'use your passkey (or a code from your authenticator app) to finish signing in',
          code: 'two_factor_required',
          data: { second_factors: ['passkey'] },
        }),
      ),
      http.post('*/api/passkey/login/options', ({ request }) => {
        calls.push(new URL(request.url).pathname);
        return envelope({ challenge: 'Y2hhbGxlbmdl', rpId: 'localhost', allowCredentials: [{ id: 'AQID', type: 'public-key' }] });
      }),
      http.post('*/api/passkey/login/verify', ({ request }) => {
        calls.push(new URL(request.url).pathname);
        return envelope(amy);
      }),
    );
    stubWebAuthn(assertion);
    renderLogin();
    const user = userEvent.setup();
    await user.type(document.querySelector('input[name="username"]') as HTMLInputElement, 'amy');
    await user.type(document.querySelector('input[name="password"]') as HTMLInputElement, 'password-1');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    await screen.findByText('Use your passkey to finish signing in.');
    expect(screen.queryByLabelText('6-digit code')).toBeNull();
    expect(localStorage.getItem('user')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Use a passkey' }));
    await screen.findByText('home page');
    expect(calls).toEqual(['/api/passkey/login/options', '/api/passkey/login/verify']);
  });
});
