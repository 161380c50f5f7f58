// The audit page: the list's URL and filters, the chain indicator (intact,
// broken at a row, in English and Chinese), the CSV export's link carrying
// the filters, a row's drawer with the change before and after, and the
// cards on a phone.
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditChainStatus, AuditRecord } from '../../common/audit';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { AuditList } from '../../src/resources/audit/AuditList';
import { lightTheme } from '../../src/theme';
import { screenWidth } from './screenWidth';
import { server } from './setup';

const row: AuditRecord = {
  id: 31,
  seq: 57,
  created_at: 1700000000,
  organization_id: null,
  user_id: 1,
  username: 'root',
  role: 100,
  ip: '203.0.113.9',
  user_agent: 'Mozilla/5.0',
  request_id: 'req_audit_1',
  method: 'PUT',
  route: '/api/option/',
  action: 'option.update',
  target_type: 'option',
  target_id: 'GitHubClientSecret',
  status: 200,
  success: true,
  changes: { before: { GitHubClientSecret: '' }, after: { GitHubClientSecret: '***cdef' } },
  prev_hash: 'a'.repeat(64),
  hash: 'b'.repeat(64),
};
const failedSignIn: AuditRecord = {
  ...row,
  id: 30,
  seq: 56,
  user_id: null,
  username: 'mallory',
  role: 0,
  method: 'POST',
  route: '/api/user/login',
  action: 'user.login',
  target_type: 'user',
  target_id: '',
  success: false,
  changes: null,
};
const INTACT: AuditChainStatus = { intact: true, rows: 57, head_seq: 57, anchor_seq: 0, checked_at: 1700000100 };

function serve(chain: AuditChainStatus = INTACT) {
  server.use(
    http.get('*/api/audit/', () => HttpResponse.json({ success: true, message: '', data: [row, failedSignIn] })),
    http.get('*/api/audit/search', () => HttpResponse.json({ success: true, message: '', data: [row] })),
    http.get('*/api/audit/verify', () => HttpResponse.json({ success: true, message: '', data: chain })),
  );
}

function renderAudit() {
  localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
  const seen: URL[] = [];
  server.events.on('request:start', ({ request }) => {
    seen.push(new URL(request.url));
  });
  render(
    <MemoryRouter initialEntries={['/audit']}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={lightTheme}>
        <ResourceContextProvider value="audit">
          <Routes>
            <Route path="/audit" element={<AuditList />} />
          </Routes>
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
  return seen;
}

afterEach(() => {
  screenWidth(1440);
});

describe('AuditList', () => {
  it('lists the rows from /api/audit/?p=0, says the chain is intact and opens a row with its change before and after', async () => {
    screenWidth(1440);
    serve();
    const seen = renderAudit();
    expect(await screen.findByText('Chain intact: 57 rows checked')).toBeInTheDocument();
    const first = (await screen.findByText('option.update')).closest('tr') as HTMLElement;
    expect(within(first).getByText('option #GitHubClientSecret')).toBeInTheDocument();
    expect(within(first).getByText('200 Succeeded')).toBeInTheDocument();
    const second = screen.getByText('user.login').closest('tr') as HTMLElement;
    expect(within(second).getByText('mallory')).toBeInTheDocument();
    expect(within(second).getByText('200 Failed')).toBeInTheDocument();
    const list = seen.find((url) => url.pathname === '/api/audit/')!;
    expect(list.searchParams.get('p')).toBe('0');

    fireEvent.click(within(first).getByRole('button', { name: 'Show the change' }));
    const drawer = await screen.findByRole('dialog', { name: 'Audit entry #57' });
    const change = within(drawer).getByRole('table', { name: 'Change' });
    const secretRow = within(change).getByRole('rowheader', { name: 'GitHubClientSecret' }).closest('tr') as HTMLElement;
    expect(within(secretRow).getByText('""')).toBeInTheDocument();
    expect(within(secretRow).getByText('***cdef')).toBeInTheDocument();
    expect(within(drawer).getByText('203.0.113.9')).toBeInTheDocument();
    expect(within(drawer).getByText('req_audit_1')).toBeInTheDocument();
    fireEvent.click(within(drawer).getByRole('button', { name: 'Close' }));
  });

  it('sends the filters to the list and puts them on the CSV export link', async () => {
    screenWidth(1440);
    serve();
    const seen = renderAudit();
    await screen.findByText('option.update');
    fireEvent.change(document.querySelector('input[name="action"]')!, { target: { value: 'option.update' } });
    await expect
      .poll(() => seen.some((url) => url.pathname === '/api/audit/' && url.searchParams.get('action') === 'option.update'), {
        timeout: 5000,
      })
      .toBe(true);
    const link = screen.getByRole('link', { name: 'Export CSV' });
    await expect.poll(() => link.getAttribute('href'), { timeout: 5000 }).toBe('/api/audit/export?action=option.update');
    expect(link).toHaveAttribute('download');
  });

  it('names the first bad row when the chain is broken, in English and in Chinese', async () => {
    const broken: AuditChainStatus = {
      ...INTACT,
      intact: false,
      rows: 40,
      broken_at: { seq: 41, id: null, kind: 'missing', reason: 'the row is missing (deleted)' },
    };
    serve(broken);
    renderAudit();
    expect(await screen.findByText('Chain broken at row #41: the row is missing (deleted)')).toBeInTheDocument();
    cleanup();
    await i18nProvider.changeLocale('zh');
    try {
      serve(broken);
      renderAudit();
      expect(await screen.findByText('哈希链在第 #41 行断开：该行缺失（已被删除）')).toBeInTheDocument();
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });

  it('shows cards on a phone, each opening the same drawer', async () => {
    screenWidth(390);
    serve();
    renderAudit();
    const cards = await screen.findAllByTestId('list-card');
    expect(cards).toHaveLength(2);
    expect(within(cards[1]).getByText('mallory')).toBeInTheDocument();
    fireEvent.click(cards[0]);
    expect(await screen.findByRole('dialog', { name: 'Audit entry #57' })).toBeInTheDocument();
  });
});
