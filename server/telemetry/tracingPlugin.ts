// The tracing plugin: when the environment names an OTLP endpoint
// (tracing.ts), gives the app's relay context a `tracing` function that opens
// each relayed call's trace, hooks the call's first streamed write and its end
// (relaySpans.ts), and flushes the exporter as the app closes, after the
// requests in flight have settled (main.ts's graceful stop calls app.close()).
// When tracing is off it does nothing at all.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { bookkeepingFor } from '../billing/bookkeeping';
import { relayContextOf } from '../plugins/relayContext';
import type { RelayCall } from '../relay/pipeline';
import { CallTrace } from './relaySpans';
import { makeTracing, type Tracing } from './tracing';

const byApp = new WeakMap<object, Tracing>();

/** The app's tracing, when it is on (the tests flush it). */
export function tracingOf(app: FastifyInstance): Tracing | undefined {
  return byApp.get(app.ctx);
}

const traceOf = (call: RelayCall): CallTrace | undefined => (call.trace instanceof CallTrace ? call.trace : undefined);

export const tracingPlugin = fp(
  (app) => {
    const tracing = makeTracing(process.env);
    if (!tracing) return Promise.resolve();
    if ('refused' in tracing) {
      app.log.error(tracing.refused);
      return Promise.resolve();
    }
    byApp.set(app.ctx, tracing);
    const relay = relayContextOf(app, bookkeepingFor(app.ctx, app.log));
    const { tracer } = tracing;
    relay.tracing = (call) => new CallTrace(tracer, call);
    relay.hooks.firstChunk.push((call) => traceOf(call)?.firstToken(call));
    relay.hooks.afterFinish.push((outcome, _operation, _admission, _startedAt, _channelId, call) => traceOf(call)?.finish(outcome, call));
    app.addHook('onClose', async () => {
      try {
        await tracing.shutdown();
      } catch (error) {
        app.log.warn({ err: error }, 'could not export the last traces');
      }
    });
    app.log.info('tracing on: relayed calls are exported over OTLP/HTTP');
    return Promise.resolve();
  },
  { name: 'switchboard-tracing', dependencies: ['switchboard-services'] },
);
