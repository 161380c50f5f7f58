// Accessibility beyond the forms: AA contrast of the palettes, <html lang> and the
// per-route title, the language button's name holding its visible text, the manage actions a role can use, the user-disable
// confirmation, and the lists' error state with Retry.
import { getContrastRatio } from '@mui/material/styles';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import {
  AdminContext,
  AutocompleteArrayInput,
  memoryStore,
  Notification,
  PasswordInput,
  ResourceContextProvider,
  SearchInput,
  SelectInput,
  SimpleForm,
  TextInput,
  useSetLocale,
} from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it, vi } from 'vitest';
import { allowedManageActions } from '../../common/roles';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider, LOCALE_STORAGE_KEY } from '../../src/i18n';
import { DocumentMeta, htmlLang, pageTitleKey } from '../../src/layout/DocumentMeta';
import { LanguageSwitch } from '../../src/layout/LanguageSwitch';
import { PALETTE } from '../../src/resources/shared/palette';
import { SwitchInput } from '../../src/resources/shared/SwitchInput';
import { ChannelCreate } from '../../src/resources/channel/ChannelCreate';
import { TokenCreate } from '../../src/resources/token/TokenCreate';
import { UserList } from '../../src/resources/user/UserList';
import SettingPage from '../../src/settings/SettingPage';
import { darkTheme, lightTheme } from '../../src/theme';
import { server } from './setup';

const AA = 4.5;

describe('contrast', () => {
  it('keeps every text colour of both themes at AA on the surfaces it is drawn on', () => {
    for (const theme of [lightTheme, darkTheme]) {
      const palette = theme.palette as Record<string, { main: string } | Record<string, string>>;
      const paper = (palette.background as Record<string, string>).paper;
      const page = (palette.background as Record<string, string>).default;
      for (const name of ['primary', 'secondary', 'warning', 'info', 'success', 'error']) {
        const main = (palette[name] as { main: string }).main;
        expect(getContrastRatio(main, paper), `${theme.palette?.mode} ${name} on paper`).toBeGreaterThanOrEqual(AA);
        expect(getContrastRatio(main, page), `${theme.palette?.mode} ${name} on the page`).toBeGreaterThanOrEqual(AA);
      }
    }
  });

  it("draws the form toolbar's red Delete at AA on the toolbar's grey, light and dark", () => {
    for (const theme of [lightTheme, darkTheme]) {
      const toolbar = (theme.components as { RaToolbar: { styleOverrides: { root: { backgroundColor: string } } } }).RaToolbar
        .styleOverrides.root.backgroundColor;
      const error = (theme.palette as { error: { main: string } }).error.main;
      expect(getContrastRatio(error, toolbar), `${theme.palette?.mode} Delete on the toolbar`).toBeGreaterThanOrEqual(AA);
    }
  });

  it("was failing before: the orange action text and white on MUI's info blue", () => {
    expect(getContrastRatio('#ed6c02', '#fff')).toBeLessThan(AA);
    expect(getContrastRatio((lightTheme.palette as { warning: { main: string } }).warning.main, '#fff')).toBeGreaterThanOrEqual(AA);
  });

  it('draws the named badge colours with AA text', () => {
    for (const [name, colour] of Object.entries(PALETTE)) {
      const text = ['yellow', 'olive'].includes(name) ? 'rgba(0, 0, 0, 0.87)' : '#fff';
      expect(getContrastRatio(colour, text === '#fff' ? '#fff' : '#212121'), name).toBeGreaterThanOrEqual(AA);
    }
  });
});

describe('document language and title', () => {
  it('maps routes to titles and locales to languages', () => {
    expect(pageTitleKey('/token')).toBe('app.page_title.token');
    expect(pageTitleKey('/token/edit/7')).toBe('app.page_title.token_edit');
    expect(pageTitleKey('/user/edit')).toBe('app.page_title.user_self_edit');
    expect(pageTitleKey('/nowhere')).toBeNull();
    expect(htmlLang('zh')).toBe('zh-CN');
    expect(htmlLang('en')).toBe('en');
  });

  it('sets document.title and <html lang>, following the locale', async () => {
    localStorage.setItem('system_name', 'Acme');
    let setLocale: (locale: string) => void = () => undefined;
    function LocaleHandle() {
      setLocale = useSetLocale();
      return null;
    }
    render(
      <MemoryRouter initialEntries={['/token']}>
        <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
          <DocumentMeta />
          <LocaleHandle />
        </AdminContext>
      </MemoryRouter>,
    );
    await waitFor(() => expect(document.title).toBe('Tokens · Acme'));
    expect(document.documentElement.lang).toBe('en');
    act(() => setLocale('zh'));
    await waitFor(() => expect(document.documentElement.lang).toBe('zh-CN'));
    await waitFor(() => expect(document.title).toBe('令牌 · Acme'));
    act(() => setLocale('en'));
  });
});

