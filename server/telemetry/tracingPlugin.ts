// The tracing plugin: when the environment names an OTLP endpoint
// (tracing.ts), gives the app's relay context a `tracing` function that opens
// each relayed call's trace, hooks the call's first streamed write and its end
// (relaySpans.ts), and flushes the exporter as the app closes, after the
// requests in flight have settled (main.ts's graceful stop calls app.close()).
// When tracing is off it does nothing at all, and the OpenTelemetry SDK is
// never loaded (tracing.ts and relaySpans.ts are imported only then).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { bookkeepingFor } from '../billing/bookkeeping';
import { relayContextOf } from '../plugins/relayContext';
import type { RelayCall } from '../relay/pipeline';
import type { Tracing } from './tracing';
import { tracingWanted } from './tracingEnv';

const byApp = new WeakMap<object, Tracing>();

/** The app's tracing, when it is on (the tests flush it). */
export function tracingOf(app: FastifyInstance): Tracing | undefined {
  return byApp.get(app.ctx);
}

export const tracingPlugin = fp(
  async (app) => {
    if (!tracingWanted(process.env)) return;
    // the SDK is loaded only when tracing is on: a gateway without it does not carry it
    const [{ makeTracing }, { CallTrace }] = await Promise.all([import('./tracing'), import('./relaySpans')]);
    const tracing = makeTracing(process.env);
    if (!tracing) return;
    if ('refused' in tracing) {
      app.log.error(tracing.refused);
      return;
    }
    const traceOf = (call: RelayCall) => (call.trace instanceof CallTrace ? call.trace : undefined);
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
  },
  { name: 'switchboard-tracing', dependencies: ['switchboard-services'] },
);
