// The relayed requests a node has in flight, by the signal that can abort
// their upstream call, so shutdown can end the ones still running when its
// grace is over: a stream cut this way is billed for what it delivered (the
// stream relay counts the text it passed on), a call still waiting for its
// answer is aborted and its reservation released. One registry per app (so
// per node): plugins/relayContext.ts keeps it.
import type { ServerResponse } from 'node:http';
import { DisconnectSignal } from './upstream';

export class RelayRegistry {
  private readonly signals = new Set<DisconnectSignal>();
  /** Set once the shutdown grace is over: a call that starts now is cut at once. */
  private cutting = false;

  add(signal: DisconnectSignal): void {
    if (this.cutting) return RelayRegistry.cut(signal);
    this.signals.add(signal);
  }

  delete(signal: DisconnectSignal): void {
    this.signals.delete(signal);
  }

  get size(): number {
    return this.signals.size;
  }

  /** Aborts every call in flight (and every later one); returns how many it cut. */
  cutAll(): number {
    this.cutting = true;
    const cut = this.signals.size;
    for (const signal of this.signals) RelayRegistry.cut(signal);
    this.signals.clear();
    return cut;
  }

  private static cut(signal: DisconnectSignal): void {
    signal.byGateway = true;
    signal.abort(new Error('the gateway is shutting down'));
  }
}

/**
 * Aborts the upstream call when the client goes away before the answer is
 * complete; the call is known to the node's registry until then, so a
 * shutdown can cut it at the end of its grace.
 */
export function abortOnDisconnect(ctx: { registry: RelayRegistry }, raw: ServerResponse): DisconnectSignal {
  const signal = new DisconnectSignal();
  const { registry } = ctx;
  registry.add(signal);
  raw.on('close', () => {
    registry.delete(signal);
    if (!raw.writableFinished) signal.abort();
  });
  return signal;
}
