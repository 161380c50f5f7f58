// SHA-256 and HMAC-SHA-256 on Node's own crypto (OpenSSL) in the shape
// @smithy/signature-v4 takes (a ChecksumConstructor: `new Sha256(secret?)`,
// update, digest, reset), as @smithy/hash-node does: how the gateway signed
// Bedrock calls before its own signer (server/protocols/upstream/bedrock/sigv4.ts),
// kept for the signing row to measure against.
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

/** What the signer hashes: text (UTF-8) or bytes. */
type SourceData = string | ArrayBuffer | ArrayBufferView;

/** Bytes of what the signer hands over: a string (UTF-8), an ArrayBuffer or a view of one. */
function bytesOf(data: SourceData): Buffer | string {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

export class NativeSha256 {
  private readonly secret?: Buffer | string;
  private hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytesOf(secret);
    this.hash = this.fresh();
  }

  update(chunk: SourceData): void {
    this.hash.update(bytesOf(chunk));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.digestSync());
  }

  digestSync(): Uint8Array {
    const digest = this.hash.digest();
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
  }

  reset(): void {
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
}
