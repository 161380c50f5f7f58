// ws ends a socket's frame receiver when the close frame comes, and again on the
// peer's FIN and on the socket's close; it ends the socket again on the FIN too.
// Each end() of a stream that has already finished makes Node build an error
// with a full stack and throw it away: about six a session, a tenth of what
// opening and closing a session costs. Pure: no I/O.
import type { Writable } from 'node:stream';
import type { default as WebSocket } from 'ws';

/** What ws keeps of a connection: its frame receiver and socket (private, stable since ws 7). */
interface WebSocketStreams {
  _receiver?: Writable;
  _socket?: Writable;
}

/** A bare end() of a stream already finished or destroyed does nothing, rather than build an error no one reads. */
function endOnce(stream: Writable | undefined): void {
  if (!stream || Object.prototype.hasOwnProperty.call(stream, 'end')) return;
  const end = stream.end.bind(stream) as (...args: unknown[]) => Writable;
  // an end() with a chunk or a callback goes through as before: the callback is owed its error
  stream.end = ((...args: unknown[]) =>
    args.length === 0 && (stream.writableFinished || stream.destroyed) ? stream : end(...args)) as Writable['end'];
}

/** Quiets the repeated ends of an open WebSocket (its socket is set once it is open). */
export function quietRepeatedEnds(socket: WebSocket): void {
  const streams = socket as unknown as WebSocketStreams;
  endOnce(streams._receiver);
  endOnce(streams._socket);
}
