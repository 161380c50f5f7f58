// Manage users: role labels in both languages (list, filter) and the super
// admin's row, whose manage actions are all shown disabled.
import { fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { messages } from './messages';
import { UserList } from '../../src/resources/user/UserList';
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
