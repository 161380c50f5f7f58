// The first-run checklist atop root's dashboard, against msw answers shaped
// like common/setupChecklist.ts: each step's state announced and linked to
// where it is done, the sample curl with a placeholder key, the dismissal's
// POST, and the card staying away for admins, once done, dismissed or failing.
import { render, screen, waitFor, within, fireEvent } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, Notification } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it, vi } from 'vitest';
import type { AdminDashboard, UsageTotals } from '../../common/dashboard';
import { SETUP_STEPS, type SetupChecklist } from '../../common/setupChecklist';
import DashboardPage from '../../src/dashboard/DashboardPage';
import { sampleCurl } from '../../src/dashboard/SetupChecklist';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { dashboardEnglish } from '../../src/i18n/dashboard.en';
import { dashboardChinese } from '../../src/i18n/dashboard.zh';
import { adminDashboard } from './fixtures/dashboard';
import { server } from './setup';

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data });
const zero: UsageTotals = { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, quota: 0 };
// no usage yet, as on a fresh install: the empty state instead of the charts
const quietDashboard: AdminDashboard = { ...adminDashboard, totals: zero };

const fresh: SetupChecklist = {
  password_changed: false,
  channel_added: false,
  channel_tested: false,
  token_created: false,
  request_sent: false,
  dismissed: false,
  model: '',
};
const almostThere: SetupChecklist = {
  ...fresh,
  password_changed: true,
  channel_added: true,
  channel_tested: true,
  token_created: true,
  model: 'gpt-4o-mini',
};

function signIn(role: number) {
  localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role, status: 1 }));
}

/** The dashboard at `/` with the checklist answering `checklist`; resolves to how often it was asked. */
function renderDashboard(checklist: SetupChecklist | 'error', role = 100) {
  signIn(role);
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  const asked = { count: 0 };
  server.use(
    http.get('*/api/dashboard/admin', () => ok(quietDashboard)),
    http.get('*/api/setup/checklist', () => {
      asked.count += 1;
      return checklist === 'error' ? HttpResponse.json({ success: false, message: 'database is down' }) : ok(checklist);
    }),
  );
  render(
    <MemoryRouter initialEntries={['/']}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <Routes>
          <Route path="/" element={<DashboardPage />} />
        </Routes>
        <Notification />
      </AdminContext>
    </MemoryRouter>,
  );
  return asked;
}

const TITLES = {
  password_changed: 'Change the generated password',
  channel_added: 'Add a channel',
  channel_tested: 'Test the channel',
  token_created: 'Create a token',
  request_sent: 'Send a first request',
};
const ACTIONS = [
  ['Change password', '/setting'],
  ['Add channel', '/channel/create'],
  ['Open channels', '/channel'],
  ['Create token', '/token/create'],
  ['Open playground', '/playground'],
];

