// /healthz and /readyz on a real server: alive and ready; not ready, naming
// the culprit, when PostgreSQL goes away (the gateway reaches it through a TCP
// relay the test then closes) or Redis is not there (a port nobody listens
// on); not ready once a shutdown has begun, while /healthz still answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../support/app';
import { databaseTargets, REDIS_URL, redisAvailable, type TestDatabase } from '../support/databases';
import { freePort } from '../e2e/support/gateway';
import { spawnGatewayProcess } from '../support/gatewayProcess';
import { startRelayHarness } from './relay/harness';

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/** A TCP relay to `target`; close() stops it and cuts every connection it carries. */
async function tcpRelay(targetPort: number, listenPort = 0): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const targets = await databaseTargets('health');
const redisUp = await redisAvailable('health');
const postgres = targets.find((target) => target.name === 'postgres')!;

for (const target of targets.filter((candidate) => candidate.name !== 'sqlite')) {
  describe.runIf(target.available)(`readiness on ${target.name}`, () => {
    it('is ready when the database answers', async () => {
      const database = await target.create();
      const app = await buildTestApp({}, database.config);
      try {
        const readyz = await app.inject({ method: 'GET', url: '/readyz' });
        expect(readyz.statusCode).toBe(200);
        expect(readyz.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
      } finally {
        await app.close();
        await database.drop();
      }
    });
  });
}

describe('health probes', () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
  });

  it('answers alive and ready on SQLite, on a real server and through inject, with no session', async () => {
    const app = await buildTestApp();
    apps.push(app);
    const baseUrl = await listen(app);
    const healthz = await fetch(`${baseUrl}/healthz`);
    expect(healthz.status).toBe(200);
    expect(await healthz.json()).toEqual({ status: 'ok' });
    const readyz = await fetch(`${baseUrl}/readyz?verbose=1`);
    expect(readyz.status).toBe(200);
    expect(readyz.headers.get('cache-control')).toBe('no-store');
    expect(await readyz.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    // other methods are not probes
    expect((await fetch(`${baseUrl}/healthz`, { method: 'POST' })).status).not.toBe(200);
  });

  it.runIf(redisUp)('is ready with a configured Redis that answers PING', async () => {
    const app = await buildTestApp({ redisUrl: REDIS_URL });
    apps.push(app);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', redis: 'ok' },
    });
  });

  it('is not ready, naming Redis, when the configured Redis does not answer; still alive', async () => {
    const app = await buildTestApp({ redisUrl: `redis://127.0.0.1:${await freePort()}` });
    apps.push(app);
    const baseUrl = await listen(app);
    const readyz = await fetch(`${baseUrl}/readyz`);
    expect(readyz.status).toBe(503);
    const body = (await readyz.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('not ready');
    expect(body.checks.database).toBe('ok');
    expect(body.checks.redis).toMatch(/^not connected/);
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });

  it.runIf(postgres.available)(
    'is not ready, naming the database, once PostgreSQL cannot be reached; ready again when it can',
    async () => {
      const database: TestDatabase = await postgres.create();
      const dsn = new URL((database.config as { connectionString: string }).connectionString);
      const relay = await tcpRelay(Number(dsn.port || 5432));
      dsn.port = String(relay.port);
      const app = await buildTestApp({}, { dialect: 'postgres', connectionString: dsn.toString(), connectTimeoutMs: 500 });
      apps.push(app);
      try {
        const baseUrl = await listen(app);
        expect((await fetch(`${baseUrl}/readyz`)).status).toBe(200);
        await relay.close();
        const readyz = await fetch(`${baseUrl}/readyz`);
        expect(readyz.status).toBe(503);
        const body = (await readyz.json()) as { checks: Record<string, string> };
        expect(Object.keys(body.checks)).toEqual(['database']);
        expect(body.checks.database).not.toBe('ok');
        // no address or credentials in the answer
        expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|postgres@/);
        expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
        // PostgreSQL reachable again on the same address: ready again, the pool reconnects by itself
        const back = await tcpRelay(
          Number(new URL((database.config as { connectionString: string }).connectionString).port || 5432),
          relay.port,
        );
        try {
          await waitFor(async () => (await fetch(`${baseUrl}/readyz`)).status === 200);
        } finally {
          await app.close().catch(() => undefined);
          await back.close();
        }
      } finally {
        await app.close().catch(() => undefined);
        await database.drop();
      }
    },
  );

  it('is not ready once a shutdown has begun, while the open requests finish; /healthz still answers', async () => {
    const harness = await startRelayHarness();
    try {
      await harness.addChannel({ name: 'emu', key: 'sk-good' });
      const { port } = new URL(harness.baseUrl);
      // one connection: a slow stream, then the probes pipelined behind it, answered once the stream ends
      const socket = connect(Number(port), '127.0.0.1');
      const body = JSON.stringify({
        model: 'gpt-4',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
        emulator: { chunks: 30, delay_ms: 30 },
      });
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${harness.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await waitFor(() => received.includes('data: '));
      const closing = harness.app.close();
      socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await waitFor(() => received.includes('"status":"ok"'));
      socket.destroy();
      await closing;
      expect(received).toContain('data: [DONE]');
      expect(received).toMatch(/HTTP\/1\.1 503[^]*"status":"not ready","checks":\{"shutdown":"the gateway is shutting down"\}/);
      expect(received).toMatch(/HTTP\/1\.1 200 OK[^]*\{"status":"ok"\}$/);
    } finally {
      await harness.emulator.close();
    }
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((wake) => setTimeout(wake, 20));
  }
}

describe('readiness during a drain (SHUTDOWN_DRAIN_SECONDS), a real process', () => {
  it('says 503 on /readyz at once after SIGTERM while it still serves, then stops', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-drain-'));
    const gateway = await spawnGatewayProcess({
      SQLITE_PATH: join(dataDir, 'switchboard.db'),
      DATA_DIR: dataDir,
      SHUTDOWN_DRAIN_SECONDS: '3',
    });
    try {
      expect((await fetch(`${gateway.baseUrl}/readyz`)).status).toBe(200);
      const signalled = Date.now();
      gateway.child.kill('SIGTERM');
      // a balancer's probe on a new connection sees "not ready" while the node is still up
      let probe: Response | undefined;
      while (Date.now() - signalled < 2_500) {
        probe = await fetch(`${gateway.baseUrl}/readyz`, { headers: { connection: 'close' } });
        if (probe.status === 503) break;
        await probe.arrayBuffer();
        await new Promise((wake) => setTimeout(wake, 50));
      }
      expect(probe?.status).toBe(503);
      expect(((await probe!.json()) as { checks: Record<string, string> }).checks.shutdown).toBe('the gateway is shutting down');
      // everything else is still served on new connections during the drain
      const status = await fetch(`${gateway.baseUrl}/api/status`, { headers: { connection: 'close' } });
      expect(status.status).toBe(200);
      expect(((await status.json()) as { success: boolean }).success).toBe(true);
      expect((await fetch(`${gateway.baseUrl}/healthz`, { headers: { connection: 'close' } })).status).toBe(200);
      // then the ordinary stop: it exits cleanly, after the drain and not before
      expect(await gateway.exited).toBe(0);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(3_000);
      expect(gateway.output()).toContain('SHUTDOWN_DRAIN_SECONDS');
    } finally {
      if (gateway.alive()) gateway.child.kill('SIGKILL');
      await gateway.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
