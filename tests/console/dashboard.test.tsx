// The signed-in home's dashboard against msw answers shaped like
// common/dashboard.ts: user and admin variants, money in dollars, filters
// that change the request's query and the URL, the error state's Retry,
// the empty state, and the landing page kept for visitors.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore } from 'react-admin';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import DashboardPage from '../../src/dashboard/DashboardPage';
import { createDataProvider, dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { queryOfView, secondsToDay, viewFromSearch } from '../../src/dashboard/dashboardView';
import { DASHBOARD_MESSAGES, interpolate } from '../../src/dashboard/useDashboardTranslate';
import { HomePage } from '../../src/pages/HomePage';
import { adminDashboard, emptyDashboard, userDashboard } from './fixtures/dashboard';
import { server } from './setup';

beforeAll(() => {
  // the charts measure their box; jsdom has no layout
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
});

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data });

let currentSearch = '';
function LocationProbe() {
  currentSearch = useLocation().search;
  return null;
}

function signIn(role: number) {
  localStorage.setItem('user', JSON.stringify({ id: 2, username: 'alice', display_name: '', role, status: 1 }));
}

/** Renders a page at `/` + search; resolves to the dashboard requests seen. */
function renderAt(search = '', page = <DashboardPage />) {
  localStorage.setItem('status', JSON.stringify({ quota_per_unit: 500000, display_in_currency: true }));
  const seen: URL[] = [];
  server.events.on('request:start', ({ request }) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/api/dashboard')) seen.push(url);
  });
  render(
    <MemoryRouter initialEntries={[`/${search}`]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <Routes>
          <Route
            path="/"
            element={
              <>
                {page}
                <LocationProbe />
              </>
            }
          />
        </Routes>
      </AdminContext>
    </MemoryRouter>,
  );
  return seen;
}

const statFigure = (id: string) => within(screen.getByTestId(`stat-${id}`)).getByTestId('stat-figure').textContent;

