// The relay's own undici handler: a streamed answer's chunks that come in one
// read of the socket reach the reader together; chunks apart in time still
// reach it as each arrives, and a break after some chunks hands those on first.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerBrokeOff, callUpstream, DisconnectSignal, poolFor } from '../../../server/relay/upstream';

const event = (index: number) => `data: {"n":${index}}\n\n`;

describe('callUpstream with a streamed answer', () => {
  let server: Server;
  let origin: string;
  const routes: Record<string, (response: ServerResponse) => void> = {
    // five HTTP chunks written in one turn: one packet on loopback
    '/together': (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let index = 0; index < 5; index += 1) response.write(event(index));
      response.end();
    },
    // three chunks 40 ms apart
    '/apart': (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let index = 0;
      const next = () => {
        response.write(event(index));
        index += 1;
        if (index < 3) setTimeout(next, 40);
        else response.end();
      };
      next();
    },
    // two chunks, then the connection is cut before the chunked body ends
    '/cut': (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(event(0));
      response.write(event(1));
      setTimeout(() => response.socket?.destroy(), 30);
    },
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => routes[request.url ?? '']?.(response));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  /** Each chunk the reader gets, with the ms since the call began. */
  async function read(path: string) {
    const started = Date.now();
    const answer = await callUpstream(
      poolFor(origin),
      { path, headers: { 'content-type': 'application/json' }, body: '{}' },
      new DisconnectSignal(),
    );
    const chunks: Array<{ text: string; at: number }> = [];
    let error: unknown;
    // in flowing mode, as the relay reads a stream: one 'data' event per chunk handed on
    await new Promise<void>((done) => {
      answer.stream!.on('data', (chunk: Buffer) => chunks.push({ text: String(chunk), at: Date.now() - started }));
      answer.stream!.once('end', done);
      answer.stream!.once('error', (caught) => {
        error = caught;
        done();
      });
    });
    return { answer, chunks, error };
  }

  it('hands on the chunks of one read together, unchanged and in order', async () => {
    const { answer, chunks, error } = await read('/together');
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe('text/event-stream');
    expect(error).toBeUndefined();
    expect(chunks.map((chunk) => chunk.text).join('')).toBe([0, 1, 2, 3, 4].map(event).join(''));
    expect(chunks).toHaveLength(1);
  });

  it('hands on chunks that come apart in time as each arrives', async () => {
    const { chunks, error } = await read('/apart');
    expect(error).toBeUndefined();
    expect(chunks.map((chunk) => chunk.text)).toEqual([event(0), event(1), event(2)]);
    // the first went on long before the last was sent
    expect(chunks[2].at - chunks[0].at).toBeGreaterThanOrEqual(60);
  });

  it('hands on what came before a break, then fails the stream as broken off', async () => {
    const { chunks, error } = await read('/cut');
    expect(chunks.map((chunk) => chunk.text).join('')).toBe(event(0) + event(1));
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AnswerBrokeOff);
  });
});