describe('label in name (WCAG 2.5.3)', () => {
  /** True when the accessible name (as testing-library computes it) holds the element's visible text. */
  const nameHoldsText = (name: string, element: Element) => {
    const text = (element.textContent ?? '').trim();
    return text !== '' && name.includes(text);
  };

  it('names the language button by the language it shows, then what it is for, in English and in Chinese', async () => {
    localStorage.removeItem(LOCALE_STORAGE_KEY);
    render(
      <MemoryRouter>
        <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
          <LanguageSwitch />
        </AdminContext>
      </MemoryRouter>,
    );
    const english = await screen.findByRole('button', { name: 'English, Language' });
    expect(english).toHaveTextContent(/^English$/);
    expect(screen.getByRole('button', { name: nameHoldsText })).toBe(english);
    await userEvent.click(english);
    await userEvent.click(await screen.findByRole('menuitem', { name: '中文' }));
    const chinese = await screen.findByRole('button', { name: '中文, 语言' });
    expect(chinese).toHaveTextContent(/^中文$/);
    expect(screen.getByRole('button', { name: nameHoldsText })).toBe(chinese);
    await userEvent.click(chinese);
    await userEvent.click(await screen.findByRole('menuitem', { name: 'English' }));
    expect(await screen.findByRole('button', { name: 'English, Language' })).toBeInTheDocument();
    localStorage.removeItem(LOCALE_STORAGE_KEY);
  });
});

describe('manage actions by role', () => {
  const user = { role: 1, status: 1 };
  const banned = { role: 1, status: 2 };
  const admin = { role: 10, status: 1 };
  const root = { role: 100, status: 1 };
  it('offers what the server would accept', () => {
    expect(allowedManageActions(100, user)).toEqual(['promote', 'disable', 'delete']);
    expect(allowedManageActions(100, banned)).toEqual(['promote', 'enable', 'delete']);
    expect(allowedManageActions(100, admin)).toEqual(['demote', 'disable', 'delete']);
    // an admin manages common users only, and never promotes
    expect(allowedManageActions(10, user)).toEqual(['disable', 'delete']);
    expect(allowedManageActions(10, admin)).toEqual([]);
    expect(allowedManageActions(100, root)).toEqual([]);
    expect(allowedManageActions(1, user)).toEqual([]);
  });
});

const USERS = [
  {
    id: 1,
    username: 'root',
    display_name: 'Root',
    email: '',
    group: 'default',
    quota: 0,
    used_quota: 0,
    request_count: 0,
    role: 100,
    status: 1,
  },
  {
    id: 2,
    username: 'dana',
    display_name: 'Dana',
    email: '',
    group: 'default',
    quota: 0,
    used_quota: 0,
    request_count: 0,
    role: 10,
    status: 1,
  },
  {
    id: 3,
    username: 'carol',
    display_name: 'Carol',
    email: '',
    group: 'default',
    quota: 0,
    used_quota: 0,
    request_count: 0,
    role: 1,
    status: 1,
  },
];

function renderUsers() {
  return render(
    <MemoryRouter initialEntries={['/user']}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="user">
          <Routes>
            <Route path="/user" element={<UserList />} />
          </Routes>
        </ResourceContextProvider>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

describe('the user list', () => {
  it('shows an admin only the actions that can succeed, and asks before disabling', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'dana', role: 10 }));
    const managed: unknown[] = [];
    server.use(
      http.get('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: USERS })),
      http.post('*/api/user/manage', async ({ request }) => {
        managed.push(await request.json());
        return HttpResponse.json({ success: true, message: '', data: { role: 1, status: 2 } });
      }),
    );
    const user = userEvent.setup();
    renderUsers();
    const carol = (await screen.findByText('carol')).closest('tr') as HTMLElement;
    const dana = screen.getByText('dana').closest('tr') as HTMLElement;
    const root = screen.getByText('root').closest('tr') as HTMLElement;
    expect(within(carol).queryByRole('button', { name: 'Promote' })).toBeNull();
    expect(within(dana).queryAllByRole('button')).toEqual([]);
    // the super admin's row shows its actions, every one disabled
    const rootButtons = within(root).queryAllByRole('button');
    expect(rootButtons.map((button) => button.getAttribute('aria-label'))).toEqual(['Disable', 'Edit', 'More actions']);
    for (const name of ['Disable', 'Edit']) expect(within(root).getByRole('button', { name })).toBeDisabled();

    await user.click(await within(carol).findByRole('button', { name: 'Disable' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/Disable this user\?/)).toBeInTheDocument();
    expect(managed).toEqual([]);
    await user.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(managed).toEqual([{ username: 'carol', action: 'disable' }]));
  });

  it('shows an error state with Retry when the API is unreachable', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', role: 100 }));
    let up = false;
    server.use(http.get('*/api/user/', () => (up ? HttpResponse.json({ success: true, message: '', data: USERS }) : HttpResponse.error())));
    const user = userEvent.setup();
    renderUsers();
    expect(await screen.findByText('This page could not be loaded', {}, { timeout: 15_000 })).toBeInTheDocument();
    up = true;
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('carol', {}, { timeout: 15_000 })).toBeInTheDocument();
  });
});

