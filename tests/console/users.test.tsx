// Manage users: role labels in both languages (list, filter), the super
// admin's row, whose manage actions are all shown disabled, each user's budget
// beside the quota, and the one-step create (group, quota and budget).
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { messages } from './messages';
import { UserList } from '../../src/resources/user/UserList';
import { UserCreate } from '../../src/resources/user/UserForms';
import { Route, Routes } from 'react-router-dom';
import { withStatus } from './fixtures/records';
import { lightTheme } from '../../src/theme';
import { server } from './setup';

const user = (id: number, username: string, role: number) => ({
  id,
  username,
  display_name: '',
  email: '',
  group: 'default',
  quota: 100,
  used_quota: 0,
  request_count: 0,
  role,
  status: 1,
});
const users = [user(3, 'carol', 1), user(2, 'bob', 10), user(1, 'root', 100)];

function renderUsers() {
  localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
  server.use(http.get('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: users })));
  render(
    <MemoryRouter initialEntries={['/user']}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="user">
          <UserList />
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
}

const rowOf = async (name: string) => (await screen.findByText(name)).closest('tr') as HTMLElement;

describe('user list', () => {
  it('labels role 1 "Ordinary user" in the rows and the role filter, and "普通用户" in Chinese', async () => {
    renderUsers();
    expect(within(await rowOf('carol')).getByText('Ordinary user')).toBeInTheDocument();
    expect(within(await rowOf('bob')).getByText('Admin')).toBeInTheDocument();
    expect(within(await rowOf('root')).getByText('Super admin')).toBeInTheDocument();
    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Role' }));
    const options = await screen.findByRole('listbox');
    expect(within(options).getByRole('option', { name: 'Ordinary user' })).toBeInTheDocument();
    // the same key labels the chips, the filter's choices and its chip; Chinese names it 普通用户
    expect((messages.zh as unknown as { status: { role: Record<string, string> } }).status.role).toMatchObject({
      user: '普通用户',
      admin: '管理员',
      root: '超级管理员',
    });
  });

  it("shows the super admin's manage actions disabled, and the others' enabled", async () => {
    renderUsers();
    const root = await rowOf('root');
    for (const name of ['Disable', 'Edit']) expect(within(root).getByRole('button', { name })).toBeDisabled();
    fireEvent.click(within(root).getByRole('button', { name: 'More actions' }));
    const menu = await screen.findByRole('menu');
    for (const name of ['Promote', 'Demote', 'Delete'])
      expect(within(menu).getByRole('menuitem', { name })).toHaveAttribute('aria-disabled', 'true');
    fireEvent.keyDown(menu, { key: 'Escape' });
    const carol = await rowOf('carol');
    for (const name of ['Disable', 'Edit']) expect(within(carol).getByRole('button', { name })).toBeEnabled();
  });
});

describe('the budget in the user list', () => {
  const budgeted = [
    { ...user(7, 'dora', 1), quota: 5_000_000, budget_period: 'month', budget_quota: 2_500_000 },
    { ...user(6, 'ed', 1), budget_period: 'day', budget_quota: 1500 },
    { ...user(5, 'fay', 1), budget_period: '', budget_quota: 0 },
  ];
  const renderBudgets = (inCurrency: boolean) => {
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    server.use(http.get('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: budgeted })));
    render(
      <MemoryRouter initialEntries={['/user']}>
        {withStatus(
          <ResourceContextProvider value="user">
            <UserList />
          </ResourceContextProvider>,
          inCurrency,
        )}
      </MemoryRouter>,
    );
  };
  const budgetOf = async (name: string) => within(await rowOf(name)).getByTestId('user-budget').textContent;

  it('shows each budget beside the quota in dollars, and a dash without one', async () => {
    renderBudgets(true);
    expect(await budgetOf('dora')).toBe('$5.00 / month');
    expect(await budgetOf('ed')).toBe('$0.0030 / day');
    expect(await budgetOf('fay')).toBe('—');
    // beside the quota: in the same statistics cell, after it
    const cell = within(await rowOf('dora')).getByTestId('user-budget').parentElement!;
    expect(cell.textContent).toMatch(/^\$10\.00\$5\.00 \/ month/);
  });

  it('shows the budget in quota units when the operator chose them', async () => {
    renderBudgets(false);
    expect(await budgetOf('dora')).toBe('2.5M / month');
    expect(await budgetOf('ed')).toBe('1500 / day');
  });
});

describe('creating a user', () => {
  /** The create page with the groups GroupRatio names, the quota for new users, and the create kept (`sent.body`). */
  function renderCreate(inCurrency: boolean) {
    const sent: { body?: Record<string, unknown> } = {};
    server.use(
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['team', 'vip'] })),
      http.get('*/api/option/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            { key: 'QuotaForNewUser', value: '1000000' },
            { key: 'QuotaPerUnit', value: '500000' },
          ],
        }),
      ),
      http.post('*/api/user/', async ({ request }) => {
        sent.body = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ success: true, message: '' });
      }),
    );
    render(
      <MemoryRouter initialEntries={['/user/add']}>
        {withStatus(
          <Routes>
            <Route path="/user/add" element={<UserCreate />} />
            <Route path="/user" element={<p>user list</p>} />
          </Routes>,
          inCurrency,
        )}
      </MemoryRouter>,
    );
    return sent;
  }

  it('sets quota in dollars, a group that exists and a budget in one step', async () => {
    const sent = renderCreate(true);
    const user = userEvent.setup();
    const quota = await screen.findByRole('spinbutton', { name: 'Remaining quota' });
    // honest default: the quota for new users ($2 at 500000 per dollar) is filled in
    await waitFor(() => expect(quota).toHaveValue(2));
    await user.type(screen.getByRole('textbox', { name: /Username/ }), 'dora');
    await user.type(screen.getByLabelText(/Password/), 'password-1');
    await user.click(screen.getByRole('combobox', { name: /Group/ }));
    const groups = await screen.findByRole('listbox');
    expect(
      within(groups)
        .getAllByRole('option')
        .map((option) => option.textContent),
    ).toEqual(['default', 'team', 'vip']);
    await user.click(within(groups).getByRole('option', { name: 'team' }));
    await user.clear(quota);
    await user.type(quota, '10');
    await user.click(screen.getByRole('combobox', { name: /Budget period/ }));
    await user.click(await screen.findByRole('option', { name: 'Per month (from the 1st)' }));
    await user.type(screen.getByRole('spinbutton', { name: /Budget per period/ }), '5');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent.body).toBeDefined(), { timeout: 15_000 });
    expect(sent.body).toEqual({
      username: 'dora',
      display_name: '',
      password: 'password-1',
      group: 'team',
      quota: 5_000_000,
      budget_period: 'month',
      budget_quota: 2_500_000,
    });
    expect(await screen.findByText('user list')).toBeInTheDocument();
  });

  it('sends the quota for new users, the default group and no budget when left as they are (quota units)', async () => {
    const sent = renderCreate(false);
    const user = userEvent.setup();
    const quota = await screen.findByRole('spinbutton', { name: 'Remaining quota' });
    await waitFor(() => expect(quota).toHaveValue(1_000_000));
    expect(screen.getByText(/Filled in with the quota for new users/)).toBeInTheDocument();
    expect(screen.getByRole('combobox', { name: /Group/ })).toHaveTextContent('default');
    await user.type(screen.getByRole('textbox', { name: /Username/ }), 'ed');
    await user.type(screen.getByLabelText(/Password/), 'password-1');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent.body).toBeDefined(), { timeout: 15_000 });
    expect(sent.body).toMatchObject({ username: 'ed', group: 'default', quota: 1_000_000, budget_period: '', budget_quota: 0 });
  });

  it('refuses a negative quota and a budget without an amount before sending anything', async () => {
    const sent = renderCreate(false);
    const user = userEvent.setup();
    const quota = await screen.findByRole('spinbutton', { name: 'Remaining quota' });
    await waitFor(() => expect(quota).toHaveValue(1_000_000));
    await user.type(screen.getByRole('textbox', { name: /Username/ }), 'fay');
    await user.type(screen.getByLabelText(/Password/), 'password-1');
    await user.clear(quota);
    await user.type(quota, '-5');
    await user.click(screen.getByRole('combobox', { name: /Budget period/ }));
    await user.click(await screen.findByRole('option', { name: 'Per day' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('quota must be a whole number, 0 or more')).toBeInTheDocument();
    expect(await screen.findByText('a budget needs an amount above 0')).toBeInTheDocument();
    expect(sent.body).toBeUndefined();
  });

  it('has the create form and budget words in English and Chinese', () => {
    const read = (locale: 'en' | 'zh', path: string) =>
      path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], messages[locale]);
    for (const path of ['app.user.group_pick_help', 'app.user.quota_help', 'app.user.budget_month', 'resources.user.fields.budget']) {
      expect(read('en', path), path).toEqual(expect.any(String));
      expect(read('zh', path), path).toEqual(expect.any(String));
      expect(read('zh', path), path).not.toBe(read('en', path));
    }
  });
});
