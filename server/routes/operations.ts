// What operators and their machines read: /healthz and /readyz (see
// plugins/readiness.ts; these routes serve app.inject, a real server answers
// them before Fastify) and /metrics (services/metrics.ts). None needs a
// session; /metrics asks for METRICS_TOKEN when it is set. Their requests are
// logged at warn and above only, so a scrape every few seconds stays quiet.
import type { FastifyInstance } from 'fastify';
import { answerMetrics, type GatewayMetrics } from '../services/metrics';
import { answerProbe, type ReadinessSources } from '../plugins/readiness';

export function operationsRoutes(probes: ReadinessSources, metrics: GatewayMetrics | undefined) {
  return (app: FastifyInstance): Promise<void> => {
    for (const path of ['/healthz', '/readyz']) {
      app.get(path, { logLevel: 'warn' }, async (_request, reply) => {
        reply.hijack();
        await answerProbe(path, reply.raw, probes);
      });
    }
    if (metrics) {
      const token = app.ctx.config.metricsToken;
      app.get('/metrics', { logLevel: 'warn' }, (request, reply) => answerMetrics(metrics, request, reply, token));
    }
    return Promise.resolve();
  };
}
