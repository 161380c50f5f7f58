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

const rows = (count: number, offset = 0) =>
  Array.from({ length: count }, (_, index) => ({ id: offset + count - index, name: `t${index}` }));

describe('dataProvider', () => {
  it('getList maps 1-based pages onto ?p= and infers more pages from a full page', async () => {
    server.use(
      http.get('*/api/token/', ({ request }) => {
        const page = new URL(request.url).searchParams.get('p');
        return HttpResponse.json({ success: true, message: '', data: page === '0' ? rows(10, 7) : rows(7) });
      }),
    );
    const seen = recordRequests();
    const first = await provider.getList('token', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(first.data).toHaveLength(10);
    expect(first.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false });
    expect(first.total).toBeUndefined();
    const second = await provider.getList('token', {
      pagination: { page: 2, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(second.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });
    expect(second.total).toBe(17);
    expect(seen.map((request) => request.url)).toEqual(['/api/token/?p=0', '/api/token/?p=1']);
  });

  it('sends sort, order and page size to the server, and leaves them out at their defaults', async () => {
    server.use(
      http.get('*/api/user/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            { id: 3, username: 'carol', quota: 50 },
            { id: 2, username: 'bob', quota: 7 },
          ],
        }),
      ),
      http.get('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: rows(25) })),
    );
    const seen = recordRequests();
    const byQuota = await provider.getList('user', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'quota', order: 'DESC' },
      filter: {},
    });
    // the server's order is kept as it came
    expect(byQuota.data.map((row) => row.username)).toEqual(['carol', 'bob']);
    await provider.getList('user', { pagination: { page: 2, perPage: 10 }, sort: { field: 'username', order: 'ASC' }, filter: {} });
    await provider.getList('user', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'ASC' }, filter: {} });
    // a column the server does not sort by is not sent
    await provider.getList('user', { pagination: { page: 1, perPage: 10 }, sort: { field: 'statistics', order: 'ASC' }, filter: {} });
    const wide = await provider.getList('channel', {
      pagination: { page: 2, perPage: 25 },
      sort: { field: 'balance', order: 'DESC' },
      filter: { status: 1, type: 8, group: 'vip', other: 'x' },
    });
    expect(wide.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: true });
    expect(seen.map((request) => request.url)).toEqual([
      '/api/user/?p=0&sort=quota&order=desc',
      '/api/user/?p=1&sort=username&order=asc',
      '/api/user/?p=0&sort=id&order=asc',
      '/api/user/?p=0',
      '/api/channel/?p=1&page_size=25&sort=balance&order=desc&status=1&type=8&group=vip',
    ]);
  });

  it('a search sends its sort and facets but no page size', async () => {
    server.use(http.get('*/api/token/search', () => HttpResponse.json({ success: true, message: '', data: rows(2) })));
    const seen = recordRequests();
    await provider.getList('token', {
      pagination: { page: 1, perPage: 50 },
      sort: { field: 'remain_quota', order: 'ASC' },
      filter: { q: 'lap', status: 2 },
    });
    expect(seen[0].url).toBe('/api/token/search?keyword=lap&sort=remain_quota&order=asc&status=2');
  });

  it('getList with a search filter calls /search?keyword=', async () => {
    server.use(http.get('*/api/channel/search', () => HttpResponse.json({ success: true, message: '', data: rows(2) })));
    const seen = recordRequests();
    const result = await provider.getList('channel', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: { q: 'gpt 4' },
    });
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
        return HttpResponse.json({
          success: true,
          message: '',
          data: statusOnly ? { id: 5, status: 2 } : { id: 5, name: 'renamed', quota: 9 },
        });
      }),
      http.delete('*/api/redemption/5/', () => HttpResponse.json({ success: true, message: '' })),
    );
    const seen = recordRequests();
    expect((await provider.getOne('redemption', { id: 5 })).data).toEqual({ id: 5, name: 'gift' });
    const created = await provider.create('redemption', { data: { name: 'gift', quota: 100000, count: 2 } });
    expect(created.data).toMatchObject({ name: 'gift', created: ['key-a', 'key-b'] });
    const updated = await provider.update('redemption', {
      id: 5,
      data: { name: 'renamed', quota: 9 },
      previousData: { id: 5, name: 'gift' },
    });
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

  it('sends a record id taken from the URL as the number the server wants', async () => {
    server.use(
      http.put('*/api/token/', () => HttpResponse.json({ success: true, message: '', data: null })),
      http.put('*/api/user/', () => HttpResponse.json({ success: true, message: '', data: null })),
    );
    const seen = recordRequests();
    await provider.update('token', { id: '12', data: { id: '12', name: 'renamed' }, previousData: { id: '12', name: 'old' } });
    await provider.update('token', { id: '12', data: { status: 2 }, previousData: { id: '12' }, meta: { statusOnly: true } });
    await provider.updateMany('user', { ids: ['12', '13'], data: { status: 1 } });
    expect(seen.map((request) => request.body)).toEqual([
      { id: 12, name: 'renamed' },
      { id: 12, status: 2 },
      { status: 1, id: 12 },
      { status: 1, id: 13 },
    ]);
  });

  it('bulk status changes and deletes of channels, tokens and codes are one POST /bulk each', async () => {
    server.use(
      http.post('*/api/redemption/bulk', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: { done: [4], failed: [{ id: 5, message: 'a used code cannot be changed' }] },
        }),
      ),
      http.post('*/api/:resource/bulk', async ({ request }) => {
        const body = (await request.clone().json()) as { ids: number[] };
        return HttpResponse.json({ success: true, message: '', data: { done: body.ids, failed: [] } });
      }),
    );
    const seen = recordRequests();
    expect(await provider.updateMany('channel', { ids: ['3', 4], data: { status: 2 } })).toEqual({ data: [3, 4] });
    expect(await provider.updateMany('token', { ids: [7], data: { status: 1 } })).toEqual({ data: [7] });
    expect(await provider.deleteMany('token', { ids: [7, 8] })).toEqual({ data: [7, 8] });
    await expect(provider.updateMany('redemption', { ids: [4, 5], data: { status: 2 } })).rejects.toMatchObject({
      message: 'Error: 1 of 2 not done (#5: a used code cannot be changed)',
    });
    expect(seen.map((request) => `${request.method} ${request.url} ${JSON.stringify(request.body)}`)).toEqual([
      'POST /api/channel/bulk {"ids":[3,4],"action":"disable"}',
      'POST /api/token/bulk {"ids":[7],"action":"enable"}',
      'POST /api/token/bulk {"ids":[7,8],"action":"delete"}',
      'POST /api/redemption/bulk {"ids":[4,5],"action":"disable"}',
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
    const params = {
      pagination: { page: 3, perPage: 10 },
      sort: { field: 'id', order: 'DESC' as const },
      filter: { type: 2, username: 'bob', model_name: 'gpt-4' },
    };
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    await provider.getList('log', params);
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role: 1, status: 1 }));
    await provider.getList('log', params);
    expect(seen.map((request) => request.url)).toEqual([
      '/api/log/?p=2&type=2&username=bob&model_name=gpt-4',
      '/api/log/self/?p=2&type=2&model_name=gpt-4',
    ]);
  });

  it('sends the log list its page size, sort and channel (admins only)', async () => {
    server.use(
      http.get('*/api/log/', () => HttpResponse.json({ success: true, message: '', data: [] })),
      http.get('*/api/log/self/', () => HttpResponse.json({ success: true, message: '', data: [] })),
    );
    const seen = recordRequests();
    const params = {
      pagination: { page: 1, perPage: 50 },
      sort: { field: 'quota', order: 'DESC' as const },
      filter: { channel: 4, token_name: 'laptop' },
    };
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', display_name: '', role: 100, status: 1 }));
    await provider.getList('log', params);
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role: 1, status: 1 }));
    await provider.getList('log', params);
    expect(seen.map((request) => request.url)).toEqual([
      '/api/log/?p=0&page_size=50&sort=quota&order=desc&token_name=laptop&channel=4',
      '/api/log/self/?p=0&page_size=50&sort=quota&order=desc&token_name=laptop',
    ]);
  });

  it('gives self log rows (all id 0 on the wire) distinct ids', async () => {
    server.use(
      http.get('*/api/log/self/', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            { id: 0, content: 'a' },
            { id: 0, content: 'b' },
          ],
        }),
      ),
    );
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'bob', display_name: '', role: 1, status: 1 }));
    const result = await provider.getList('log', {
      pagination: { page: 2, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(result.data.map((row) => row.id)).toEqual(['2-0', '2-1']);
  });

  it('logStat sends the list filters to the admin or the self stat endpoint', async () => {
    server.use(
      http.get('*/api/log/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 1234, token: 56 } })),
      http.get('*/api/log/self/stat', () => HttpResponse.json({ success: true, message: '', data: { quota: 7 } })),
    );
    const seen = recordRequests();
    const filter = { type: 2, username: 'bob', token_name: 'laptop', model_name: 'gpt-4', start_timestamp: 0, end_timestamp: 1700003600 };
    expect(await provider.logStat(filter, true)).toEqual({ quota: 1234, token: 56 });
    expect(await provider.logStat(filter, false)).toEqual({ quota: 7, token: 0 });
    expect(seen.map((request) => request.url)).toEqual([
      '/api/log/stat?type=2&username=bob&token_name=laptop&model_name=gpt-4&start_timestamp=0&end_timestamp=1700003600',
      '/api/log/self/stat?type=2&token_name=laptop&model_name=gpt-4&start_timestamp=0&end_timestamp=1700003600',
    ]);
  });

  it('always sends the bot-check token on register, verification code and password reset, empty when the check is off', async () => {
    server.use(
      http.post('*/api/user/register', () => HttpResponse.json({ success: true, message: '' })),
      http.get('*/api/verification', () => HttpResponse.json({ success: true, message: '' })),
      http.get('*/api/reset_password', () => HttpResponse.json({ success: true, message: '' })),
      http.get('*/api/user/search', () => HttpResponse.json({ success: true, message: '', data: [] })),
    );
    const seen = recordRequests();
    const payload = {
      username: 'alice',
      password: 'secret-pass',
      password2: 'secret-pass',
      email: '',
      verification_code: '',
      aff_code: '',
    };
    await provider.register(payload, '');
    await provider.register(payload);
    await provider.register(payload, 'tok en');
    await provider.sendVerificationCode('a@example.com', '');
    await provider.sendVerificationCode('a@example.com', 'tok');
    await provider.sendPasswordReset('a@example.com');
    await provider.sendPasswordReset('a@example.com', 'tok');
    // other queries still leave empty values out
    await provider.getList('user', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: { q: 'bob', role: '' },
    });
    expect(seen.map((request) => request.url)).toEqual([
      '/api/user/register?turnstile=',
      '/api/user/register?turnstile=',
      '/api/user/register?turnstile=tok+en',
      '/api/verification?email=a%40example.com&turnstile=',
      '/api/verification?email=a%40example.com&turnstile=tok',
      '/api/reset_password?email=a%40example.com&turnstile=',
      '/api/reset_password?email=a%40example.com&turnstile=tok',
      '/api/user/search?keyword=bob',
    ]);
  });

  it('login posts the credentials and returns the session user', async () => {
    server.use(
      http.post('*/api/user/login', async ({ request }) => {
        const body = (await request.json()) as { username: string };
        return HttpResponse.json({
          success: true,
          message: '',
          data: { id: 1, username: body.username, display_name: 'Root', role: 100, status: 1 },
        });
      }),
    );
    expect(await provider.login({ username: 'root', password: 'pw-12345678' })).toEqual({
      id: 1,
      username: 'root',
      display_name: 'Root',
      role: 100,
      status: 1,
    });
  });
});