describe('dashboard for a user', () => {
  it('reads GET /api/dashboard over the last 7 days and shows the figures in dollars', async () => {
    signIn(1);
    server.use(http.get('*/api/dashboard', () => ok(userDashboard)));
    const before = Math.floor(Date.now() / 1000);
    const seen = renderAt();
    expect(await screen.findByRole('heading', { level: 1, name: 'Dashboard' })).toBeInTheDocument();
    await screen.findByTestId('stat-balance');
    expect(statFigure('balance')).toBe('$24.69');
    expect(statFigure('today')).toBe('$0.50');
    expect(statFigure('last_7_days')).toBe('$3.00');
    expect(statFigure('last_30_days')).toBe('$12.00');
    expect(screen.getByTestId('stat-today')).toHaveTextContent('16 requests · 10,500 tokens');
    expect(screen.getByTestId('range-totals')).toHaveTextContent('$3.00 spent, 91 requests, 2 errors, 42,000 tokens');

    const tokens = screen.getByRole('table', { name: 'Top tokens' });
    const laptop = within(tokens).getByRole('button', { name: 'laptop' }).closest('tr') as HTMLElement;
    expect(within(laptop).getByText('$2.80')).toBeInTheDocument();
    expect(within(tokens).getByText('#9 (deleted)')).toBeInTheDocument();
    // users get no admin sections
    expect(screen.queryByTestId('section-top-users')).toBeNull();
    expect(screen.queryByTestId('section-channel-health')).toBeNull();
    expect(screen.queryByLabelText('User')).toBeNull();
    // the charts load on demand, titled for assistive technology
    expect(await screen.findByTestId('section-spend-over-time', {}, { timeout: 15_000 })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Spend by model' })).toBeInTheDocument();

    expect(seen).toHaveLength(1);
    const [request] = seen;
    expect(request.pathname).toBe('/api/dashboard');
    const end = Number(request.searchParams.get('end'));
    expect(end).toBeGreaterThanOrEqual(before);
    expect(Number(request.searchParams.get('start'))).toBe(end - 7 * 24 * 3600);
    expect([...request.searchParams.keys()].sort()).toEqual(['end', 'start']);
  });

  it("writes the axes in compact units, in the reader's language", async () => {
    signIn(1);
    const millions = {
      ...userDashboard,
      series: userDashboard.series.map((point, index) => ({
        ...point,
        prompt_tokens: 1_000_000 * (index + 1),
        completion_tokens: 250_000,
      })),
    };
    server.use(http.get('*/api/dashboard', () => ok(millions)));
    // the charts draw their ticks only once they know their width, which jsdom's layout never gives
    const realStyle = window.getComputedStyle.bind(window);
    const styleSpy = vi.spyOn(window, 'getComputedStyle').mockImplementation((element: Element, pseudo?: string | null) => {
      const style = realStyle(element, pseudo);
      return new Proxy(style, { get: (target, key) => (key === 'width' ? target.width || '600px' : Reflect.get(target, key, target)) });
    });
    const ticksOf = async (id: string) => {
      const section = await screen.findByTestId(`section-${id}`, {}, { timeout: 15_000 });
      await waitFor(() => expect(section.querySelectorAll('.MuiChartsAxis-tickLabel').length).toBeGreaterThan(0));
      return [...section.querySelectorAll('.MuiChartsAxis-left .MuiChartsAxis-tickLabel')].map((tick) => tick.textContent);
    };
    try {
      renderAt();
      const english = await ticksOf('tokens-over-time');
      expect(english).toContain('2M');
      expect(english.some((tick) => /\d,\d{3}/.test(tick ?? ''))).toBe(false);
      cleanup();
      await i18nProvider.changeLocale('zh');
      renderAt();
      expect(await ticksOf('tokens-over-time')).toContain('200万');
    } finally {
      styleSpy.mockRestore();
      await i18nProvider.changeLocale('en');
    }
  });

  it('shows a chart as a data table on request', async () => {
    signIn(1);
    server.use(http.get('*/api/dashboard', () => ok(userDashboard)));
    renderAt();
    const section = await screen.findByTestId('section-spend-by-model', {}, { timeout: 15_000 });
    fireEvent.click(within(section).getByRole('button', { name: 'Show data table' }));
    const table = await within(section).findByRole('table', { name: 'Spend by model' });
    expect(within(table).getByText('gpt-4o').closest('tr')).toHaveTextContent('$2.50');
  });

  it('sends the filters and range from the URL, and changes them on request', async () => {
    signIn(1);
    server.use(http.get('*/api/dashboard', () => ok(userDashboard)));
    const seen = renderAt('?range=30d&token_id=7&user_id=3');
    await screen.findByTestId('stat-balance');
    const first = seen[0];
    expect(Number(first.searchParams.get('end')) - Number(first.searchParams.get('start'))).toBe(30 * 24 * 3600);
    expect(first.searchParams.get('token_id')).toBe('7');
    // a user's request never carries the admin filters
    expect(first.searchParams.has('user_id')).toBe(false);

    fireEvent.change(screen.getByLabelText('Model'), { target: { value: 'gpt-4o' } });
    await waitFor(() => expect(seen.at(-1)!.searchParams.get('model')).toBe('gpt-4o'));
    expect(new URLSearchParams(currentSearch).get('model')).toBe('gpt-4o');

    fireEvent.click(screen.getByRole('button', { name: '24 h' }));
    await waitFor(() => {
      const last = seen.at(-1)!;
      expect(Number(last.searchParams.get('end')) - Number(last.searchParams.get('start'))).toBe(24 * 3600);
    });
    expect(new URLSearchParams(currentSearch).get('range')).toBe('24h');

    fireEvent.click(screen.getByRole('button', { name: 'Hour' }));
    await waitFor(() => expect(seen.at(-1)!.searchParams.get('granularity')).toBe('hour'));
    expect(seen.at(-1)!.searchParams.get('token_id')).toBe('7');
    expect(seen.at(-1)!.searchParams.get('model')).toBe('gpt-4o');

    // a top token's name narrows the view to it
    fireEvent.change(screen.getByLabelText('Token'), { target: { value: '' } });
    await waitFor(() => expect(seen.at(-1)!.searchParams.has('token_id')).toBe(false));
    fireEvent.click(await screen.findByRole('button', { name: 'laptop' }));
    await waitFor(() => expect(seen.at(-1)!.searchParams.get('token_id')).toBe('7'));
  });

  it('asks for a custom range by day', async () => {
    signIn(1);
    server.use(http.get('*/api/dashboard', () => ok(userDashboard)));
    const seen = renderAt();
    await screen.findByTestId('stat-balance');
    fireEvent.click(screen.getByRole('button', { name: 'Custom' }));
    fireEvent.change(await screen.findByLabelText('From'), { target: { value: '2025-11-01' } });
    await waitFor(() => expect(seen.at(-1)!.searchParams.get('start')).toBe(String(new Date(2025, 10, 1).getTime() / 1000)));
    const search = new URLSearchParams(currentSearch);
    expect(search.get('range')).toBe('custom');
    expect(search.get('start')).toBe(String(new Date(2025, 10, 1).getTime() / 1000));
  });

  it('shows the answered days in a custom range the link gave no dates for', async () => {
    signIn(1);
    server.use(http.get('*/api/dashboard', () => ok(userDashboard)));
    renderAt('?range=custom');
    await screen.findByTestId('stat-balance');
    expect(screen.getByLabelText('From')).toHaveValue(secondsToDay(userDashboard.start));
    expect(screen.getByLabelText('To')).toHaveValue(secondsToDay(userDashboard.end));
  });

  it('shows an error with a Retry that loads again', async () => {
    signIn(1);
    let calls = 0;
    server.use(
      http.get('*/api/dashboard', () => {
        calls += 1;
        return calls === 1 ? HttpResponse.json({ success: false, message: 'rollups are being rebuilt' }) : ok(userDashboard);
      }),
    );
    renderAt();
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The dashboard could not be loaded');
    expect(alert).toHaveTextContent('rollups are being rebuilt');
    fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    await screen.findByTestId('stat-balance');
    expect(statFigure('balance')).toBe('$24.69');
    expect(calls).toBe(2);
  });

  it('shows an empty state when the range has no usage', async () => {
    signIn(1);
    server.use(http.get('*/api/dashboard', () => ok(emptyDashboard)));
    renderAt();
    const empty = await screen.findByTestId('dashboard-empty');
    expect(empty).toHaveTextContent('No usage in this range yet');
    expect(within(empty).getByRole('link', { name: 'Manage my tokens' })).toHaveAttribute('href', '/token');
    expect(statFigure('balance')).toBe('$24.69');
    expect(statFigure('today')).toBe('$0.00');
    expect(screen.queryByTestId('section-top-tokens')).toBeNull();
  });
});

describe('dashboard for an admin', () => {
  it('reads GET /api/dashboard/admin and shows the admin sections', async () => {
    signIn(10);
    server.use(http.get('*/api/dashboard/admin', () => ok(adminDashboard)));
    const seen = renderAt('?user_id=2&channel_id=4');
    expect(await screen.findByRole('heading', { level: 1, name: 'Dashboard: all users' })).toBeInTheDocument();
    await screen.findByTestId('stat-balance');
    expect(statFigure('balance')).toBe('$100.00');
    expect(screen.getByTestId('range-totals')).toHaveTextContent('$30.00 spent, 900 requests, 12 errors');

    const users = screen.getByRole('table', { name: 'Top users' });
    expect(within(users).getByRole('button', { name: 'alice' }).closest('tr')).toHaveTextContent('$22.00');
    const models = screen.getByRole('table', { name: 'Top models' });
    expect(within(models).getByRole('button', { name: 'gpt-4o' }).closest('tr')).toHaveTextContent('$2.50');
    const channels = screen.getByRole('table', { name: 'Top channels' });
    const main = within(channels).getByRole('button', { name: 'openai-main' }).closest('tr') as HTMLElement;
    expect(main).toHaveTextContent('1.4%');
    expect(main).toHaveTextContent('500 ms');
    expect(main).toHaveTextContent('2.5 s');
    expect(main).toHaveTextContent('$28.00');
    const deleted = within(channels).getByText('#5 (deleted)').closest('tr') as HTMLElement;
    expect(within(deleted).getAllByText('–')).toHaveLength(2);
    expect(deleted).not.toHaveTextContent(' ms');
    // a channel whose every call failed: the failures count as its requests, and no latency is claimed for it
    const dead = within(channels).getByRole('button', { name: 'dead-upstream' }).closest('tr') as HTMLElement;
    expect(
      within(dead)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ).toEqual(['dead-upstream', '3', '3', '100%', '–', '–', '$0.00']);

    const health = screen.getByTestId('section-channel-health');
    expect(within(health).getByTestId('health-enabled')).toHaveTextContent('Enabled6');
    expect(within(health).getByTestId('health-auto_disabled')).toHaveTextContent('Auto-disabled2');
    expect(within(health).getByTestId('health-manually_disabled')).toHaveTextContent('Manually disabled1');
    expect(within(health).getByTestId('health-untested')).toHaveTextContent('Untested3');
    expect(within(health).getByText('4.2 s')).toBeInTheDocument();

    const request = seen[0];
    expect(request.pathname).toBe('/api/dashboard/admin');
    expect(request.searchParams.get('user_id')).toBe('2');
    expect(request.searchParams.get('channel_id')).toBe('4');

    fireEvent.change(screen.getByLabelText('User'), { target: { value: '3' } });
    await waitFor(() => expect(seen.at(-1)!.searchParams.get('user_id')).toBe('3'));
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => {
      const last = seen.at(-1)!;
      expect(last.searchParams.has('user_id') || last.searchParams.has('channel_id')).toBe(false);
    });
    expect(currentSearch).toBe('');
  });

  it('links each error count to the log filtered to those failed rows', async () => {
    signIn(10);
    server.use(http.get('*/api/dashboard/admin', () => ok(adminDashboard)));
    renderAt('?model=gpt-4o');
    await screen.findByTestId('stat-balance');
    const filterOf = (link: HTMLElement) => {
      const url = new URL(link.getAttribute('href')!, 'http://console');
      expect(url.pathname).toBe('/log');
      return JSON.parse(url.searchParams.get('filter')!);
    };
    const totals = within(screen.getByTestId('range-totals')).getByRole('link', { name: '12' });
    expect(totals).toHaveAttribute('title', 'Show these 12 failed requests in the log');
    expect(filterOf(totals)).toEqual({
      type: 5,
      start_timestamp: adminDashboard.start,
      end_timestamp: adminDashboard.end,
      model_name: 'gpt-4o',
    });
    const channels = screen.getByRole('table', { name: 'Top channels' });
    const main = within(within(channels).getByRole('button', { name: 'openai-main' }).closest('tr') as HTMLElement).getByRole('link', {
      name: '12',
    });
    expect(filterOf(main)).toMatchObject({ type: 5, channel: 4, model_name: 'gpt-4o' });
  });

  it('speaks Chinese', async () => {
    signIn(100);
    server.use(http.get('*/api/dashboard/admin', () => ok(adminDashboard)));
    await i18nProvider.changeLocale('zh');
    try {
      renderAt();
      expect(await screen.findByRole('heading', { level: 1, name: '仪表盘：全部用户' })).toBeInTheDocument();
      expect(await screen.findByRole('heading', { name: '余额' })).toBeInTheDocument();
      expect(screen.getByRole('heading', { name: '渠道健康' })).toBeInTheDocument();
      expect(statFigure('balance')).toBe('$100.00');
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });
});

describe('response cache on the dashboard', () => {
  it("shows the cache's hits and savings while it is on or had hits, in both languages", async () => {
    signIn(1);
    const cache = { enabled: true, hits: 1234, quota: 50_000, saved: 450_000 };
    server.use(http.get('*/api/dashboard', () => ok({ ...userDashboard, response_cache: cache })));
    renderAt();
    expect(await screen.findByTestId('response-cache')).toHaveTextContent(
      'Response cache in this range: 1,234 hits, $0.90 saved, $0.10 charged for them',
    );
    cleanup();

    // off, and no hits in the range (or an older server that sends nothing): no line
    for (const response_cache of [{ enabled: false, hits: 0, quota: 0, saved: 0 }, undefined]) {
      server.use(http.get('*/api/dashboard', () => ok({ ...userDashboard, response_cache })));
      renderAt();
      await screen.findByTestId('range-totals');
      expect(screen.queryByTestId('response-cache')).toBeNull();
      cleanup();
    }

    signIn(100);
    server.use(http.get('*/api/dashboard/admin', () => ok({ ...adminDashboard, response_cache: { ...cache, enabled: false } })));
    await i18nProvider.changeLocale('zh');
    try {
      renderAt();
      expect(await screen.findByTestId('response-cache')).toHaveTextContent(
        '所选范围内响应缓存：命中 1,234 次，节省 $0.90，命中收费 $0.10（缓存现已关闭）',
      );
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });
});

describe('home page', () => {
  it('keeps the landing page for a visitor, without asking for a dashboard', async () => {
    server.use(
      http.get('*/api/home_page_content', () => ok('')),
      http.get('*/api/notice', () => ok('')),
      http.get('*/api/dashboard', () => ok(userDashboard)),
    );
    const seen = renderAt('', <HomePage />);
    expect(await screen.findByRole('heading', { name: 'One API for every model' })).toBeInTheDocument();
    expect(seen).toHaveLength(0);
  });

  it('shows the dashboard to a signed-in user', async () => {
    signIn(1);
    server.use(
      http.get('*/api/notice', () => ok('')),
      http.get('*/api/dashboard', () => ok(userDashboard)),
    );
    renderAt('', <HomePage />);
    expect(await screen.findByRole('heading', { level: 1, name: 'Dashboard' }, { timeout: 15_000 })).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'One API for every model' })).toBeNull();
  });
});

