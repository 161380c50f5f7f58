// GET /api/release/latest: the server reads the latest release from
// RELEASE_CHECK_URL and compares its tag with v0.5.3. No network, or a server
// that never answers, gives one clear failure within the timeout.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isNewerVersion, RELEASE_CHECK_TIMEOUT_MS } from '../../server/routes/api/misc';
import { asBrowser, buildTestApp, login, ROOT_PASSWORD } from '../support/app';

const servers: Server[] = [];
const sockets = new Set<Socket>();
let app: FastifyInstance | undefined;

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  server.on('connection', (socket) => sockets.add(socket));
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/repos/acme/switchboard/releases/latest`;
}

async function checkWith(releaseCheckUrl: string) {
  app = await buildTestApp({ releaseCheckUrl });
  const root = await login(app, 'root', ROOT_PASSWORD);
  const started = Date.now();
  const body = (await asBrowser(app, root, { method: 'GET', url: '/api/release/latest' })).json();
  return { body, elapsed: Date.now() - started };
}

afterEach(async () => {
  await app?.close();
  app = undefined;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((closed) => server.close(closed))));
});

describe('update check', () => {
  it('fails fast and clearly when the release server is unreachable', async () => {
    const closed = await serve(() => undefined);
    await new Promise((done) => servers.pop()!.close(done)); // nothing listens there any more
    const { body, elapsed } = await checkWith(closed);
    expect(body.success).toBe(false);
    expect(body.message).toBe('cannot check for updates: the release server is unreachable (ECONNREFUSED)');
    expect(elapsed).toBeLessThan(1000);
  });

  it('gives up after the timeout when the server never answers', async () => {
    const url = await serve(() => undefined); // accepts, never responds
    const { body, elapsed } = await checkWith(url);
    expect(body).toEqual({
      success: false,
      message: 'cannot check for updates: the release server did not answer within 5 s (no network?)',
    });
    expect(elapsed).toBeGreaterThanOrEqual(RELEASE_CHECK_TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(RELEASE_CHECK_TIMEOUT_MS + 2000);
  });

  it('reports the latest release from a local fake and whether it is newer than v0.5.3', async () => {
    let accept = '';
    const url = await serve((request, response) => {
      accept = String(request.headers.accept);
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          tag_name: 'v0.6.1',
          name: 'v0.6.1 – faster relays',
          body: '## Changes\n- faster relays',
          html_url: 'https://github.com/acme/switchboard/releases/tag/v0.6.1',
          published_at: '2024-01-02T03:04:05Z',
        }),
      );
    });
    const { body } = await checkWith(url);
    expect(accept).toContain('application/vnd.github+json');
    expect(body).toEqual({
      success: true,
      message: '',
      data: {
        current_version: 'v0.5.3',
        tag_name: 'v0.6.1',
        name: 'v0.6.1 – faster relays',
        body: '## Changes\n- faster relays',
        html_url: 'https://github.com/acme/switchboard/releases/tag/v0.6.1',
        published_at: '2024-01-02T03:04:05Z',
        update_available: true,
      },
    });
  });

  it('reports an HTTP error from the release server', async () => {
    const url = await serve((_, response) => {
      response.statusCode = 403;
      response.end('{"message":"API rate limit exceeded"}');
    });
    expect((await checkWith(url)).body).toEqual({
      success: false,
      message: 'cannot check for updates: the release server answered HTTP 403',
    });
  });

  it('compares versions numerically', () => {
    expect(isNewerVersion('v0.5.3', 'v0.5.3')).toBe(false);
    expect(isNewerVersion('v0.5.10', 'v0.5.3')).toBe(true);
    expect(isNewerVersion('v0.4.9', 'v0.5.3')).toBe(false);
    expect(isNewerVersion('1.0.0', 'v0.5.3')).toBe(true);
    expect(isNewerVersion('nightly', 'v0.5.3')).toBe(true);
  });
});
