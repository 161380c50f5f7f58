// A call to an upstream that answers over a WebSocket (iFlytek Spark): one
// JSON frame out, frames back, each handed on as one piece (the adaptor's
// decoder gets one frame per push). The same deadlines as an HTTP call
// (connect, first answer, idle between frames), the same backpressure (a
// reader that stops asking pauses the socket), and the socket is closed when
// the client leaves or the reader gives up.
import { Readable } from 'node:stream';
import type { RawData } from 'ws';
import type { HttpTarget } from '../protocols/types';
import { AnswerBrokeOff, upstreamSettings, type DisconnectSignal } from './upstream';

/** ws, once a call has loaded it. */
let wsModule: Promise<typeof import('ws')> | undefined;

/** The upstream refused the handshake with an HTTP answer (a bad signature, an unknown app id). */
export class WebSocketRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the upstream refused the WebSocket with HTTP ${status}`);
  }
}

/** A deadline of a WebSocket call passed (connect, first frame, between frames). */
export class WebSocketTimeout extends Error {
  readonly code = 'UND_ERR_BODY_TIMEOUT';
}

/** A frame's bytes, whatever shape ws hands them in (a Buffer, its fragments, an ArrayBuffer). */
function frameBytes(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/**
 * Opens the socket, sends `frame`, and resolves with the frames as they come
 * (an object-mode Readable of strings), once the socket is open. Rejects
 * when it cannot be opened (WebSocketRefused for an HTTP refusal).
 */
export async function openWebSocketCall(
  target: HttpTarget,
  frame: string,
  signal: DisconnectSignal,
  requestId?: string,
): Promise<Readable> {
  const settings = upstreamSettings();
  // ws is loaded at the first such call: most gateways have no channel that answers over a WebSocket
  const { default: WebSocket } = await (wsModule ??= import('ws'));
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason!);
    const headers = requestId === undefined ? target.headers : { ...target.headers, 'x-request-id': requestId };
    const socket = new WebSocket(target.url, { headers, handshakeTimeout: settings.connectTimeoutMs });
    let opened = false;
    let timer: NodeJS.Timeout | undefined;
    let ended = false;

    const frames = new Readable({
      objectMode: true,
      read: () => socket.isPaused && socket.resume(),
      destroy: (error, callback) => {
        stop();
        if (socket.readyState === WebSocket.OPEN) {
          if (error) socket.terminate();
          else socket.close(1000);
        } else if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
        callback(error);
      },
    });

    const stop = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      signal.onAbort(undefined);
    };
    const arm = (ms: number, what: string) => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => fail(new WebSocketTimeout(`the upstream sent nothing for ${ms} ms (${what})`)), ms);
    };
    const fail = (error: Error) => {
      if (ended) return;
      ended = true;
      stop();
      if (!opened) {
        socket.terminate();
        return reject(error);
      }
      frames.destroy(error instanceof WebSocketTimeout ? error : new AnswerBrokeOff(error.message));
    };

    signal.onAbort(() => fail(signal.reason!));
    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => fail(new WebSocketRefused(response.statusCode ?? 502, Buffer.concat(chunks).toString('utf8'))));
      response.on('error', (error) => fail(error));
    });
    socket.once('open', () => {
      opened = true;
      arm(settings.firstByteTimeoutMs, 'first frame');
      socket.send(frame, (error) => error && fail(error));
      resolve(frames);
    });
    socket.on('message', (data) => {
      arm(settings.idleTimeoutMs, 'between frames');
      // text and binary frames alike: ws hands on a Buffer (or its fragments)
      const text = frameBytes(data).toString('utf8');
      if (!frames.push(text)) socket.pause();
    });
    socket.once('close', () => {
      if (ended) return;
      ended = true;
      stop();
      if (!opened) return reject(new Error('the upstream closed the WebSocket before it opened'));
      frames.push(null);
    });
    socket.on('error', (error) => fail(error));
  });
}
