import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { default as WebSocket } from 'ws';
import { quietRepeatedEnds } from '../../../server/relay/realtime/quietEnds';

const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });

/** A stand-in for ws's connection: the two streams quietRepeatedEnds reaches. */
const connection = (receiver: Writable, socket: Writable) => ({ _receiver: receiver, _socket: socket }) as unknown as WebSocket;

describe('quietRepeatedEnds', () => {
  it('ends an open stream as before, and does nothing on a bare end() once it has finished', async () => {
    const receiver = sink();
    const socket = sink();
    quietRepeatedEnds(connection(receiver, socket));
    const finished = new Promise((resolve) => receiver.once('finish', resolve));
    expect(receiver.end()).toBe(receiver);
    await finished;
    const errors: unknown[] = [];
    receiver.on('error', (error) => errors.push(error));
    expect(receiver.end()).toBe(receiver);
    socket.destroy();
    expect(socket.end()).toBe(socket);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([]);
    expect(receiver.writableFinished).toBe(true);
  });

  it('still owes a callback its error, and passes a last chunk on', async () => {
    const written: string[] = [];
    const receiver = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        written.push(chunk.toString());
        done();
      },
    });
    quietRepeatedEnds(connection(receiver, sink()));
    receiver.end('last');
    await new Promise((resolve) => receiver.once('finish', resolve));
    expect(written).toEqual(['last']);
    const error = await new Promise((resolve) => receiver.end(resolve));
    expect((error as { code?: string }).code).toBe('ERR_STREAM_ALREADY_FINISHED');
  });

  it('wraps each stream once, however often it is called', () => {
    const receiver = sink();
    const socket = sink();
    quietRepeatedEnds(connection(receiver, socket));
    const wrapped = Object.getOwnPropertyDescriptor(receiver, 'end')?.value as unknown;
    quietRepeatedEnds(connection(receiver, socket));
    expect(wrapped).toBeTypeOf('function');
    expect(Object.getOwnPropertyDescriptor(receiver, 'end')?.value).toBe(wrapped);
    expect(Object.getOwnPropertyDescriptor(Writable.prototype, 'end')?.value).not.toBe(wrapped);
  });
});
