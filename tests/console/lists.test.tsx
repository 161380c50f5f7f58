// The lists' shared frame: cards below the small breakpoint with every row
// action reachable, a tap opening the record, the facet chip that clears a
// kept search, and the table's compact actions with their labels.
import { fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { afterEach, describe, expect, it } from 'vitest';
import { dataProvider } from '../../src/dataProvider';
import { i18nProvider } from '../../src/i18n';
import { ChannelList } from '../../src/resources/channel/ChannelList';
import { lightTheme } from '../../src/theme';
import { screenWidth } from './screenWidth';
import { server } from './setup';

const channels = [
  {
    id: 2,
    name: 'azure-east',
    type: 3,
    status: 1,
    group: 'default',
    response_time: 0,
    test_time: 1700000000,
    test_error: 'could not reach upstream: connect ECONNREFUSED',
    balance: 0,
    priority: 0,
  },
  {
    id: 1,
    name: 'openai-main',
    type: 1,
    status: 2,
    group: 'default,vip',
    response_time: 420,
    test_time: 1700000000,
    test_error: '',
    balance: 12.5,
    priority: 5,
  },
];

function Where() {
  return <div data-testid="location">{useLocation().pathname}</div>;
}

function renderChannels(store = memoryStore(), entry = '/channel') {
  localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
  const seen: URL[] = [];
  server.events.on('request:start', ({ request }) => {
    seen.push(new URL(request.url));
  });
  server.use(
    http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: channels })),
    http.get('*/api/channel/search', () => HttpResponse.json({ success: true, message: '', data: channels.slice(0, 1) })),
    http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default', 'vip'] })),
  );
  render(
    <MemoryRouter initialEntries={[entry]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={store} theme={lightTheme}>
        <ResourceContextProvider value="channel">
          <Routes>
            <Route path="/channel" element={<ChannelList />} />
            <Route path="*" element={<Where />} />
          </Routes>
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
  return seen;
}

// eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back after each test, never called
const original = window.matchMedia;
afterEach(() => {
  window.matchMedia = original;
});

describe('lists on a phone', () => {
  it('shows cards, each with every action (the rest in "more") and the last test error', async () => {
    screenWidth(390);
    renderChannels();
    const cards = await screen.findAllByTestId('list-card');
    expect(cards).toHaveLength(2);
    expect(document.querySelector('table')).toBeNull();
    const first = cards[0];
    expect(within(first).getByText('azure-east')).toBeInTheDocument();
    // a failed test reads Failed, with the reason, not Untested
    expect(within(first).getByLabelText('Failed: could not reach upstream: connect ECONNREFUSED')).toHaveTextContent('Failed');
    for (const name of ['Test', 'Disable', 'Edit', 'More actions']) expect(within(first).getByRole('button', { name })).toBeInTheDocument();
    expect(within(cards[1]).getByRole('button', { name: 'Enable' })).toBeInTheDocument();
    fireEvent.click(within(first).getByRole('button', { name: 'More actions' }));
    const menu = await screen.findByRole('menu');
    expect(within(menu).getByRole('menuitem', { name: 'Update balance' })).toBeInTheDocument();
    fireEvent.click(within(menu).getByRole('menuitem', { name: 'Delete' }));
    // delete asks first, and opening the menu did not open the card
    expect(await screen.findByText('Delete this channel?')).toBeInTheDocument();
    expect(screen.queryByTestId('location')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    fireEvent.click(within(first).getByText('azure-east'));
    expect(await screen.findByTestId('location')).toHaveTextContent('/channel/edit/2');
  });
});

describe('lists on a desktop', () => {
  it('a table with icon actions, selection, and a row click that opens the record', async () => {
    screenWidth(1440);
    renderChannels();
    const row = (await screen.findByText('openai-main')).closest('tr') as HTMLElement;
    expect(screen.queryByTestId('card-list')).toBeNull();
    for (const name of ['Test', 'Enable', 'Edit', 'More actions']) expect(within(row).getByRole('button', { name })).toBeInTheDocument();
    expect(within(row).getByRole('checkbox')).toBeInTheDocument();
    fireEvent.click(within(row).getByText('openai-main'));
    expect(await screen.findByTestId('location')).toHaveTextContent('/channel/edit/1');
  });

  it('an empty list says so in a sentence, and one emptied by its filters offers to clear them', async () => {
    screenWidth(1440);
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    server.use(
      http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: [] })),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default'] })),
    );
    const store = memoryStore({ 'channel.listParams': { filter: { status: 2 }, sort: 'id', order: 'DESC', page: 1, perPage: 10 } });
    render(
      <MemoryRouter initialEntries={['/channel']}>
        <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={store} theme={lightTheme}>
          <ResourceContextProvider value="channel">
            <ChannelList />
          </ResourceContextProvider>
        </AdminContext>
      </MemoryRouter>,
    );
    expect(await screen.findByText('No channels match these filters.')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(await screen.findByText('No channels yet.')).toBeInTheDocument();
  });

  it('a search kept from an earlier visit shows as a chip, and clearing it reloads the full list', async () => {
    screenWidth(1440);
    // what react-admin keeps of the last visit (its store is the browser's local storage)
    const store = memoryStore({
      'channel.listParams': { filter: { q: 'azure', status: 1 }, sort: 'id', order: 'DESC', page: 1, perPage: 10 },
    });
    const seen = renderChannels(store);
    expect(await screen.findByText('Search: azure')).toBeInTheDocument();
    expect(screen.getByText('Status: Enabled')).toBeInTheDocument();
    await expect
      .poll(() => seen.some((url) => url.pathname === '/api/channel/search' && url.search === '?keyword=azure&status=1'))
      .toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Clear all' }));
    // a shared two-core machine renders slowly: give the list its time
    await expect.poll(() => seen.some((url) => url.pathname === '/api/channel/' && url.search === '?p=0'), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => screen.queryByTestId('active-filters'), { timeout: 15_000 }).toBeNull();
  });
});