describe('dashboard calls on the data provider', () => {
  it('pin their URLs: admin filters only on the admin endpoint', async () => {
    const urls: string[] = [];
    const provider = createDataProvider(async (url) => {
      urls.push(url);
      return { success: true, message: '', data: userDashboard } as any;
    });
    const query = { start: 100, end: 200, granularity: 'hour' as const, token_id: 7, model: 'gpt 4o', user_id: 3, channel_id: 4 };
    expect(await provider.getDashboard(query)).toBe(userDashboard);
    await provider.getAdminDashboard(query);
    await provider.getDashboard({});
    expect(urls).toEqual([
      '/api/dashboard?start=100&end=200&granularity=hour&token_id=7&model=gpt+4o',
      '/api/dashboard/admin?start=100&end=200&granularity=hour&user_id=3&token_id=7&model=gpt+4o&channel_id=4',
      '/api/dashboard',
    ]);
  });
});

describe('dashboard view in the URL', () => {
  it('ignores what it cannot use and keeps admin filters to admins', () => {
    const view = viewFromSearch(new URLSearchParams('range=year&granularity=week&token_id=-3&model=%20gpt-4o%20&user_id=2&channel_id=x'));
    expect(view).toEqual({ range: '7d', granularity: undefined, token_id: undefined, model: 'gpt-4o', user_id: 2, channel_id: undefined });
    expect(queryOfView(view, false, 1_000_000)).toEqual({ start: 1_000_000 - 7 * 24 * 3600, end: 1_000_000, model: 'gpt-4o' });
    expect(queryOfView(view, true, 1_000_000)).toMatchObject({ user_id: 2 });
  });
});

