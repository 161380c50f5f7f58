// The data provider's URLs, bodies and envelope handling, pinned against a fake API.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { createDataProvider } from '../../src/dataProvider';
import { server } from './setup';

const provider = createDataProvider();

function recordRequests() {
  const seen: Array<{ method: string; url: string; body: unknown }> = [];
  server.events.on('request:start', async ({ request }) => {
    const url = new URL(request.url);
    const text = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.clone().text();
    seen.push({ method: request.method, url: url.pathname + url.search, body: text ? JSON.parse(text) : undefined });
  });
  return seen;
}

const rows = (count: number, offset = 0) => Array.from({ length: count }, (_, index) => ({ id: offset + count - index, name: `t${index}` }));

describe('dataProvider', () => {
  it('getList maps 1-based pages onto ?p= and infers more pages from a full page', async () => {
    server.use(
      http.get('*/api/token/', ({ request }) => {
        const page = new URL(request.url).searchParams.get('p');
        return HttpResponse.json({ success: true, message: '', data: page === '0' ? rows(10, 7) : rows(7) });
      }),
    );
    const seen = recordRequests();
    const first = await provider.getList('token', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'DESC' }, filter: {} });
    expect(first.data).toHaveLength(10);
    expect(first.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false });
    expect(first.total).toBeUndefined();
    const second = await provider.getList('token', { pagination: { page: 2, perPage: 10 }, sort: { field: 'id', order: 'DESC' }, filter: {} });
    expect(second.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });
    expect(second.total).toBe(17);
    expect(seen.map((request) => request.url)).toEqual(['/api/token/?p=0', '/api/token/?p=1']);
  });

  it('sorts the loaded rows on the client by the requested column', async () => {
    server.use(
      http.get('*/api/user/', () =>
        HttpResponse.json({ success: true, message: '', data: [{ id: 3, username: 'carol', quota: 5 }, { id: 2, username: 'bob', quota: 50 }, { id: 1, username: 'amy', quota: 7 }] }),
      ),
    );
    const byName = await provider.getList('user', { pagination: { page: 1, perPage: 10 }, sort: { field: 'username', order: 'ASC' }, filter: {} });
    expect(byName.data.map((row) => row.username)).toEqual(['amy', 'bob', 'carol']);
    const byQuota = await provider.getList('user', { pagination: { page: 1, perPage: 10 }, sort: { field: 'quota', order: 'DESC' }, filter: {} });
    expect(byQuota.data.map((row) => row.quota)).toEqual([50, 7, 5]);
  });

  it('getList with a search filter calls /search?keyword=', async () => {
    server.use(http.get('*/api/channel/search', () => HttpResponse.json({ success: true, message: '', data: rows(2) })));
    const seen = recordRequests();
    const result = await provider.getList('channel', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'DESC' }, filter: { q: 'gpt 4' } });
    expect(seen[0].url).toBe('/api/channel/search?keyword=gpt+4');
    expect(result.data).toHaveLength(2);
    expect(result.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false });
  });

  it('getOne, create, update (full and status only) and delete use the exact methods, URLs and bodies', async () => {
    server.use(
      http.get('*/api/redemption/5', () => HttpResponse.json({ success: true, message: '', data: { id: 5, name: 'gift' } })),
      http.post('*/api/redemption/', () => HttpResponse.json({ success: true, message: '', data: ['key-a', 'key-b'] })),
      http.put('*/api/redemption/', ({ request }) => {
        const statusOnly = new URL(request.url).searchParams.get('status_only');
        return HttpResponse.json({ success: true, message: '', data: statusOnly ? { id: 5, status: 2 } : { id: 5, name: 'renamed', quota: 9 } });
      }),
      http.delete('*/api/redemption/5/', () => HttpResponse.json({ success: true, message: '' })),
    );
    const seen = recordRequests();
    expect((await provider.getOne('redemption', { id: 5 })).data).toEqual({ id: 5, name: 'gift' });
    const created = await provider.create('redemption', { data: { name: 'gift', quota: 100000, count: 2 } });
    expect(created.data).toMatchObject({ name: 'gift', created: ['key-a', 'key-b'] });
    const updated = await provider.update('redemption', { id: 5, data: { name: 'renamed', quota: 9 }, previousData: { id: 5, name: 'gift' } });
    expect(updated.data).toMatchObject({ id: 5, name: 'renamed', quota: 9 });
    await provider.update('redemption', { id: 5, data: { status: 2 }, previousData: { id: 5 }, meta: { statusOnly: true } });
    await provider.delete('redemption', { id: 5, previousData: { id: 5 } });
    expect(seen).toEqual([
      { method: 'GET', url: '/api/redemption/5', body: undefined },
      { method: 'POST', url: '/api/redemption/', body: { name: 'gift', quota: 100000, count: 2 } },
      { method: 'PUT', url: '/api/redemption/', body: { name: 'renamed', quota: 9, id: 5 } },
      { method: 'PUT', url: '/api/redemption/?status_only=true', body: { id: 5, status: 2 } },
      { method: 'DELETE', url: '/api/redemption/5/', body: undefined },
    ]);
  });

  it('rejects with the server message when the envelope says success: false', async () => {
    server.use(http.get('*/api/token/9', () => HttpResponse.json({ success: false, message: 'record not found' })));
    await expect(provider.getOne('token', { id: 9 })).rejects.toMatchObject({ message: 'record not found', status: 200 });
  });

  it('uses the admin log endpoint for admins and the self endpoint for users, with the filters', async () => {
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [] })),
      http.get('*/api/log/self/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    );
    const seen = recordRequests();
    const params = { pagination: { page: 3, perPage: 10 }, sort: { field: 'id', order: 'DESC' as const }, filter: { type: 2, username: 'bob', model_name: 'gpt-4' } };
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    await provider.getList('log', params);
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role: 1, status: 1 }));
    await provider.getList('log', params);
    expect(seen.map((request) => request.url)).toEqual([
      '/api/log/?p=2&type=2&username=bob&model_name=gpt-4',
      '/api/log/self/?p=2&type=2&model_name=gpt-4',
    ]);
  });

  it('login posts the credentials and returns the session user', async () => {
    server.use(
      http.post('*/api/user/login', async ({ request }) => {
        const body = (await request.json()) as { username: string };
        return HttpResponse.json({ success: true, message: '', data: { id: 1, username: body.username, display_name: 'Root', role: 100, status: 1 } });
      }),
    );
    expect(await provider.login({ username: 'root', password: 'pw-12345678' })).toEqual({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1 });
  });
});
