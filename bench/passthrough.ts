// The benchmark's floor: the least a relay can do. Parse the JSON body, check a
// bearer key in a Map, forward to the upstream with an undici Pool, pipe the
// answer back. Switchboard is measured against this, not against a guess.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

export interface Passthrough {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startPassthrough(options: { upstream: string; upstreamKey: string; clientKeys: string[] }): Promise<Passthrough> {
  const pool = new Pool(options.upstream, { connections: 128, pipelining: 1 });
  const keys = new Map(options.clientKeys.map((key) => [key, true]));

  const server: Server = createServer(
    (request, response) =>
      void (async () => {
        const key = (request.headers.authorization ?? '').replace(/^Bearer /, '');
        if (!keys.has(key)) {
          response.writeHead(401, { 'content-type': 'application/json' });
          response.end('{"error":{"message":"invalid key","type":"invalid_request_error","param":null,"code":null}}');
          return;
        }
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        let body: { model?: string };
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string };
        } catch {
          response.writeHead(400, { 'content-type': 'application/json' });
          response.end('{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}');
          return;
        }
        try {
          const upstream = await pool.request({
            method: 'POST',
            path: request.url ?? '/',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${options.upstreamKey}`,
              ...(request.headers['x-emulator-chunks'] ? { 'x-emulator-chunks': String(request.headers['x-emulator-chunks']) } : {}),
              ...(request.headers['x-emulator-delay-ms'] ? { 'x-emulator-delay-ms': String(request.headers['x-emulator-delay-ms']) } : {}),
            },
            body: JSON.stringify(body),
          });
          response.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
          for await (const chunk of upstream.body) response.write(chunk);
          response.end();
        } catch {
          if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
          response.end();
        }
      })(),
  );
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      await pool.close();
    },
  };
}
