// What every protocol emulator offers the tests: a loopback upstream that
// speaks one vendor's exact wire format, records what it was asked, and
// remembers the usage it reported (so a test can check the exact bill).
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmulatedRequest {
  method: string;
  /** The path with its query string. */
  url: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (or the one WebSocket frame sent), undefined when there was none. */
  body: unknown;
  /** The body's bytes as they came, where the emulator keeps them (to prove a gateway passed a client's bytes unchanged). */
  raw?: string;
}

/** Usage as the emulator reported it to the gateway, in the relay's terms. */
export interface ReportedUsage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
}

export interface ProtocolEmulator {
  /** http://127.0.0.1:<port> (a WebSocket emulator answers ws:// on the same origin). */
  baseUrl: string;
  requests: EmulatedRequest[];
  /** One entry per answered call (chat or embeddings), in order. */
  reported: ReportedUsage[];
  close(): Promise<void>;
}

/**
 * The channel a test creates to reach an emulator: one entry per channel type
 * the emulator serves. `key` is a good key; `deadKey` one the emulator refuses
 * with the vendor's own dead-key error.
 */
export interface EmulatedChannel {
  type: number;
  key: string;
  deadKey: string;
  /** A key that depends on the running emulator (Vertex AI's service-account file names its token endpoint); `key` otherwise. */
  keyFor?: (emulator: ProtocolEmulator) => string;
  /** The same for the dead key. */
  deadKeyFor?: (emulator: ProtocolEmulator) => string;
  /** The base URL to store (the emulator's, possibly with a path). */
  baseUrl: (emulator: ProtocolEmulator) => string;
  other: string;
  /** A chat model the channel serves (priced by default, so billing is exact). */
  chatModel: string;
  /** An embeddings model, when the vendor has embeddings. */
  embeddingModel?: string;
  /** The vendor reports no token usage (AI Proxy's library): the gateway bills its own count. */
  unmetered?: true;
}

/** Listens on 127.0.0.1 at a free port; `close` ends open connections first (after `beforeClose`, e.g. WebSocket clients). */
export async function listenOnLoopback(
  server: Server,
  beforeClose: () => void = () => {},
): Promise<{ baseUrl: string; close(): Promise<void> }> {
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((closed) => {
        beforeClose();
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

/** A request's body as text and as parsed JSON (undefined when empty or not JSON). */
export async function readRequestBody(request: IncomingMessage): Promise<{ text: string; body: unknown }> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  try {
    return { text, body: text ? (JSON.parse(text) as unknown) : undefined };
  } catch {
    return { text, body: undefined };
  }
}
