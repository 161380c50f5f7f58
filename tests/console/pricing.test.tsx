// The "Models and prices" page: the group's models from GET /api/pricing in
// dollars per million tokens, a dash where a cache price is unknown, the APIs
// each is reached through, a search that narrows the table, the same page in
// Chinese, and the page and its menu item for visitors when prices are public.
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientStatus } from '../../common/options';
import { authProvider } from '../../src/authProvider';
import { clearStoredUser, storeUser } from '../../src/dataProvider/storage';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import PricingPage from '../../src/pages/PricingPage';
import { formatDollars } from '../../src/layout/priceTable';
import { StatusProvider } from '../../src/layout/status';
import { TopBar } from '../../src/layout/TopBar';
import { MENU_ITEMS } from '../../src/menu';
import { server } from './setup';

const CHAT = ['chat', 'responses', 'messages', 'gemini'];
const PRICES = [
  { model: 'claude-sonnet-4-5', input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, source: 'catalog', endpoints: CHAT },
  { model: 'gpt-3.5-turbo', input: 0.5, output: 1.5, source: 'catalog', endpoints: CHAT },
  { model: 'gpt-4o-mini', input: 0.15, output: 0.6, cache_read: 0.075, source: 'option', endpoints: CHAT },
  { model: 'text-embedding-3-small', input: 0.02, output: 0.02, source: 'catalog', endpoints: ['embeddings'] },
];

/** The page at /pricing, signed in unless `visitor`, with the status saying whether prices are public. */
function renderPricing({ visitor = false, publicPricing = false } = {}) {
  if (visitor) clearStoredUser();
  else storeUser({ id: 2, username: 'someone', display_name: 'someone', role: 1, status: 1, group: 'default' } as never);
  server.use(http.get('*/api/pricing', () => HttpResponse.json({ success: true, message: '', data: PRICES })));
  render(
    <StatusProvider load={async () => ({ public_pricing: publicPricing }) as ClientStatus}>
      <MemoryRouter initialEntries={['/pricing']}>
        <AdminContext dataProvider={dataProvider} authProvider={authProvider} i18nProvider={i18nProvider} store={memoryStore()}>
          <Routes>
            <Route path="/pricing" element={<PricingPage />} />
            <Route path="/login" element={<p>login page</p>} />
          </Routes>
        </AdminContext>
      </MemoryRouter>
    </StatusProvider>,
  );
}

afterEach(() => localStorage.clear());

describe('models and prices', () => {
  it('shows every model of the group with its prices per million tokens', async () => {
    renderPricing();
    const table = await screen.findByRole('table', { name: 'Models and prices' });
    expect(within(table).getAllByRole('row')).toHaveLength(5);
    expect(screen.getByTestId('claude-sonnet-4-5-input').textContent).toBe('$3.00');
    expect(screen.getByTestId('claude-sonnet-4-5-cache_write').textContent).toBe('$3.75');
    expect(screen.getByTestId('gpt-4o-mini-cache_read').textContent).toBe('$0.075');
    // no cache price known: a dash, not a made-up number
    expect(screen.getByTestId('gpt-3.5-turbo-cache_read').textContent).toBe('—');
    expect(screen.getByText('4 of 4 models')).toBeInTheDocument();
  });

  it('says which endpoints reach each model', async () => {
    renderPricing();
    const table = await screen.findByRole('table', { name: 'Models and prices' });
    expect(within(table).getByRole('columnheader', { name: 'Endpoints' })).toBeInTheDocument();
    expect(screen.getByTestId('gpt-4o-mini-endpoints').textContent).toBe('chat · Responses · Messages · Gemini');
    expect(screen.getByTestId('text-embedding-3-small-endpoints').textContent).toBe('embeddings');
    // each name tells where the endpoint is
    expect(within(screen.getByTestId('text-embedding-3-small-endpoints')).getByTitle('POST /v1/embeddings')).toBeInTheDocument();
  });

  it('narrows the table to the models a search matches, and says when none does', async () => {
    renderPricing();
    await screen.findByRole('table', { name: 'Models and prices' });
    const search = screen.getByRole('textbox', { name: 'Search models' });
    await userEvent.type(search, 'GPT');
    expect(screen.queryByTestId('claude-sonnet-4-5-input')).toBeNull();
    expect(screen.getByText('2 of 4 models')).toBeInTheDocument();
    await userEvent.clear(search);
    await userEvent.type(search, 'gemini');
    expect(screen.getByText('No model matches “gemini”.')).toBeInTheDocument();
  });

  it('speaks Chinese', async () => {
    await i18nProvider.changeLocale('zh');
    try {
      renderPricing();
      expect(await screen.findByRole('table', { name: '模型与价格' })).toBeInTheDocument();
      expect(screen.getByRole('textbox', { name: '搜索模型' })).toBeInTheDocument();
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });

  it('writes dollars with two decimals, more only where a price needs them', () => {
    expect([formatDollars(2.5), formatDollars(0.08), formatDollars(0.075), formatDollars(15), formatDollars(undefined)]).toEqual([
      '$2.50',
      '$0.08',
      '$0.075',
      '$15.00',
      '—',
    ]);
  });
});

describe('models and prices for visitors', () => {
  it('shows a visitor the price list when the operator publishes prices', async () => {
    renderPricing({ visitor: true, publicPricing: true });
    expect(await screen.findByRole('table', { name: 'Models and prices' })).toBeInTheDocument();
    expect(screen.getByText(/Sign in to see the prices of your own group/)).toBeInTheDocument();
    expect(screen.getByTestId('claude-sonnet-4-5-input').textContent).toBe('$3.00');
    expect(screen.getByTestId('text-embedding-3-small-endpoints').textContent).toBe('embeddings');
  });

  it('sends a visitor to sign in when prices are not public', async () => {
    renderPricing({ visitor: true, publicPricing: false });
    expect(await screen.findByText('login page')).toBeInTheDocument();
    expect(screen.queryByRole('table', { name: 'Models and prices' })).toBeNull();
  });

  it('puts Models and prices in the top menu of a visitor only while prices are public', async () => {
    const renderBar = (publicPricing: boolean) =>
      render(
        <StatusProvider load={async () => ({ public_pricing: publicPricing }) as ClientStatus}>
          <MemoryRouter>
            <AdminContext authProvider={authProvider} i18nProvider={i18nProvider} store={memoryStore()}>
              <TopBar menu={MENU_ITEMS} />
            </AdminContext>
          </MemoryRouter>
        </StatusProvider>,
      );
    const menuLink = () => within(screen.getByRole('navigation', { name: 'main' })).queryByRole('link', { name: 'Models and prices' });
    const first = renderBar(true);
    await waitFor(() => expect(menuLink()).toHaveAttribute('href', '/pricing'));
    first.unmount();
    localStorage.clear();
    renderBar(false);
    // the status has come (Home is always there) and the item is not
    await screen.findByRole('link', { name: 'Home' });
    await waitFor(() => expect(JSON.parse(localStorage.getItem('status') ?? '{}').public_pricing).toBe(false));
    expect(menuLink()).toBeNull();
  });
});
