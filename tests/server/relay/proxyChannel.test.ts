// The Proxy channel (type 43) through the gateway: /v1/oneapi/proxy/:channelid/*
// passes any method, path, query, headers and bytes to the channel's base URL
// with the channel's key, and the answer back as it came; admins only; logged
// at no charge.
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, readRequestBody } from '../../support/emulators/types';
import { consumeLogCount, lastConsumeLog, useRelayHarness } from './harness';

const harnessOf = useRelayHarness();
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; raw: string }> = [];
let upstream: { baseUrl: string; close(): Promise<void> };
// bytes that are not UTF-8, to prove nothing decodes them on the way back
const BINARY = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41, 0x0a]);

beforeAll(async () => {
  const server = createServer((request, response) => {
    void readRequestBody(request).then(({ text }) => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, raw: text });
      if (request.url?.startsWith('/base/binary')) {
        response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'X-Upstream': 'yes' });
        return response.end(BINARY);
      }
      response.writeHead(201, { 'Content-Type': 'application/json', 'X-Upstream': 'yes' });
      response.end(JSON.stringify({ echoed: text, method: request.method }));
    });
  });
  upstream = await listenOnLoopback(server);
});
afterAll(() => upstream.close());

const addProxy = (fields: Record<string, unknown> = {}) =>
  harnessOf().addChannel({
    name: 'proxy',
    type: 43,
    key: 'Bearer upstream-secret',
    base_url: `${upstream.baseUrl}/base`,
    models: 'proxy-passthrough',
    other: '',
    ...fields,
  });

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${harnessOf().baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${harnessOf().apiKey}`, ...(init.headers as Record<string, string> | undefined) },
  });

/** A GET with the path exactly as written: fetch's URL parser would resolve `..` and `%2e%2e` before sending. */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(harnessOf().baseUrl);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { host: hostname, port, path, method: 'GET', headers: { authorization: `Bearer ${harnessOf().apiKey}` } },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    sent.on('error', reject);
    sent.end();
  });
}

describe('Proxy channel', () => {
  it('refuses every path that could leave the base path, in any encoding, before any call', async () => {
    const channelId = await addProxy();
    const before = seen.length;
    for (const climb of [
      '../secret',
      '..%2fsecret',
      '%2e%2e%2fsecret',
      '%2E%2E/secret',
      '%252e%252e%252fsecret',
      '..%252fsecret',
      'a/%2e%2e/%2e%2e/secret',
      '..%5csecret',
      '%25252e%25252e%25252fsecret',
      './x',
    ]) {
      const answer = await rawGet(`/v1/oneapi/proxy/${channelId}/${climb}`);
      expect(answer.status, climb).toBe(400);
      expect(JSON.parse(answer.body).error.code, climb).toBe('invalid_path');
    }
    expect(seen.length).toBe(before);
    // a dot inside a name is no climb; the path goes on as written
    const fine = await rawGet(`/v1/oneapi/proxy/${channelId}/v1/files/a..b%2Fc.txt`);
    expect(fine.status).toBe(201);
    expect(seen.at(-1)!.url).toBe('/base/v1/files/a..b%2Fc.txt');
  });

  it('passes method, path, query, headers and bytes to the base URL with the channel key, and the answer back as it came', async () => {
    const channelId = await addProxy();
    const before = await harnessOf().balances();
    const logs = await consumeLogCount(harnessOf());
    const body = '{"any":"shape","n":1}';
    const response = await call(`/v1/oneapi/proxy/${channelId}/v2/things?limit=3&x=%20y`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-client': 'kept' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-upstream')).toBe('yes');
    expect(await response.json()).toEqual({ echoed: body, method: 'POST' });
    const sent = seen.at(-1)!;
    expect(sent.url).toBe('/base/v2/things?limit=3&x=%20y');
    expect(sent.raw).toBe(body);
    expect(sent.headers.authorization).toBe('Bearer upstream-secret');
    expect(sent.headers['x-client']).toBe('kept');
    expect(sent.headers['content-type']).toBe('application/json');
    // no charge, but a log naming the channel and the call
    await harnessOf().settled();
    const after = await harnessOf().balances();
    expect(after.user.quota).toBe(before.user.quota);
    expect(after.token.remain_quota).toBe(before.token.remain_quota);
    expect(await consumeLogCount(harnessOf())).toBe(logs + 1);
    expect(await lastConsumeLog(harnessOf())).toMatchObject({
      quota: 0,
      channel_id: channelId,
      content: 'proxy POST /v2/things → HTTP 201',
    });
  });

  it('passes a GET, and binary bytes back unchanged', async () => {
    const channelId = await addProxy();
    const response = await call(`/v1/oneapi/proxy/${channelId}/binary/file`);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(BINARY);
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/base/binary/file' });
  });

  it('refuses a token whose owner is not an admin, a channel of another type, a disabled one, a bad key', async () => {
    const harness = harnessOf();
    const channelId = await addProxy();
    const asked = seen.length;
    const openAi = await harness.addChannel({
      name: 'not proxy',
      type: 1,
      key: 'sk-x',
      base_url: upstream.baseUrl,
      models: 'gpt-4o-mini',
      other: '',
    });
    expect((await call(`/v1/oneapi/proxy/${openAi}/v1/models`)).status).toBe(404);
    expect((await call('/v1/oneapi/proxy/999999/x')).status).toBe(404);
    expect((await call(`/v1/oneapi/proxy/${channelId}/x`, { headers: { authorization: 'Bearer sk-nope' } })).status).toBe(401);
    const disabled = await addProxy({ name: 'off' });
    await harness.app.ctx.db.updateTable('channels').set({ status: 2 }).where('id', '=', disabled).execute();
    expect((await call(`/v1/oneapi/proxy/${disabled}/x`)).status).toBe(503);
    await harness.app.ctx.db.updateTable('users').set({ role: 1 }).where('username', '=', 'root').execute();
    try {
      const refused = await call(`/v1/oneapi/proxy/${channelId}/x`);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('channel_not_allowed');
    } finally {
      await harness.app.ctx.db.updateTable('users').set({ role: 100 }).where('username', '=', 'root').execute();
    }
    expect(seen.length).toBe(asked);
  });
});