describe('dashboard strings', () => {
  const keysOf = (value: unknown, prefix = ''): string[] =>
    value !== null && typeof value === 'object'
      ? Object.entries(value as Record<string, unknown>).flatMap(([key, child]) => keysOf(child, prefix ? `${prefix}.${key}` : key))
      : [prefix];
  const valueOf = (bundle: unknown, key: string) => key.split('.').reduce<any>((node, part) => node[part], bundle) as string;

  it('have the same keys in English and Chinese, every one translated', () => {
    const english = keysOf(DASHBOARD_MESSAGES.en).sort();
    expect(keysOf(DASHBOARD_MESSAGES.zh).sort()).toEqual(english);
    for (const key of english) {
      const chinese = valueOf(DASHBOARD_MESSAGES.zh, key);
      expect(chinese, key).not.toBe('');
      // the same placeholders on both sides
      expect(chinese.match(/%\{\w+\}/g)?.sort(), key).toEqual(
        valueOf(DASHBOARD_MESSAGES.en, key)
          .match(/%\{\w+\}/g)
          ?.sort(),
      );
    }
  });

  it('interpolate as polyglot does', () => {
    expect(interpolate('%{count} requests', { count: '1,024' })).toBe('1,024 requests');
    expect(interpolate('%{start} to %{end}', { start: 'a' })).toBe('a to %{end}');
  });
});
