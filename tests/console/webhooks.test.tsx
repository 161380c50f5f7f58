// The webhook screens against a fake API in the simple-rest convention: the
// list with its test-event action, the create form that shows the secret
// once, and the delivery log with its redeliver action.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { AdminContext, memoryStore, Notification, ResourceContextProvider } from 'react-admin';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { consoleDataProvider as dataProvider } from '../../src/consoleDataProvider';
import { i18nProvider } from '../../src/i18n';
import { WebhookCreate } from '../../src/resources/webhook/WebhookCreate';
import { WebhookList } from '../../src/resources/webhook/WebhookList';
import { WebhookDeliveryList } from '../../src/resources/webhook_delivery/WebhookDeliveryList';
import { server } from './setup';

const hooks = [
  {
    id: 2,
    name: 'pager',
    url: 'https://ops.example.com/pager',
    events: ['channel.disabled', 'token.exhausted'],
    enabled: true,
    created_time: 1_700_000_000,
  },
  {
    id: 1,
    name: 'billing',
    url: 'https://billing.example.com/hook',
    events: ['user.balance_low'],
    enabled: false,
    created_time: 1_700_000_000,
  },
];
const deliveries = [
  {
    id: 11,
    webhook_id: 2,
    event_id: 'evt_b',
    event_type: 'channel.disabled',
    status: 'failed',
    attempts: 6,
    last_status_code: 500,
    last_error: 'HTTP 500',
    next_attempt_at: 0,
    created_time: 1_700_000_000,
    delivered_time: 0,
    payload: '{}',
  },
  {
    id: 10,
    webhook_id: 2,
    event_id: 'evt_a',
    event_type: 'webhook.test',
    status: 'delivered',
    attempts: 1,
    last_status_code: 200,
    last_error: '',
    next_attempt_at: 0,
    created_time: 1_700_000_000,
    delivered_time: 1_700_000_001,
    payload: '{}',
  },
];

function Where() {
  return <div data-testid="location">{useLocation().pathname}</div>;
}

/** Renders `element` at `entry` (its only route); any other path shows where the app went. */
function renderAt(entry: string, resource: string, element: React.ReactElement) {
  localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
  const seen: Array<{ method: string; url: string; body?: string }> = [];
  server.events.on('request:start', async ({ request }) => {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      url: decodeURIComponent(url.pathname + url.search),
      body: request.method === 'GET' ? undefined : await request.clone().text(),
    });
  });
  render(
    <MemoryRouter initialEntries={[entry]}>
      <AdminContext dataProvider={dataProvider} i18nProvider={i18nProvider} store={memoryStore()}>
        <ResourceContextProvider value={resource}>
          <Routes>
            <Route path={entry} element={element} />
            <Route path="*" element={<Where />} />
          </Routes>
          <Notification />
        </ResourceContextProvider>
      </AdminContext>
    </MemoryRouter>,
  );
  return seen;
}

