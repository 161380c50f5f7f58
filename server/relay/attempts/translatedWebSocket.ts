// The translated path over a WebSocket (a vendor whose chat is a socket:
// Spark): the encoded request as the first frame, the vendor's frames as the
// stream translated.ts reads. A refusal before the upgrade is the vendor's
// answer like any other. One entry point, viaWebSocket.
import type { Readable } from 'node:stream';
import { openWebSocketCall, WebSocketRefused } from '../websocketUpstream';
import type { PreparedCall, TransportResult } from './translatedCall';

export async function viaWebSocket(prepared: PreparedCall): Promise<TransportResult> {
  const { target, body, request } = prepared;
  let source: Readable;
  try {
    source = await openWebSocketCall(target, body, request.signal, request.requestId);
  } catch (error) {
    if (request.signal.aborted) return { outcome: 'aborted' };
    if (error instanceof WebSocketRefused) return prepared.refused(error.status, error.body);
    return { outcome: 'unanswered', error };
  }
  return { source };
}
