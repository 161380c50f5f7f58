// The organisation screens against msw answers shaped like common/organizations.ts:
// a member sees only their organisations; the owner (no site admin) adds a member
// and makes a key, at the exact URLs; a site admin creates an organisation.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import type { MyOrganizationRecord, OrganizationMemberRecord } from '../../common/organizations';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import OrganizationPage from '../../src/pages/organizations/OrganizationPage';
import OrganizationsPage from '../../src/pages/organizations/OrganizationsPage';
import { server } from './setup';

/** A member with no caps who spent nothing. */
const NO_CAPS = { cap_quota: 0, cap_period: '', cap_period_quota: 0, spent_quota: 0, period_spent: 0, resets_at: 0 } as const;

const ok = (data?: unknown) => HttpResponse.json({ success: true, message: '', ...(data === undefined ? {} : { data }) });

const acme: MyOrganizationRecord = {
  id: 5,
  name: 'Acme',
  status: 1,
  created_time: 1_700_000_000,
  owner_id: 7,
  owner_username: 'olivia',
  member_count: 1,
  quota: 2_500_000,
  used_quota: 0,
  budget_period: '',
  budget_quota: 0,
  role: 'owner',
};

function signIn(id: number, role: number) {
  localStorage.setItem('user', JSON.stringify({ id, username: 'olivia', display_name: '', role, status: 1 }));
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
}