describe('MUI 9 props', () => {
  it("lets no MUI 5 input prop reach the DOM from react-admin's inputs or our switch", async () => {
    const errors = vi.spyOn(console, 'error');
    render(
      <MemoryRouter>
        <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
          <ResourceContextProvider value="token">
            <SimpleForm onSubmit={() => undefined}>
              <SearchInput source="q" />
              <TextInput source="name" />
              <PasswordInput source="password" />
              <SelectInput source="status" choices={[{ id: 1, name: 'one' }]} />
              <AutocompleteArrayInput source="models" choices={[{ id: 'gpt-4', name: 'gpt-4' }]} />
              <SwitchInput source="unlimited_quota" />
            </SimpleForm>
          </ResourceContextProvider>
        </AdminContext>
      </MemoryRouter>,
    );
    expect(await screen.findByRole('textbox', { name: 'Name' })).toBeInTheDocument();
    expect(screen.getByRole('switch', { name: 'Unlimited quota' })).not.toBeChecked();
    const leaks = errors.mock.calls.map((call) => call.map(String).join(' ')).filter((text) => /React does not recognize/.test(text));
    errors.mockRestore();
    expect(leaks).toEqual([]);
  });
});

/** Every heading's level in document order; a level may go one deeper at a time, never skip. */
function skippedHeadings(): string[] {
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((heading) => ({
    level: Number(heading.tagName[1]),
    text: heading.textContent ?? '',
  }));
  return headings.flatMap((heading, index) => {
    const previous = index === 0 ? 0 : headings[index - 1].level;
    return heading.level > previous + 1 ? [`h${heading.level} "${heading.text}" after h${previous}`] : [];
  });
}

describe('heading order', () => {
  const pages: Array<[string, string, () => React.ReactElement, string]> = [
    ['the channel form', '/channel/add', () => <ChannelCreate />, 'Models and routing'],
    ['the token form', '/token/add', () => <TokenCreate />, 'Restrictions (optional)'],
    ['the settings page', '/setting', () => <SettingPage />, 'System access token'],
  ];
  for (const [name, path, page, subheading] of pages) {
    it(`skips no level on ${name}: h1, then h2`, async () => {
      localStorage.setItem('user', JSON.stringify({ id: 2, username: 'amy', role: 1 }));
      server.use(
        http.get('*/api/channel/models', () => HttpResponse.json({ object: 'list', data: [{ id: 'gpt-4' }] })),
        http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
        http.get('*/api/status', () => HttpResponse.json({ success: true, message: '', data: {} })),
        // the Personal tab's passkey list
        http.get('*/api/user/passkey', () => HttpResponse.json({ success: true, message: '', data: [] })),
        http.get('*/api/user/2fa', () =>
          HttpResponse.json({
            success: true,
            message: '',
            data: { enabled: false, pending: false, recovery_codes_left: 0, required: false },
          }),
        ),
      );
      render(
        <MemoryRouter initialEntries={[path]}>
          <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
            <ResourceContextProvider value={path.split('/')[1]}>
              <Routes>
                <Route path={path} element={page()} />
              </Routes>
            </ResourceContextProvider>
          </AdminContext>
        </MemoryRouter>,
      );
      expect(await screen.findByRole('heading', { level: 2, name: subheading })).toBeInTheDocument();
      expect(screen.getAllByRole('heading', { level: 1 })).toHaveLength(1);
      expect(skippedHeadings()).toEqual([]);
    });
  }
});
