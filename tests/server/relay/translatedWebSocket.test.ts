// The WebSocket transport translated channels use (iFlytek Spark): one frame
// out, frames back one per piece, a refused handshake read as the vendor's
// HTTP answer, the socket closed when the client leaves, deadlines kept.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { configureUpstreams, DEFAULT_UPSTREAM_SETTINGS, DisconnectSignal } from '../../../server/relay/upstream';
import { openWebSocketCall, WebSocketRefused, WebSocketTimeout } from '../../../server/relay/websocketUpstream';

let server: Server;
let sockets: WebSocketServer;
let url: string;
const received: string[] = [];
let closedByClient = 0;
const handshakeRequestIds: Array<string | undefined> = [];

beforeAll(async () => {
  server = createServer();
  sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request, socket, head) => {
    handshakeRequestIds.push(request.headers['x-request-id'] as string | undefined);
    if (request.url?.startsWith('/refuse')) {
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"message":"HMAC signature does not match"}',
      );
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      ws.on('close', () => (closedByClient += 1));
      ws.on('message', (data) => {
        received.push((data as Buffer).toString()); // ws's default binaryType, nodebuffer
        if (request.url === '/silent') return;
        const frames = request.url === '/slow' ? 50 : 3;
        let sent = 0;
        const timer = setInterval(() => {
          if (ws.readyState !== ws.OPEN) return clearInterval(timer);
          sent += 1;
          ws.send(JSON.stringify({ seq: sent, status: sent === frames ? 2 : 1 }));
          if (sent === frames) {
            clearInterval(timer);
            ws.close(1000);
          }
        }, 20);
      });
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  sockets.close();
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
});
afterEach(() => configureUpstreams({}));

const target = (path: string) => ({ url: `${url}${path}`, method: 'GET' as const, headers: {} });

describe('a call over a WebSocket', () => {
  it("sends the client's request id with the handshake", async () => {
    const frames = await openWebSocketCall(target('/chat'), '{"payload":"id"}', new DisconnectSignal(), 'client-trace-42');
    for await (const _piece of frames) void _piece;
    expect(handshakeRequestIds.at(-1)).toBe('client-trace-42');
  });

  it('sends one frame and hands each frame back as one piece, then ends', async () => {
    const frames = await openWebSocketCall(target('/chat'), '{"payload":"hi"}', new DisconnectSignal());
    const pieces: unknown[] = [];
    for await (const piece of frames) pieces.push(JSON.parse(piece as string));
    expect(pieces).toEqual([
      { seq: 1, status: 1 },
      { seq: 2, status: 1 },
      { seq: 3, status: 2 },
    ]);
    expect(received.at(-1)).toBe('{"payload":"hi"}');
  });

  it('reads a refused handshake as the vendor HTTP answer', async () => {
    const refused = await openWebSocketCall(target('/refuse'), '{}', new DisconnectSignal()).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WebSocketRefused);
    expect(refused).toMatchObject({ status: 401, body: '{"message":"HMAC signature does not match"}' });
  });

  it('closes the socket when the client leaves', async () => {
    const signal = new DisconnectSignal();
    const before = closedByClient;
    const frames = await openWebSocketCall(target('/slow'), '{}', signal);
    const pieces: unknown[] = [];
    const reading = (async () => {
      for await (const piece of frames) {
        pieces.push(piece);
        if (pieces.length === 2) signal.abort();
      }
    })().catch((error: Error) => error);
    expect(await reading).toBeInstanceOf(Error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closedByClient).toBe(before + 1);
    expect(pieces.length).toBeLessThan(50);
  });

  it('gives up on an upstream that says nothing within the first-frame deadline', async () => {
    configureUpstreams({ ...DEFAULT_UPSTREAM_SETTINGS, firstByteTimeoutMs: 150 });
    const frames = await openWebSocketCall(target('/silent'), '{}', new DisconnectSignal());
    const outcome = await (async () => {
      for await (const _piece of frames) void _piece;
    })().then(
      () => 'ended',
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(WebSocketTimeout);
  });
});