describe('setup checklist', () => {
  it('lists the five steps of a fresh install, each announced as not done and linked to where it is done', async () => {
    renderDashboard(fresh);
    const card = await screen.findByRole('region', { name: 'Get started' });
    const list = within(card).getByRole('list');
    const items = within(list).getAllByRole('listitem');
    expect(items.map((item) => item.getAttribute('data-testid'))).toEqual(SETUP_STEPS.map((step) => `setup-step-${step}`));
    for (const step of SETUP_STEPS) {
      expect(within(list).getByRole('listitem', { name: `${TITLES[step]} (not done)` })).toBeInTheDocument();
    }
    for (const [name, path] of ACTIONS) expect(within(card).getByRole('link', { name })).toHaveAttribute('href', path);
    expect(within(card).getByText('0 of 5 steps done')).toBeInTheDocument();
    expect(within(card).getByRole('progressbar', { name: '0 of 5 steps done' })).toHaveAttribute('aria-valuenow', '0');
    // nothing to dismiss before a channel exists, and no curl without a model to name
    expect(within(card).queryByRole('button', { name: 'Dismiss' })).toBeNull();
    expect(within(card).queryByTestId('setup-curl')).toBeNull();
    // the dashboard itself still renders below
    expect(await screen.findByTestId('dashboard-empty')).toBeInTheDocument();
  });

  it('ticks the steps the server reports done and offers a curl with a placeholder key for the last one', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    renderDashboard(almostThere);
    const card = await screen.findByRole('region', { name: 'Get started' });
    expect(within(card).getByText('4 of 5 steps done')).toBeInTheDocument();
    expect(within(card).getByRole('listitem', { name: 'Change the generated password (done)' })).toHaveAttribute('data-done', 'true');
    expect(within(card).getByRole('listitem', { name: 'Create a token (done)' })).toBeInTheDocument();
    expect(within(card).getByRole('listitem', { name: 'Send a first request (not done)' })).toHaveAttribute('data-done', 'false');

    const curl = within(card).getByTestId('setup-curl');
    expect(curl.textContent).toBe(sampleCurl(window.location.origin, 'gpt-4o-mini'));
    expect(curl).toHaveTextContent(`curl ${window.location.origin}/v1/chat/completions`);
    expect(curl).toHaveTextContent('Authorization: Bearer sk-...');
    expect(curl).toHaveTextContent('"model":"gpt-4o-mini"');
    expect(within(card).getByRole('link', { name: 'Open tokens' })).toHaveAttribute('href', '/token');
    fireEvent.click(within(card).getByRole('button', { name: 'Copy curl command' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(sampleCurl(window.location.origin, 'gpt-4o-mini')));
  });

  it('POSTs the dismissal and hides the card', async () => {
    const dismissed: string[] = [];
    server.use(
      http.post('*/api/setup/checklist/dismiss', ({ request }) => {
        dismissed.push(new URL(request.url).pathname);
        return ok(null);
      }),
    );
    renderDashboard(almostThere);
    const card = await screen.findByRole('region', { name: 'Get started' });
    fireEvent.click(within(card).getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(screen.queryByRole('region', { name: 'Get started' })).toBeNull());
    expect(dismissed).toEqual(['/api/setup/checklist/dismiss']);
  });

  it('keeps the card when the dismissal is refused', async () => {
    server.use(http.post('*/api/setup/checklist/dismiss', () => HttpResponse.json({ success: false, message: 'add a channel first' })));
    renderDashboard(almostThere);
    const card = await screen.findByRole('region', { name: 'Get started' });
    fireEvent.click(within(card).getByRole('button', { name: 'Dismiss' }));
    expect(await screen.findByText('add a channel first')).toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Get started' })).toBeInTheDocument();
  });

  it.each([
    ['every step is done', { ...almostThere, request_sent: true }],
    ['root dismissed it', { ...almostThere, dismissed: true }],
    ['it cannot be loaded', 'error' as const],
  ])('shows nothing when %s', async (_, checklist) => {
    const asked = renderDashboard(checklist);
    expect(await screen.findByTestId('dashboard-empty')).toBeInTheDocument();
    await waitFor(() => expect(asked.count).toBe(1));
    expect(screen.queryByTestId('setup-checklist')).toBeNull();
  });

  it('is not asked for below root', async () => {
    const asked = renderDashboard(fresh, 10);
    expect(await screen.findByTestId('dashboard-empty')).toBeInTheDocument();
    expect(asked.count).toBe(0);
    expect(screen.queryByTestId('setup-checklist')).toBeNull();
  });

  it('has every string in English and Chinese', () => {
    const keysOf = (node: object, prefix = ''): string[] =>
      Object.entries(node).flatMap(([key, value]) =>
        typeof value === 'object' ? keysOf(value as object, `${prefix}${key}.`) : [`${prefix}${key}`],
      );
    expect(keysOf(dashboardChinese.dashboard.setup)).toEqual(keysOf(dashboardEnglish.dashboard.setup));
    for (const step of SETUP_STEPS) expect(dashboardEnglish.dashboard.setup.steps[step].title).toBe(TITLES[step]);
  });
});
