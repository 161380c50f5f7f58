// A webhook receiver on loopback: records every delivery (headers and raw
// body) and answers each with the next status of its script (200 once the
// script runs out).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: { id: string; type: string; created_at: number; data: Record<string, any> };
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** The statuses of the next answers, in order (e.g. [500, 500] fails twice, then 200s). */
  script(statuses: number[]): void;
  /** Waits (polling) until `predicate` holds for the deliveries received, or fails after `timeoutMs`. */
  waitFor(predicate: (received: ReceivedDelivery[]) => boolean, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  let statuses: number[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: request.headers, body, json: JSON.parse(body) });
      response.statusCode = statuses.shift() ?? 200;
      response.end(response.statusCode < 300 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    script: (next) => (statuses = [...next]),
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `the receiver did not get what was expected; it got ${JSON.stringify(received.map((delivery) => delivery.json.type))}`,
          );
        await new Promise((wake) => setTimeout(wake, 25));
      }
      return received;
    },
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

/** Polls `read` until `predicate` holds for its value (or fails after `timeoutMs`). */
export async function eventually<T>(read: () => Promise<T>, predicate: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (predicate(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not as expected after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((wake) => setTimeout(wake, 25));
  }
}
