// The resources in ra-data-simple-rest's convention: the data provider hands
// them to ra-data-simple-rest (exact URLs, Content-Range totals, bare JSON
// bodies) over the console's own fetch, while one-api's resources keep their
// wire format; refusals read as the same translated errors.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { createConsoleDataProvider as createDataProvider } from '../../src/consoleDataProvider';
import { SIMPLE_REST_RESOURCES } from '../../src/resources';
import { server } from './setup';

const provider = createDataProvider();

function recordRequests() {
  const seen: Array<{ method: string; url: string; body: unknown; credentials: string; range: string | null }> = [];
  server.events.on('request:start', async ({ request }) => {
    const url = new URL(request.url);
    const text = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.clone().text();
    seen.push({
      method: request.method,
      url: decodeURIComponent(url.pathname + url.search),
      body: text ? JSON.parse(text) : undefined,
      credentials: request.credentials,
      range: request.headers.get('range'),
    });
  });
  return seen;
}

const hook = (id: number) => ({
  id,
  name: `hook ${id}`,
  url: 'https://ops.example.com/hook',
  events: ['token.exhausted'],
  enabled: true,
  created_time: 1_700_000_000,
});

describe('simple-rest resources', () => {
  it('names webhooks and their deliveries as simple-rest resources, and nothing of one-api', () => {
    expect([...SIMPLE_REST_RESOURCES].sort()).toEqual(['webhook', 'webhook_delivery']);
    for (const resource of ['channel', 'token', 'redemption', 'user', 'log']) expect(SIMPLE_REST_RESOURCES.has(resource)).toBe(false);
  });

  it('getList sends sort, range and filter and reads the total from Content-Range', async () => {
    server.use(
      http.get('*/api/webhook', () => HttpResponse.json([hook(3), hook(2)], { headers: { 'Content-Range': 'webhook 25-26/27' } })),
    );
    const seen = recordRequests();
    const page = await provider.getList('webhook', {
      pagination: { page: 2, perPage: 25 },
      sort: { field: 'name', order: 'ASC' },
      filter: { enabled: true },
    });
    expect(page).toEqual({ data: [hook(3), hook(2)], total: 27 });
    expect(seen).toEqual([
      {
        method: 'GET',
        url: '/api/webhook?filter={"enabled":true}&range=[25,49]&sort=["name","ASC"]',
        body: undefined,
        credentials: 'same-origin',
        range: 'webhook=25-49',
      },
    ]);
  });

  it("getOne, getMany, getManyReference, create, update and delete use the convention's URLs and bare bodies", async () => {
    server.use(
      http.get('*/api/webhook/7', () => HttpResponse.json(hook(7))),
      http.get('*/api/webhook', () => HttpResponse.json([hook(7), hook(8)], { headers: { 'Content-Range': 'webhook 0-1/2' } })),
      http.get('*/api/webhook_delivery', () =>
        HttpResponse.json([{ id: 1, webhook_id: 7 }], { headers: { 'Content-Range': 'webhook_delivery 0-0/1' } }),
      ),
      http.post('*/api/webhook', async ({ request }) =>
        HttpResponse.json({ ...((await request.json()) as object), id: 9, secret: 'whsec_once' }, { status: 201 }),
      ),
      http.put('*/api/webhook/7', async ({ request }) => HttpResponse.json({ ...hook(7), ...((await request.json()) as object) })),
      http.delete('*/api/webhook/7', () => HttpResponse.json(hook(7))),
    );
    const seen = recordRequests();
    expect((await provider.getOne('webhook', { id: 7 })).data).toEqual(hook(7));
    expect((await provider.getMany('webhook', { ids: [7, 8] })).data.map((row) => row.id)).toEqual([7, 8]);
    const reference = await provider.getManyReference('webhook_delivery', {
      target: 'webhook_id',
      id: 7,
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(reference.total).toBe(1);
    const created = await provider.create('webhook', {
      data: { name: 'new', url: 'https://ops.example.com/hook', events: ['channel.disabled'] },
    });
    expect(created.data).toMatchObject({ id: 9, secret: 'whsec_once' });
    await provider.update('webhook', { id: 7, data: { name: 'renamed' }, previousData: hook(7) });
    await provider.delete('webhook', { id: 7, previousData: hook(7) });
    expect(seen.map(({ method, url, body }) => ({ method, url, body }))).toEqual([
      { method: 'GET', url: '/api/webhook/7', body: undefined },
      { method: 'GET', url: '/api/webhook?filter={"id":[7,8]}', body: undefined },
      { method: 'GET', url: '/api/webhook_delivery?filter={"webhook_id":7}&range=[0,9]&sort=["id","DESC"]', body: undefined },
      { method: 'POST', url: '/api/webhook', body: { name: 'new', url: 'https://ops.example.com/hook', events: ['channel.disabled'] } },
      { method: 'PUT', url: '/api/webhook/7', body: { name: 'renamed' } },
      { method: 'DELETE', url: '/api/webhook/7', body: undefined },
    ]);
    expect(seen.every((request) => request.credentials === 'same-origin')).toBe(true);
  });

  it('one-api resources keep ?p= and the envelope beside them', async () => {
    server.use(http.get('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: [{ id: 1, name: 't' }] })));
    const seen = recordRequests();
    const page = await provider.getList('token', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(page.data).toEqual([{ id: 1, name: 't' }]);
    expect(seen.map((request) => request.url)).toEqual(['/api/token/?p=0']);
  });

  it('a refusal reads as the translated message of its code, with its status', async () => {
    server.use(
      http.get('*/api/webhook', () =>
        HttpResponse.json({ success: false, message: 'insufficient permission', code: 'permission_denied' }, { status: 403 }),
      ),
    );
    await expect(
      provider.getList('webhook', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'DESC' }, filter: {} }),
    ).rejects.toMatchObject({
      status: 403,
      message: 'app.server_message.permission_denied',
    });
    server.use(
      http.post('*/api/webhook', () =>
        HttpResponse.json({ success: false, message: 'url must be an http:// or https:// address' }, { status: 400 }),
      ),
    );
    await expect(provider.create('webhook', { data: { url: 'ftp://x' } })).rejects.toMatchObject({
      status: 400,
      message: 'Error: url must be an http:// or https:// address',
    });
  });

  it('sends a test event and redelivers through typed methods', async () => {
    server.use(
      http.post('*/api/webhook/7/test', () =>
        HttpResponse.json({ id: 41, webhook_id: 7, event_type: 'webhook.test', status: 'pending' }, { status: 201 }),
      ),
      http.post('*/api/webhook_delivery/41/redeliver', () =>
        HttpResponse.json({ id: 42, webhook_id: 7, event_type: 'webhook.test', status: 'pending' }, { status: 201 }),
      ),
    );
    const seen = recordRequests();
    expect(await provider.sendTestWebhook(7)).toMatchObject({ id: 41 });
    expect(await provider.redeliverWebhook(41)).toMatchObject({ id: 42 });
    expect(seen.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'POST /api/webhook/7/test',
      'POST /api/webhook_delivery/41/redeliver',
    ]);
  });
});
