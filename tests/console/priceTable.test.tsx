// The settings' Prices tab against a fake API (msw): the price table lists the
// models the channels serve (GET /api/pricing/defaults' `served`) unless "show
// all models" is on, searches them, and saves an edited or reset row through
// the option save path (PUT /api/option/, one call per ratio option changed).
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { AdminContext } from 'react-admin';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { i18nProvider } from '../../src/i18n';
import SettingPage from '../../src/settings/SettingPage';
import { server } from './setup';
import { openSettingTab, optionHandlers, personalTabHandlers } from './settingPage';

let puts: Array<{ key: string; value: string }>;

// what GET /api/pricing/defaults says of four models: two the catalog prices, one of the built-in table, one nobody
// prices; a channel serves the first three
const DEFAULT_PRICES = [
  { model: 'claude-sonnet-4-5', model_ratio: 1.5, completion_ratio: 5, cache_read_ratio: 0.1, cache_write_ratio: 1.25, served: true },
  { model: 'gpt-4o-mini', model_ratio: 0.075, completion_ratio: 4, cache_read_ratio: 0.5, served: true },
  { model: 'qwen-max', model_ratio: 0.8, completion_ratio: 4, served: true },
  { model: 'house-model', completion_ratio: 1 },
];

function serveOptions(overrides: Record<string, string> = {}, defaults: unknown[] = DEFAULT_PRICES) {
  puts = [];
  server.use(
    ...optionHandlers(puts, overrides),
    http.get('*/api/status', () => HttpResponse.json({ success: true, message: '', data: {} })),
    http.get('*/api/pricing/defaults', () => HttpResponse.json({ success: true, message: '', data: defaults })),
    ...personalTabHandlers(),
  );
}

const openPrices = () => openSettingTab('Prices');

const listedModels = () =>
  within(screen.getByRole('table', { name: 'Model prices' }))
    .queryAllByRole('row')
    .slice(1)
    .map((row) => row.getAttribute('data-testid'));

