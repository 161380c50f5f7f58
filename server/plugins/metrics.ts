// The metrics plugin: when METRICS_ENABLED left the services a metrics
// registry (services/metrics.ts), hooks it to the relay's finished requests and
// opened streams, to the bookkeeping's batches and to every answer, and offers
// it to a cluster master. GET /metrics is routes/operations.ts.
import fp from 'fastify-plugin';
import { bookkeepingFor } from '../billing/bookkeeping';
import { relayContextOf } from '../relay/context';
import { rememberMetrics } from '../services/metrics';

export const metricsPlugin = fp(
  (app) => {
    const { metrics } = app.ctx;
    if (!metrics) return Promise.resolve();
    const bookkeeping = bookkeepingFor(app.ctx, app.log);
    metrics.install(app, relayContextOf(app, bookkeeping), bookkeeping);
    rememberMetrics(app, metrics);
    return Promise.resolve();
  },
  { name: 'switchboard-metrics', dependencies: ['switchboard-services'] },
);