function renderAt(path: string) {
  render(
    <MemoryRouter initialEntries={[path]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <Routes>
          <Route path="/organization" element={<OrganizationsPage />} />
          <Route path="/organization/:id" element={<OrganizationPage />} />
        </Routes>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
}

describe('organisation screens', () => {
  it('shows a member their organisations and no site list', async () => {
    signIn(7, 1);
    const asked: string[] = [];
    server.use(
      http.get('*/api/organization/self', ({ request }) => {
        asked.push(new URL(request.url).pathname);
        return ok([acme]);
      }),
    );
    renderAt('/organization');
    expect(await screen.findByRole('link', { name: 'Open Acme' })).toHaveAttribute('href', '/organization/5');
    expect(screen.getByText(/Owner/)).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'All organizations' })).toBeNull();
    expect(asked).toEqual(['/api/organization/self']);
  });

  it('lets a site admin create an organisation with its owner', async () => {
    signIn(1, 10);
    const posted: unknown[] = [];
    let created = false;
    server.use(
      http.get('*/api/organization/self', () => ok([])),
      http.get('*/api/organization/', () => ok(created ? [{ ...acme, role: undefined }] : [])),
      http.post('*/api/organization/', async ({ request }) => {
        posted.push(await request.json());
        created = true;
        return ok({ ...acme, role: undefined });
      }),
    );
    renderAt('/organization');
    expect(await screen.findByText('No organization yet.')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: ' Acme ' } });
    fireEvent.change(screen.getByLabelText('Owner (username)'), { target: { value: 'olivia' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create organization' }));
    await waitFor(() => expect(posted).toEqual([{ name: 'Acme', owner: 'olivia' }]));
    expect(await screen.findByRole('link', { name: 'Acme' })).toHaveAttribute('href', '/organization/5');
  });

  it('lets the owner add a member and make a key, at the exact URLs', async () => {
    signIn(7, 1);
    const calls: Array<[string, string, unknown]> = [];
    let members: OrganizationMemberRecord[] = [
      { organization_id: 5, user_id: 7, username: 'olivia', display_name: 'olivia', role: 'owner', created_time: 1, ...NO_CAPS },
    ];
    const record = async (request: Request) => {
      const url = new URL(request.url);
      calls.push([request.method, url.pathname + url.search, request.method === 'GET' ? undefined : await request.json()]);
    };
    server.use(
      http.get('*/api/organization/5', () => ok(acme)),
      http.get('*/api/organization/5/token', async ({ request }) => {
        await record(request);
        return ok([]);
      }),
      http.post('*/api/organization/5/token', async ({ request }) => {
        await record(request);
        return ok({ id: 9, name: 'ci', key: 'abcdefghijklmnopqrstuvwxyz123456', status: 1, member_user_id: 7, member_username: 'olivia' });
      }),
      http.get('*/api/organization/5/member', async ({ request }) => {
        await record(request);
        return ok(members);
      }),
      http.post('*/api/organization/5/member', async ({ request }) => {
        await record(request);
        members = [
          ...members,
          { organization_id: 5, user_id: 8, username: 'mia', display_name: 'mia', role: 'member', created_time: 2, ...NO_CAPS },
        ];
        return ok();
      }),
    );
    renderAt('/organization/5');
    expect(await screen.findByRole('heading', { name: 'Acme' })).toBeInTheDocument();
    expect(await screen.findByText('No key yet.')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Key name'), { target: { value: 'ci' } });
    fireEvent.click(screen.getByRole('button', { name: 'New key' }));
    expect(await screen.findByTestId('organization-key-secret')).toHaveTextContent('sk-abcdefghijklmnopqrstuvwxyz123456');

    fireEvent.click(screen.getByRole('tab', { name: 'Members' }));
    const panel = await screen.findByRole('tabpanel');
    expect(await within(panel).findByText('olivia')).toBeInTheDocument();
    fireEvent.change(within(panel).getByLabelText('Username'), { target: { value: 'mia' } });
    fireEvent.click(within(panel).getByRole('button', { name: 'Add member' }));
    expect(await within(panel).findByText('mia')).toBeInTheDocument();
    expect(calls).toEqual([
      ['GET', '/api/organization/5/token?p=0&page_size=100', undefined],
      ['POST', '/api/organization/5/token', { name: 'ci', unlimited_quota: true, service: false }],
      ['GET', '/api/organization/5/token?p=0&page_size=100', undefined],
      ['GET', '/api/organization/5/member?p=0&page_size=100', undefined],
      ['POST', '/api/organization/5/member', { username: 'mia', role: 'member' }],
      ['GET', '/api/organization/5/member?p=0&page_size=100', undefined],
    ]);
  });

  it('shows a plain member no members tab', async () => {
    signIn(8, 1);
    server.use(
      http.get('*/api/organization/5', () => ok({ ...acme, role: 'member' })),
      http.get('*/api/organization/5/token', () => ok([])),
    );
    renderAt('/organization/5');
    expect(await screen.findByRole('tab', { name: 'Keys' })).toBeInTheDocument();
    expect(screen.queryByRole('tab', { name: 'Members' })).toBeNull();
    // a member makes keys of their own, not service keys
    expect(screen.getByLabelText('Key name')).toBeInTheDocument();
    expect(screen.queryByLabelText(/Service key/)).toBeNull();
  });

  it("lets the owner set a member's caps in dollars", async () => {
    signIn(7, 1);
    const put: unknown[] = [];
    const mia = { organization_id: 5, user_id: 8, username: 'mia', display_name: 'mia', role: 'member' as const, created_time: 2 };
    server.use(
      http.get('*/api/organization/5', () => ok(acme)),
      http.get('*/api/organization/5/token', () => ok([])),
      http.get('*/api/organization/5/member', () => ok([{ ...mia, ...NO_CAPS, cap_quota: 1_000_000, spent_quota: 250_000 }])),
      http.put('*/api/organization/5/member', async ({ request }) => {
        put.push(await request.json());
        return ok();
      }),
    );
    renderAt('/organization/5');
    fireEvent.click(await screen.findByRole('tab', { name: 'Members' }));
    const panel = await screen.findByRole('tabpanel');
    expect(await within(panel).findByTestId('member-cap')).toHaveTextContent('spent $0.50 of $2.00');
    fireEvent.click(within(panel).getByRole('button', { name: 'Caps' }));
    const dialog = await screen.findByRole('dialog', { name: 'Spending caps of mia' });
    fireEvent.change(within(dialog).getByLabelText('Lifetime cap'), { target: { value: '3' } });
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Cap period' }));
    fireEvent.click(await screen.findByRole('option', { name: 'Per day' }));
    fireEvent.change(within(dialog).getByLabelText('Cap per period'), { target: { value: '1.5' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save caps' }));
    await waitFor(() => expect(put).toEqual([{ user_id: 8, cap_quota: 1_500_000, cap_period: 'day', cap_period_quota: 750_000 }]));
  });

  it('shows a member their own spend against their caps', async () => {
    signIn(8, 1);
    const cap = { ...NO_CAPS, cap_quota: 1_000_000, spent_quota: 1_000_000 };
    server.use(
      http.get('*/api/organization/5', () => ok({ ...acme, role: 'member', member_cap: cap })),
      http.get('*/api/organization/5/token', () => ok([])),
    );
    renderAt('/organization/5');
    expect(await screen.findByTestId('member-cap')).toHaveTextContent('spent $2.00 of $2.00');
    expect(screen.getByText('Your spending:')).toBeInTheDocument();
  });

  it("sends a token that spends an organisation's money to that organisation, and a personal one as before", async () => {
    const posted: Array<[string, unknown]> = [];
    const answer = async (request: Request) => {
      posted.push([new URL(request.url).pathname, await request.json()]);
      return ok({ id: 9, name: 'ci', key: 'abcdefghijklmnopqrstuvwxyz123456' });
    };
    server.use(
      http.post('*/api/organization/5/token', ({ request }) => answer(request)),
      http.post('*/api/token/', ({ request }) => answer(request)),
    );
    await dataProvider.create('token', { data: { name: 'ci', organization_id: 5 } });
    await dataProvider.create('token', { data: { name: 'mine' } });
    expect(posted).toEqual([
      ['/api/organization/5/token', { name: 'ci', organization_id: 5 }],
      ['/api/token/', { name: 'mine' }],
    ]);
  });
});
