// GET /v1/realtime: OpenAI's Realtime API as a WebSocket (server/relay/realtime/
// holds the session). Fastify does not see upgrades: this listens on the
// gateway's own server, and ends every session (giving back what it holds)
// before the app closes its ledger.
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RelayContext } from '../../relay/context';
import { handleRealtimeUpgrade, RealtimeSessions } from '../../relay/realtime';

export function realtimeRoutes(app: FastifyInstance, ctx: RelayContext): void {
  const sessions = new RealtimeSessions(
    ctx,
    () => ({
      idleMs: Math.max(0, ctx.options.number('RealtimeIdleSeconds')) * 1000,
      maxMs: Math.max(0, ctx.options.number('RealtimeMaxSeconds')) * 1000,
    }),
    app.ctx.config.trustProxy,
  );
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    handleRealtimeUpgrade(sessions, request, socket, head).catch((error: unknown) => {
      ctx.log.error({ err: error }, 'realtime: the upgrade failed');
      if (!socket.destroyed)
        socket.end(
          'HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":{"message":"internal error","type":"server_error","param":null,"code":null}}',
        );
    });
  };
  app.server.on('upgrade', onUpgrade);
  app.addHook('preClose', async () => {
    app.server.off('upgrade', onUpgrade);
    await sessions.closeAll();
  });
}