describe('the Prices tab', () => {
  it('lists the models the channels serve by default, and every model with "show all models"', async () => {
    serveOptions();
    const user = await openPrices();
    await screen.findByRole('table', { name: 'Model prices' });
    const showAll = screen.getByRole('switch', { name: 'Show all models' });
    expect(showAll).not.toBeChecked();
    expect(listedModels()).toEqual(['price-row-claude-sonnet-4-5', 'price-row-gpt-4o-mini', 'price-row-qwen-max']);
    await user.click(showAll);
    expect(listedModels()).toEqual(['price-row-claude-sonnet-4-5', 'price-row-gpt-4o-mini', 'price-row-qwen-max', 'price-row-house-model']);
    // the search narrows whichever list is shown
    await user.type(screen.getByRole('textbox', { name: 'Search models' }), 'house');
    expect(listedModels()).toEqual(['price-row-house-model']);
    await user.click(showAll);
    expect(listedModels()).toEqual([]);
    expect(screen.getByText('No model matches “house”.')).toBeInTheDocument();
  });

  it('says when no channel serves a model yet, and how to price one anyway', async () => {
    serveOptions(
      {},
      DEFAULT_PRICES.map(({ model, completion_ratio }) => ({ model, completion_ratio })),
    );
    await openPrices();
    await screen.findByRole('table', { name: 'Model prices' });
    expect(listedModels()).toEqual([]);
    expect(screen.getByText(/No enabled channel serves a model yet/)).toBeInTheDocument();
  });

  it("shows each model's prices in dollars per million tokens and where they come from", async () => {
    serveOptions({ ModelRatio: JSON.stringify({ 'qwen-max': 0.8, 'gpt-4o-mini': 0.1 }), CacheWriteRatio: '{"house-model": 2}' });
    const user = await openPrices();
    await screen.findByRole('table', { name: 'Model prices' });
    // house-model is served by no channel: listed once every model is asked for
    await user.click(screen.getByRole('switch', { name: 'Show all models' }));
    const table = screen.getByRole('table', { name: 'Model prices' });
    const row = (model: string) => within(table).getByTestId(`price-row-${model}`);
    // the catalog's $3 / $15 / $0.30 / $3.75
    expect(
      ['input', 'output', 'cache_read', 'cache_write'].map((column) => screen.getByTestId(`claude-sonnet-4-5-${column}`).textContent),
    ).toEqual(['$3.00', '$15.00', '$0.30', '$3.75']);
    expect(within(row('claude-sonnet-4-5')).getByText('Catalog')).toBeInTheDocument();
    // ModelRatio 0.1 over the catalog's 0.075: $0.20 in, the catalog's shares for the rest
    expect(['input', 'output', 'cache_read'].map((column) => screen.getByTestId(`gpt-4o-mini-${column}`).textContent)).toEqual([
      '$0.20',
      '$0.80',
      '$0.10',
    ]);
    expect(within(row('gpt-4o-mini')).getByText('Override')).toBeInTheDocument();
    // the built-in table's entry in ModelRatio is the default, not an override
    expect(within(row('qwen-max')).getByText('Catalog')).toBeInTheDocument();
    expect(screen.getByTestId('house-model-input').textContent).toBe('—');
    expect(within(row('house-model')).getByText('Override')).toBeInTheDocument();
  });

  // editing a row in the whole settings page is the slowest of these under jsdom
  it('saves an edited row as ratio entries, keeping every other entry, and sends only the options that changed', async () => {
    serveOptions({ ModelRatio: JSON.stringify({ 'qwen-max': 0.8, 'some-model': 3 }), CompletionRatio: '{"gpt-4o": 4}' });
    const user = await openPrices();
    await screen.findByRole('table', { name: 'Model prices' });
    await user.click(screen.getByRole('button', { name: 'Edit the prices of claude-sonnet-4-5' }));
    const price = (name: string) => screen.getByRole('spinbutton', { name: `${name} price of claude-sonnet-4-5` });
    expect(price('Input').getAttribute('value')).toBe('3');
    await user.clear(price('Input'));
    await user.type(price('Input'), '4');
    await user.clear(price('Output'));
    await user.type(price('Output'), '16');
    await user.clear(price('Cache-write'));
    await user.click(within(screen.getByTestId('price-row-claude-sonnet-4-5')).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(puts.map((put) => put.key)).toEqual(['ModelRatio', 'CompletionRatio', 'CacheReadRatio']));
    const sent = Object.fromEntries(puts.map((put) => [put.key, JSON.parse(put.value) as Record<string, number>]));
    // $4 in = ratio 2; $16 out = 4 x input; the cached $0.30 kept as typed = 0.075 of input; the blank cache write keeps the catalog's share
    expect(sent.ModelRatio).toEqual({ 'qwen-max': 0.8, 'some-model': 3, 'claude-sonnet-4-5': 2 });
    expect(sent.CompletionRatio).toEqual({ 'gpt-4o': 4, 'claude-sonnet-4-5': 4 });
    expect(sent.CacheReadRatio).toEqual({ 'claude-sonnet-4-5': 0.075 });
    expect(await screen.findByTestId('claude-sonnet-4-5-input')).toHaveTextContent('$4.00');
    expect(within(screen.getByTestId('price-row-claude-sonnet-4-5')).getByText('Override')).toBeInTheDocument();
  });

  it('refuses a paid output on a free input, and resets a row to the catalog', async () => {
    serveOptions({
      ModelRatio: JSON.stringify({ 'qwen-max': 1, 'gpt-4o-mini': 0.1 }),
      CompletionRatio: '{"gpt-4o-mini": 3, "gpt-4o": 4}',
      CacheReadRatio: '{"qwen-max": 0.2}',
    });
    const user = await openPrices();
    await screen.findByRole('table', { name: 'Model prices' });
    await user.click(screen.getByRole('button', { name: 'Edit the prices of gpt-4o-mini' }));
    await user.clear(screen.getByRole('spinbutton', { name: 'Input price of gpt-4o-mini' }));
    await user.type(screen.getByRole('spinbutton', { name: 'Input price of gpt-4o-mini' }), '0');
    await user.click(within(screen.getByTestId('price-row-gpt-4o-mini')).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText(/a model whose input is free cannot have a paid output/)).toBeInTheDocument();
    expect(puts).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Cancel' }));

    // reset: the catalog's model goes from both tables, the built-in one gets its default ratio back
    await user.click(screen.getByRole('button', { name: 'Reset gpt-4o-mini to the catalog price' }));
    await waitFor(() => expect(puts.map((put) => put.key)).toEqual(['ModelRatio', 'CompletionRatio']));
    expect(JSON.parse(puts[0].value)).toEqual({ 'qwen-max': 1 });
    expect(JSON.parse(puts[1].value)).toEqual({ 'gpt-4o': 4 });
    await user.click(screen.getByRole('button', { name: 'Reset qwen-max to the catalog price' }));
    await waitFor(() => expect(puts).toHaveLength(4));
    expect(puts.slice(2).map((put) => [put.key, JSON.parse(put.value)])).toEqual([
      ['ModelRatio', { 'qwen-max': 0.8 }],
      ['CacheReadRatio', {}],
    ]);
    expect(screen.getByRole('button', { name: 'Reset qwen-max to the catalog price' })).toBeDisabled();
  });

  it('narrows the price table to the models a search matches', async () => {
    serveOptions();
    const user = await openPrices();
    const table = await screen.findByRole('table', { name: 'Model prices' });
    await user.type(screen.getByRole('textbox', { name: 'Search models' }), 'GPT');
    expect(
      within(table)
        .getAllByRole('row')
        .map((row) => row.getAttribute('data-testid')),
    ).toEqual([null, 'price-row-gpt-4o-mini']);
  });
});

describe('the Prices tab in Chinese', () => {
  it('names the tab, the switch and the table in Chinese', async () => {
    serveOptions();
    await i18nProvider.changeLocale('zh');
    try {
      localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', role: 100 }));
      render(
        <MemoryRouter>
          <AdminContext i18nProvider={i18nProvider}>
            <SettingPage />
          </AdminContext>
        </MemoryRouter>,
      );
      await userEvent.setup().click(await screen.findByRole('tab', { name: '价格' }));
      expect(await screen.findByRole('table', { name: '模型价格' })).toBeInTheDocument();
      expect(screen.getByRole('switch', { name: '显示全部模型' })).toBeInTheDocument();
    } finally {
      await i18nProvider.changeLocale('en');
    }
  });
});
