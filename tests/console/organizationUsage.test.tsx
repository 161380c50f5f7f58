// An organisation's Usage tab and the dashboard's link to it, against msw
// answers shaped like common/organizationUsage.ts: the dashboard's card
// opens the tab, which asks for the chosen period and lists what each
// member, model and key spent.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import type { OrganizationUsage } from '../../common/organizationUsage';
import type { MyOrganizationRecord } from '../../common/organizations';
import { ManagedOrganizations } from '../../src/dashboard/ManagedOrganizations';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import OrganizationPage from '../../src/pages/organizations/OrganizationPage';
import { server } from './setup';

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data });

const acme: MyOrganizationRecord = {
  id: 5,
  name: 'Acme',
  status: 1,
  created_time: 1_700_000_000,
  owner_id: 7,
  owner_username: 'olivia',
  member_count: 2,
  quota: 2_500_000,
  used_quota: 0,
  budget_period: '',
  budget_quota: 0,
  role: 'admin',
};

const totals = (requests: number, quota: number) => ({
  requests,
  errors: 0,
  prompt_tokens: requests * 10,
  completion_tokens: requests * 5,
  quota,
});

const usage: OrganizationUsage = {
  start: 1_700_000_000,
  end: 1_700_600_000,
  granularity: 'day',
  scope: 'organization',
  totals: totals(5, 3_000),
  by_member: [
    { user_id: 8, username: 'mia', ...totals(3, 2_000) },
    { user_id: 0, username: '', ...totals(2, 1_000) },
  ],
  by_model: [{ model: 'gpt-4o', ...totals(5, 3_000) }],
  by_key: [
    { token_id: 11, token_name: 'mia laptop', member_user_id: 8, ...totals(3, 2_000) },
    { token_id: 12, token_name: '', member_user_id: 0, ...totals(2, 1_000) },
  ],
};

function renderAt(path: string) {
  localStorage.setItem('user', JSON.stringify({ id: 7, username: 'olivia', display_name: '', role: 1, status: 1 }));
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  render(
    <MemoryRouter initialEntries={[path]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <Routes>
          <Route path="/" element={<ManagedOrganizations />} />
          <Route path="/organization/:id" element={<OrganizationPage />} />
        </Routes>
      </AdminContext>
    </MemoryRouter>,
  );
}

describe("an organisation's usage", () => {
  it('links an admin from the dashboard to the Usage tab, which lists members, models and keys for the chosen period', async () => {
    const asked: Array<{ start: number; end: number }> = [];
    server.use(
      http.get('*/api/organization/self', () => ok([acme, { ...acme, id: 6, name: 'Joined', role: 'member' }])),
      http.get('*/api/organization/5', () => ok(acme)),
      http.get('*/api/organization/5/usage', ({ request }) => {
        const url = new URL(request.url);
        asked.push({ start: Number(url.searchParams.get('start_timestamp')), end: Number(url.searchParams.get('end_timestamp')) });
        return ok(usage);
      }),
    );
    renderAt('/');
    const link = await screen.findByRole('link', { name: 'Acme: usage' });
    expect(link).toHaveAttribute('href', '/organization/5?tab=usage');
    // only the organisations the user runs
    expect(screen.queryByRole('link', { name: 'Joined: usage' })).toBeNull();
    fireEvent.click(link);

    const members = await screen.findByRole('table', { name: 'By member' });
    expect(within(members).getByText('mia')).toBeInTheDocument();
    expect(within(members).getByText('Service and deleted keys')).toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'By model' })).getByText('gpt-4o')).toBeInTheDocument();
    const keys = screen.getByRole('table', { name: 'By key' });
    expect(within(keys).getByText('mia laptop')).toBeInTheDocument();
    expect(within(keys).getByText('#12 (deleted)')).toBeInTheDocument();
    expect(screen.getByTestId('organization-usage-totals')).toHaveTextContent('5 requests: 50 prompt and 25 completion tokens');
    expect(asked[0].end - asked[0].start).toBe(7 * 86_400);

    fireEvent.click(screen.getByRole('button', { name: '30 days' }));
    await waitFor(() => expect(asked.at(-1)!.end - asked.at(-1)!.start).toBe(30 * 86_400));
  });
});