describe('dataProvider: channel calls', () => {
  it('tests one channel: the time sits beside success, and a failed test still reports its time', async () => {
    server.use(
      http.get('*/api/channel/test/3/', () => HttpResponse.json({ success: true, message: '', time: 0.42 })),
      http.get('*/api/channel/test/4/', () =>
        HttpResponse.json({ success: false, message: 'type invalid_request_error, code invalid_api_key', time: 0.12 }),
      ),
      http.get('*/api/channel/test/5/', () => HttpResponse.json({ success: false, message: 'channel not found' }, { status: 500 })),
    );
    const seen = recordRequests();
    expect(await provider.testChannel(3)).toEqual({ success: true, message: '', time: 0.42 });
    expect(await provider.testChannel(4)).toEqual({
      success: false,
      message: 'type invalid_request_error, code invalid_api_key',
      time: 0.12,
    });
    await expect(provider.testChannel(5)).rejects.toMatchObject({ status: 500 });
    expect(seen.map((request) => request.url)).toEqual(['/api/channel/test/3/', '/api/channel/test/4/', '/api/channel/test/5/']);
  });

  it('starts testing all channels and updating all balances as jobs, follows them, updates one balance (top-level)', async () => {
    const job = (kind: string, state = 'running') => ({
      id: `${kind}-1`,
      kind,
      state,
      done: 0,
      total: 2,
      failures: [],
      started_at: 1,
      finished_at: 0,
    });
    server.use(
      http.get('*/api/channel/test', () => HttpResponse.json({ success: true, message: '', data: job('test') })),
      http.get('*/api/channel/update_balance/7/', () => HttpResponse.json({ success: true, message: '', balance: 99.5 })),
      // already running: refused, with the run to follow
      http.get('*/api/channel/update_balance', () =>
        HttpResponse.json({ success: false, message: 'balance update already running', data: job('balance') }),
      ),
      http.get('*/api/channel/jobs/:id', () =>
        HttpResponse.json({ success: true, message: '', data: { ...job('test', 'done'), done: 2 } }),
      ),
    );
    const seen = recordRequests();
    expect(await provider.testAllChannels()).toMatchObject({ id: 'test-1', state: 'running' });
    expect(await provider.updateChannelBalance(7)).toBe(99.5);
    expect(await provider.updateAllChannelBalances()).toMatchObject({ id: 'balance-1', kind: 'balance' });
    expect(await provider.channelJob('test-1')).toMatchObject({ state: 'done', done: 2, total: 2 });
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /api/channel/test',
      'GET /api/channel/update_balance/7/',
      'GET /api/channel/update_balance',
      'GET /api/channel/jobs/test-1',
    ]);
  });

  it('rejects with the server message when a balance query fails', async () => {
    server.use(http.get('*/api/channel/update_balance/8/', () => HttpResponse.json({ success: false, message: 'not implemented' })));
    await expect(provider.updateChannelBalance(8)).rejects.toMatchObject({ message: 'not implemented' });
  });

  it('reads the model list without an envelope and the group names with one', async () => {
    server.use(
      http.get('*/api/channel/models', () =>
        HttpResponse.json({
          object: 'list',
          data: [
            { id: 'gpt-3.5-turbo', object: 'model' },
            { id: 'gpt-4', object: 'model' },
          ],
        }),
      ),
      http.get('*/api/group/', () => HttpResponse.json({ success: true, message: '', data: ['default', 'vip'] })),
    );
    const seen = recordRequests();
    expect(await provider.channelModels()).toEqual(['gpt-3.5-turbo', 'gpt-4']);
    expect(await provider.groups()).toEqual(['default', 'vip']);
    expect(seen.map((request) => request.url)).toEqual(['/api/channel/models', '/api/group/']);
  });

  it('toggles a channel with PUT /api/channel/ and a body of just id and status; create keeps the new ids', async () => {
    server.use(
      http.put('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: { id: 3, status: 2, name: 'a' } })),
      http.post('*/api/channel/', () => HttpResponse.json({ success: true, message: '', data: { ids: [4, 5] } })),
    );
    const seen = recordRequests();
    const updated = await provider.update('channel', {
      id: 3,
      data: { status: 2 },
      previousData: { id: 3, status: 1, name: 'a' },
      meta: { statusOnly: true },
    });
    expect(updated.data).toMatchObject({ id: 3, status: 2 });
    const created = await provider.create('channel', { data: { name: 'two', key: 'k1\nk2' } });
    expect(created.data).toMatchObject({ id: 4, name: 'two', created: { ids: [4, 5] } });
    expect(seen).toEqual([
      { method: 'PUT', url: '/api/channel/', body: { id: 3, status: 2 } },
      { method: 'POST', url: '/api/channel/', body: { name: 'two', key: 'k1\nk2' } },
    ]);
  });
});
