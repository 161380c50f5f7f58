// The request-error catalogue of spec §8, handled in one place.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { httpClient, setUnauthorizedHandler } from '../../src/dataProvider/httpClient';
import { server } from './setup';

const answer = (status: number, body: unknown = { success: false, message: 'nope' }) =>
  server.use(http.get('*/api/thing', () => HttpResponse.json(body as never, { status })));

describe('httpClient error catalogue', () => {
  it('keeps 401 recognisable for the auth provider and tells the unauthorized handler', async () => {
    let told = 0;
    setUnauthorizedHandler(() => (told += 1));
    answer(401, { success: false, message: 'not logged in' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 401, message: 'not logged in' });
    expect(told).toBe(1);
    answer(403, { success: false, message: 'insufficient permission' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 403 });
    expect(told).toBe(1);
    setUnauthorizedHandler(() => undefined);
  });

  it('maps 429, 500 and 405 to their fixed messages', async () => {
    answer(429);
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 429, message: 'app.errors.too_many_requests' });
    answer(500);
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 500, message: 'app.errors.internal' });
    answer(405);
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 405, message: 'app.errors.demo_only' });
  });

  it('prefixes other statuses with "Error: "', async () => {
    answer(403, { success: false, message: 'insufficient permission' });
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 403, message: 'Error: insufficient permission' });
  });

  it('reports network failures with "Error: " and the reason', async () => {
    server.use(http.get('*/api/thing', () => HttpResponse.error()));
    await expect(httpClient('/api/thing')).rejects.toMatchObject({ status: 0, message: expect.stringMatching(/^Error: /) });
  });

  it('unwraps a successful envelope and passes envelope-less bodies through as data', async () => {
    answer(200, { success: true, message: '', data: [1, 2] });
    expect(await httpClient('/api/thing')).toEqual({ success: true, message: '', data: [1, 2] });
    answer(200, { object: 'list', data: [{ id: 'gpt-4' }] });
    expect((await httpClient('/api/thing')).data).toEqual({ object: 'list', data: [{ id: 'gpt-4' }] });
  });
});
