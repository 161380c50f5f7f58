// Builds the event-stream fixtures (<scenario>.stream.bin) from their frames
// (<scenario>.stream.json) with the same codec the adaptor decodes with, so
// the bytes are AWS's framing exactly: prelude, CRCs and typed headers.
// Run: node --import tsx server/protocols/upstream/bedrock/__fixtures__/build.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** A frame with AWS's three headers on every ConverseStream frame: its kind, its name, its JSON payload. */
function frame(kind: 'event' | 'exception', name: string, payload: unknown): Buffer {
  const nameHeader = kind === 'event' ? ':event-type' : ':exception-type';
  return Buffer.from(
    codec.encode({
      headers: {
        [nameHeader]: { type: 'string', value: name },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: kind },
      },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
}

/** One ConverseStream event frame. */
export const eventFrame = (event: string, payload: unknown): Buffer => frame('event', event, payload);

/** An exception frame, as AWS ends a stream that failed after it began. */
export const exceptionFrame = (exception: string, message: string): Buffer => frame('exception', exception, { message });

/**
 * One InvokeModelWithResponseStream frame: a `chunk` event whose `bytes` are
 * base64 of one model event (Anthropic's stream events for Claude), with AWS's padding.
 */
export const chunkFrame = (event: unknown, padding = 'abcdefgh'): Buffer => eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: padding });

const here = import.meta.dirname;
if (process.argv[1] && process.argv[1].endsWith('build.ts')) {
  for (const scenario of ['chat', 'tools']) {
    const { frames } = JSON.parse(readFileSync(join(here, `${scenario}.stream.json`), 'utf8')) as { frames: Array<{ event: string; payload: unknown }> };
    writeFileSync(join(here, `${scenario}.stream.bin`), Buffer.concat(frames.map((frame) => eventFrame(frame.event, frame.payload))));
  }
  // AWS pads each frame to hide the length of what it carries: a padding of varying length, as it does
  const { events } = JSON.parse(readFileSync(join(here, 'invoke.stream.json'), 'utf8')) as { events: unknown[] };
  const padding = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  writeFileSync(join(here, 'invoke.stream.bin'), Buffer.concat(events.map((event, index) => chunkFrame(event, padding.slice(0, 4 + ((index * 7) % 40))))));
}
