// The "Models and prices" page: the group's models from GET /api/pricing in
// dollars per million tokens, a dash where a cache price is unknown, a search
// that narrows the table, and the same page in Chinese.
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore } from 'react-admin';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { authProvider } from '../../src/authProvider';
import { storeUser } from '../../src/dataProvider/storage';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import PricingPage from '../../src/pages/PricingPage';
import { formatDollars } from '../../src/layout/priceTable';
import { server } from './setup';

const PRICES = [
  { model: 'claude-sonnet-4-5', input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, source: 'catalog' },
  { model: 'gpt-3.5-turbo', input: 0.5, output: 1.5, source: 'catalog' },
  { model: 'gpt-4o-mini', input: 0.15, output: 0.6, cache_read: 0.075, source: 'option' },
];

function renderPricing() {
  storeUser({ id: 2, username: 'someone', display_name: 'someone', role: 1, status: 1, group: 'default' } as never);
  server.use(http.get('*/api/pricing', () => HttpResponse.json({ success: true, message: '', data: PRICES })));
  render(
    <MemoryRouter initialEntries={['/pricing']}>
      <AdminContext dataProvider={dataProvider} authProvider={authProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <Routes>
          <Route path="/pricing" element={<PricingPage />} />
        </Routes>
      </AdminContext>
    </MemoryRouter>,
  );
}

describe('models and prices', () => {
  it('shows every model of the group with its prices per million tokens', async () => {
    renderPricing();
    const table = await screen.findByRole('table', { name: 'Models and prices' });
    expect(within(table).getAllByRole('row')).toHaveLength(4);
    expect(screen.getByTestId('claude-sonnet-4-5-input').textContent).toBe('$3.00');
    expect(screen.getByTestId('claude-sonnet-4-5-cache_write').textContent).toBe('$3.75');
    expect(screen.getByTestId('gpt-4o-mini-cache_read').textContent).toBe('$0.075');
    // no cache price known: a dash, not a made-up number
    expect(screen.getByTestId('gpt-3.5-turbo-cache_read').textContent).toBe('—');
    expect(screen.getByText('3 of 3 models')).toBeInTheDocument();
  });

  it('narrows the table to the models a search matches, and says when none does', async () => {
    renderPricing();
    await screen.findByRole('table', { name: 'Models and prices' });
    const search = screen.getByRole('textbox', { name: 'Search models' });
    await userEvent.type(search, 'GPT');
    expect(screen.queryByTestId('claude-sonnet-4-5-input')).toBeNull();
    expect(screen.getByText('2 of 3 models')).toBeInTheDocument();
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
