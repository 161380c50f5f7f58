// AWS's event-stream codec, loaded at a Bedrock channel's first call rather
// than when the gateway starts: with its dependencies it is heap that a
// gateway without a Bedrock channel would carry for nothing (the SigV4
// signature is the gateway's own, sigv4.ts). `sign` (run before every Bedrock
// call, in dispatch and in the channel test) waits for it the first time; the
// decoders, which run after it, take it as loaded. Anything else that decodes
// Bedrock's bytes (a test, a fixture builder) awaits loadBedrockLibraries() first.
import type { EventStreamCodec } from '@smithy/eventstream-codec';

export interface BedrockLibraries {
  codec: EventStreamCodec;
}

/** The codec's text functions: Node's own UTF-8, as @smithy/util-utf8 does on Node. */
const toUtf8 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
const fromUtf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');

let loaded: BedrockLibraries | undefined;
let loading: Promise<BedrockLibraries> | undefined;

export function loadBedrockLibraries(): Promise<BedrockLibraries> {
  if (loaded) return Promise.resolve(loaded);
  loading ??= import('@smithy/eventstream-codec').then(
    (codecModule) => (loaded = { codec: new codecModule.EventStreamCodec(toUtf8, fromUtf8) }),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Whether loadBedrockLibraries() has resolved. */
export const bedrockLibrariesLoaded = () => loaded !== undefined;

/** The libraries, once loadBedrockLibraries() has resolved (a Bedrock call always signs, which loads them, first). */
export function bedrockLibraries(): BedrockLibraries {
  if (!loaded) throw new Error("AWS's libraries are not loaded yet: await loadBedrockLibraries() before decoding Bedrock's bytes");
  return loaded;
}

/** UTF-8 text of a frame's payload. */
export { toUtf8 as utf8Text };
