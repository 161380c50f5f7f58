// The metrics plugin: when METRICS_ENABLED left the services a metrics
// registry (services/metrics.ts), hooks it to the relay's finished requests and
// opened streams, to the bookkeeping's batches and to every answer, and offers
// it to a cluster master. GET /metrics is routes/operations.ts.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import { bookkeepingFor } from '../billing/bookkeeping';
import { offerWorkerMetrics, inCluster } from '../clusterMetrics';
import type { GatewayMetrics } from '../services/metrics';
import { relayContextOf } from './relayContext';

export const metricsPlugin = fp(
  (app) => {
    const { metrics } = app.ctx;
    if (!metrics) return Promise.resolve();
    const bookkeeping = bookkeepingFor(app.ctx, app.log);
    // the relay pipeline, the ledger's batches and Fastify's answers
    const relay = relayContextOf(app, bookkeeping);
    relay.hooks.afterFinish.push(metrics.relayFinished);
    relay.hooks.firstChunk.push(metrics.streamOpened);
    bookkeeping.observeBatches((queue, size, milliseconds, written) => metrics.batchWritten(queue, size, milliseconds, written));
    app.addHook('onResponse', async (request, reply) => {
      metrics.httpAnswered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    });
    rememberMetrics(app, metrics);
    return Promise.resolve();
  },
  { name: 'switchboard-metrics', dependencies: ['switchboard-services'] },
);

const byApp = new WeakMap<object, GatewayMetrics>();

/** The app's metrics registry, for a cluster master's AggregatorRegistry (undefined when metrics are off). */
export function metricsRegistryOf(app: FastifyInstance): Registry | undefined {
  return byApp.get(app.ctx)?.registry;
}

/** Keeps the app's metrics for metricsRegistryOf, and offers them to the cluster's primary under WORKERS=N. */
export function rememberMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  byApp.set(app.ctx, metrics);
  if (inCluster()) offerWorkerMetrics(metrics.registry);
}