describe('webhook screens', () => {
  it('lists webhooks from a simple-rest list with its total, and queues a test event for a row', async () => {
    server.use(
      http.get('*/api/webhook', () => HttpResponse.json(hooks, { headers: { 'Content-Range': 'webhook 0-1/2' } })),
      http.post('*/api/webhook/2/test', () => HttpResponse.json({ ...deliveries[1], id: 12, status: 'pending' }, { status: 201 })),
    );
    const seen = renderAt('/webhook', 'webhook', <WebhookList />);
    const row = (await screen.findByText('pager')).closest('tr')!;
    expect(within(row).getByText('https://ops.example.com/pager')).toBeInTheDocument();
    expect(within(row).getByText('Channel disabled')).toBeInTheDocument();
    expect(within(row).getByText('Token used up')).toBeInTheDocument();
    expect(screen.getByText('billing')).toBeInTheDocument();
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/webhook?filter={}&range=[0,9]&sort=["id","DESC"]' });
    fireEvent.click(within(row).getByRole('button', { name: 'Send test event' }));
    expect(await screen.findByText('Test event queued')).toBeInTheDocument();
    expect(seen.filter((request) => request.method === 'POST').map((request) => request.url)).toEqual(['/api/webhook/2/test']);
  });

  it('says "No webhooks yet." in a sentence when there are none, like the other lists', async () => {
    server.use(http.get('*/api/webhook', () => HttpResponse.json([], { headers: { 'Content-Range': 'webhook */0' } })));
    renderAt('/webhook', 'webhook', <WebhookList />);
    expect(await screen.findByText('No webhooks yet.')).toBeInTheDocument();
    expect(screen.queryByText(/No Webhooks found/)).toBeNull();
  });

  it('creates a webhook with the chosen events, sends no empty secret, and shows the generated secret once', async () => {
    let created: Record<string, unknown> | undefined;
    server.use(
      http.post('*/api/webhook', async ({ request }) => {
        created = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ id: 3, ...created, created_time: 1_700_000_000, secret: 'whsec_shown_once' }, { status: 201 });
      }),
      http.get('*/api/webhook', () => HttpResponse.json([], { headers: { 'Content-Range': 'webhook */0' } })),
    );
    renderAt('/webhook/create', 'webhook', <WebhookCreate />);
    fireEvent.change(await screen.findByLabelText(/^Name/), { target: { value: 'ops' } });
    fireEvent.change(screen.getByLabelText(/^URL/), { target: { value: 'https://ops.example.com/hook' } });
    fireEvent.click(screen.getByLabelText('Channel re-enabled'));
    fireEvent.click(screen.getByLabelText('Token used up'));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    const secret = await screen.findByTestId('webhook-secret');
    expect(secret).toHaveValue('whsec_shown_once');
    expect(screen.getByText('Copy the signing secret now')).toBeInTheDocument();
    expect(created).toEqual({
      name: 'ops',
      url: 'https://ops.example.com/hook',
      events: ['channel.enabled', 'token.exhausted'],
      enabled: true,
    });
    fireEvent.click(screen.getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/webhook'));
  });

  it('refuses an address that is not http(s) before sending anything', async () => {
    renderAt('/webhook/create', 'webhook', <WebhookCreate />);
    const seen: string[] = [];
    server.events.on('request:start', ({ request }) => {
      seen.push(request.method);
    });
    fireEvent.change(await screen.findByLabelText(/^Name/), { target: { value: 'ops' } });
    fireEvent.change(screen.getByLabelText(/^URL/), { target: { value: 'ftp://ops.example.com' } });
    fireEvent.click(screen.getByLabelText('Token used up'));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('enter an http:// or https:// address')).toBeInTheDocument();
    expect(seen.filter((method) => method === 'POST')).toEqual([]);
  });

  it('shows the delivery log with status, attempts and last answer, and redelivers a failed one', async () => {
    server.use(
      http.get('*/api/webhook_delivery', () => HttpResponse.json(deliveries, { headers: { 'Content-Range': 'webhook_delivery 0-1/2' } })),
      http.get('*/api/webhook', () => HttpResponse.json([hooks[0]], { headers: { 'Content-Range': 'webhook 0-0/1' } })),
      http.post('*/api/webhook_delivery/11/redeliver', () =>
        HttpResponse.json({ ...deliveries[0], id: 13, status: 'pending', attempts: 0 }, { status: 201 }),
      ),
    );
    const seen = renderAt('/webhook_delivery', 'webhook_delivery', <WebhookDeliveryList />);
    const failed = (await screen.findByText('HTTP 500')).closest('tr')!;
    expect(within(failed).getByText('Failed')).toBeInTheDocument();
    expect(within(failed).getByText('6')).toBeInTheDocument();
    expect(within(failed).getByText('500')).toBeInTheDocument();
    expect(within(failed).getByText('Channel disabled')).toBeInTheDocument();
    expect(await within(failed).findByText('pager')).toBeInTheDocument();
    const delivered = screen.getByText('Test event').closest('tr')!;
    expect(within(delivered).getByText('Delivered')).toBeInTheDocument();
    fireEvent.click(within(failed).getByRole('button', { name: 'Redeliver' }));
    expect(await screen.findByText('Delivery queued again')).toBeInTheDocument();
    expect(seen.filter((request) => request.method === 'POST').map((request) => request.url)).toEqual([
      '/api/webhook_delivery/11/redeliver',
    ]);
  });

  it('says it in Chinese too', async () => {
    const { messages } = await import('./messages');
    expect((messages.zh as any).webhooks.deliveries.status.failed).toBe('失败');
    expect((messages.zh as any).webhooks.events['token.exhausted']).toBe('令牌额度用尽');
  });
});
